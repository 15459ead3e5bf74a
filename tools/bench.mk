# make bench: host throughput table (tools/bench.c). Random models of the
# stories15M/42M/110M shapes are generated once into build/bench/, and the
# largest converted to GGUF Q4_0/Q4_K_M/Q8_0 there.
# BENCH_QUICK=1 make bench: stories15M only, shorter runs.
BENCH_DIR := $(BUILD)/bench
bench: $(BUILD)/host/bench $(BUILD)/host/gen_model $(BUILD)/host/gguf_convert
	$(BUILD)/host/bench --dir $(BENCH_DIR) --gen $(BUILD)/host/gen_model --convert $(BUILD)/host/gguf_convert
