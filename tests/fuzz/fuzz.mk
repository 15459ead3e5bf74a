# fuzz.mk - libFuzzer harnesses (tests/fuzz/fuzz_*.c). Included from the root
# Makefile (`include tests/fuzz/fuzz.mk`); works stand-alone as well:
#   make -f Makefile -f tests/fuzz/fuzz.mk fuzz-replay
#
#   make fuzz          seed corpora from ../shared/models, then every harness
#                      for FUZZ_SECONDS (default 60), FUZZ_JOBS at a time
#   make fuzz-replay   every harness over its saved corpus and regression
#                      inputs only (seconds; part of `make test`)
#   make fuzz-build    just the harness binaries (build/fuzz/fuzz_*)

FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_JOBS    ?= 2
FUZZ_SHARED  ?= $(if $(SHARED),$(SHARED),../shared)
FUZZ_DIR     := build/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# Same code-generation choices as the host build; instrumented for coverage.
FUZZ_CFLAGS  := -std=gnu11 -O1 -g -Wall -Wextra -Wno-unused-parameter -I. -fno-builtin \
    -msse2 -mfpmath=sse -ffp-contract=off -fno-math-errno $(FUZZ_SAN)

FUZZ_SRCS    := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_NAMES   := $(patsubst tests/fuzz/fuzz_%.c,%,$(FUZZ_SRCS))
FUZZ_BINS    := $(patsubst %,$(FUZZ_DIR)/fuzz_%,$(FUZZ_NAMES))
# Besides lib/ and llm/: the loader's and drivers' parsers split out as pure
# functions over bytes (boot.cfg, the GPT, USB descriptors).
FUZZ_PURE_SRCS := boot/config_parse.c boot/gpt_parse.c kernel/drivers/usb_descriptors.c
FUZZ_LIB_OBJS := $(patsubst %.c,$(FUZZ_DIR)/obj/%.o,$(wildcard lib/*.c llm/*/*.c llm/*/*/*.c) $(FUZZ_PURE_SRCS))

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c $< -o $@

# The SIMD kernels (a folder per instruction set) build without the
# sanitizers: clang spent 14 CPU-minutes instrumenting the always-inline
# templates of attention_tile_avx512.c alone. They get no fuzz input that the
# checked shapes have not bounded already, and the host unit tests run the
# same files under gcc's ASan and UBSan.
FUZZ_PLAIN_CFLAGS := $(filter-out $(FUZZ_SAN),$(FUZZ_CFLAGS))
define fuzz_plain_kernels
$(FUZZ_DIR)/obj/llm/compute/$(1)/%.o: llm/compute/$(1)/%.c
	@mkdir -p $$(dir $$@)
	$(FUZZ_CC) $(FUZZ_PLAIN_CFLAGS) -MMD -MP -c $$< -o $$@
endef
$(foreach isa,sse2 avx2 avx512,$(eval $(call fuzz_plain_kernels,$(isa))))

# An archive, so each harness links only the objects it uses.
$(FUZZ_DIR)/libfuzzed.a: $(FUZZ_LIB_OBJS)
	rm -f $@
	ar rcs $@ $^

$(FUZZ_DIR)/fuzz_%: $(FUZZ_DIR)/obj/tests/fuzz/fuzz_%.o $(FUZZ_DIR)/libfuzzed.a
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer $^ -o $@ -lm

# The keymap harness builds in the layout tables the root Makefile generates.
$(FUZZ_DIR)/obj/tests/fuzz/fuzz_keymap.o: build/gen/keymap_tables.c

.PHONY: fuzz fuzz-replay fuzz-build fuzz-corpus
fuzz-build: $(FUZZ_BINS)

# Seed corpora (not committed): cut-down copies of the shared models, tiny
# generated checkpoints, tars made with tar(1), boot.cfg samples.
fuzz-corpus: $(BUILD)/host/gen_model
	sh tests/fuzz/make_corpus.sh $(FUZZ_SHARED)/models build/fuzz-corpus $(BUILD)/host/gen_model

fuzz: $(FUZZ_BINS) fuzz-corpus
	FUZZ_VOCAB_DIR=$(FUZZ_SHARED)/models/vocab sh tests/fuzz/run_fuzz.sh fuzz $(FUZZ_SECONDS) $(FUZZ_JOBS) $(FUZZ_NAMES)

fuzz-replay: $(FUZZ_BINS)
	FUZZ_VOCAB_DIR=$(FUZZ_SHARED)/models/vocab sh tests/fuzz/run_fuzz.sh replay $(FUZZ_NAMES)

-include $(shell find $(FUZZ_DIR)/obj -name '*.d' 2>/dev/null)
