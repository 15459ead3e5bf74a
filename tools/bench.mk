# make bench: host throughput table (tools/bench.c). Random models of the
# stories15M/42M/110M shapes are generated once into build/bench/, and the
# largest converted to GGUF Q4_0/Q4_K_M/Q8_0 there.
# BENCH_QUICK=1 make bench: stories15M only, shorter runs.
# Then llama-bench's tests (pp128, tg128, pp512 at 1 and 2 threads) on
# gen_gguf's F32/Q8_0/Q4_0/Q4_K_M files of the stories110M shape
# (tools/bench_compare.py); with LLAMA_BENCH=path/to/llama-bench, llama.cpp
# runs on the same files, interleaved with ours, and each row shows the ratio.
# make bench-1b: that comparison on the Llama-3.2-1B shape (files of 0.7-5 GB).
BENCH_DIR := $(BUILD)/bench
BENCH_ROUNDS ?= 5
BENCH_COMPARE = python3 tools/bench_compare.py --dir $(BENCH_DIR) --rounds $(BENCH_ROUNDS) \
	--gen $(BUILD)/host/gen_gguf --ours $(BUILD)/host/bench_pp_tg --bandwidth $(BUILD)/host/bench_bandwidth $(if $(LLAMA_BENCH),--llama-bench $(LLAMA_BENCH))
bench: $(BUILD)/host/bench $(BUILD)/host/gen_model $(BUILD)/host/gguf_convert $(BUILD)/host/gen_gguf $(BUILD)/host/bench_pp_tg \
	$(BUILD)/host/bench_bandwidth
	$(BUILD)/host/bench --dir $(BENCH_DIR) --gen $(BUILD)/host/gen_model --convert $(BUILD)/host/gguf_convert
	$(BENCH_COMPARE) --shape stories110M
bench-1b: $(BUILD)/host/gen_gguf $(BUILD)/host/bench_pp_tg $(BUILD)/host/bench_bandwidth
	$(BENCH_COMPARE) --shape llama-3.2-1b
.PHONY: bench-1b
# make bench-files LLAMA_BENCH=...: the comparison on files made the way users
# get them (tools/bench_files.py: llama.cpp's gguf-py writes F32/F16/BF16,
# its llama-quantize the rest; LLAMA_CPP_DIR, default ../llama.cpp, holds
# gguf-py and build/bin/llama-quantize), stories110M tied and untied, then
# the Llama-3.2-1B shape (tied, as it ships). Needs numpy.
BENCH_FILES_TYPES ?= F32,F16,BF16,Q8_0,Q4_0,Q4_K_M,Q6_K
bench-files: $(BUILD)/host/bench_pp_tg $(BUILD)/host/bench_bandwidth
	$(BENCH_COMPARE) --files llama --markdown --shape stories110M --types $(BENCH_FILES_TYPES)
	$(BENCH_COMPARE) --files llama --markdown --shape stories110M --types $(BENCH_FILES_TYPES) --untied
	$(BENCH_COMPARE) --files llama --markdown --shape llama-3.2-1b --types Q8_0,Q4_0,Q4_K_M,Q6_K
.PHONY: bench-files
