# Bare-metal LLM inference kernel. See README.md.
#
#   make            loader, kernel and ramdisk into build/
#   make image      build/disk.img (GPT + EFI System Partition), MODEL=... TOKENIZER=...
#                   NET=dhcp API_KEY=... (the network and the API's key in boot.cfg)
#   make keys       a Secure Boot owner key pair; make image SIGN=1 or SHIM=1 signs with it
#   make run        boot build/disk.img in QEMU, serial console on this terminal
#                   (NET=1: with a network, host port 8080 forwarded to the API)
#   make host       build/host/llmrun and the host unit tests
#   make test       host unit tests + the QEMU harness
#   make test-big   the slow QEMU cases (ramdisks over 4 and 8 GiB)
#   make test-matrix  boot, answer and power off on a matrix of machines (3.5-6 min)
#   make deps       install the Debian packages everything needs
#   make fuzz       run every libFuzzer harness (tests/fuzz) for FUZZ_SECONDS
#   make build-all  everything make test runs, built on every core (BUILD_JOBS)
#   make format-check  every tracked C file against .clang-format (tools/format-check.sh)

SHARED    ?= ../shared
MODELS    ?= $(SHARED)/models
# A clone without the test models boots llama2.c's stories15M, downloaded
# into models/ (ignored by git) on first use by tools/fetch-model.sh.
ifeq ($(wildcard $(MODELS)/stories260K.bin),)
MODEL     ?= models/stories15M.bin
TOKENIZER ?= models/tokenizer.bin
endif
MODEL     ?= $(MODELS)/stories260K.bin
TOKENIZER ?= $(MODELS)/tok512.bin
# More files for the ramdisk (other models, tokenizers), space separated.
EXTRA     ?=
OVMF      ?= /usr/share/ovmf/OVMF.fd
QEMU      ?= qemu-system-x86_64
QEMU_MEM  ?= 1G
QEMU_SMP  ?= 1

BUILD := build
CC    ?= gcc
LD    := ld
NASM  := nasm

# Plain `make` builds the image's parts, whatever rule comes first below.
.DEFAULT_GOAL := all

.SUFFIXES:
.DELETE_ON_ERROR:
# Objects are never intermediates to delete (parallel builds share them).
.SECONDARY:

# ---------------------------------------------------------------- kernel
GCC_INCLUDE := $(shell $(CC) -print-file-name=include)
# lib/ and llm/ are compiled with the same code-generation flags in both
# builds (SSE2 baseline, no FMA contraction) so results match bit for bit.
MATH_FLAGS := -msse2 -mfpmath=sse -ffp-contract=off -fno-math-errno
KERNEL_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter \
    -ffreestanding -nostdinc -isystem $(GCC_INCLUDE) -Ilib/include -I. \
    -fno-stack-protector -fno-pic -fno-pie -mcmodel=kernel -mno-red-zone \
    -fno-omit-frame-pointer -fno-optimize-sibling-calls -fno-tree-loop-distribute-patterns \
    -fno-asynchronous-unwind-tables $(MATH_FLAGS) -DKERNEL=1
KERNEL_SRCS := $(wildcard kernel/*.c kernel/*/*.c kernel/drivers/net/*.c lib/*.c llm/*/*.c llm/*/*/*.c)
KERNEL_ASMS := $(wildcard kernel/*.asm kernel/*/*.asm)
# The console's Unifont glyphs, converted at build time (never committed).
UNIFONT_HEX ?= /usr/share/unifont/unifont.hex
UNIFONT_GLYPHS := $(BUILD)/gen/unifont_glyphs.c
# The keyboard layouts, computed from xkb-data by libxkbcommon at build time.
KEYMAP_TABLES := $(BUILD)/gen/keymap_tables.c
# lwIP (TCP/IP) is a dependency, never committed: tools/fetch-lwip.sh unpacks
# Debian's source package into LWIP_DIR; its IPv4 core is built with the
# kernel's flags, our lwipopts.h and arch/cc.h (kernel/net/lwip).
LWIP_DIR ?= deps/lwip
LWIP_SRCS := $(addprefix $(LWIP_DIR)/src/,core/init.c core/def.c core/inet_chksum.c core/ip.c \
    core/mem.c core/memp.c core/netif.c core/pbuf.c core/stats.c core/sys.c core/tcp.c \
    core/tcp_in.c core/tcp_out.c core/timeouts.c core/udp.c core/ipv4/dhcp.c \
    core/ipv4/etharp.c core/ipv4/icmp.c core/ipv4/ip4.c core/ipv4/ip4_addr.c \
    core/ipv4/ip4_frag.c netif/ethernet.c)
LWIP_INCLUDES := -Ikernel/net/lwip -I$(LWIP_DIR)/src/include
LWIP_CFLAGS := $(KERNEL_CFLAGS) -Ikernel/net/lwip/libc $(LWIP_INCLUDES) -fno-strict-aliasing
LWIP_OBJS := $(patsubst $(LWIP_DIR)/src/%.c,$(BUILD)/kernel-obj/lwip/%.o,$(LWIP_SRCS))
KERNEL_OBJS := $(patsubst %.c,$(BUILD)/kernel-obj/%.o,$(KERNEL_SRCS) $(UNIFONT_GLYPHS) $(KEYMAP_TABLES)) \
               $(patsubst %.asm,$(BUILD)/kernel-obj/%.asm.o,$(KERNEL_ASMS)) $(LWIP_OBJS)

$(LWIP_SRCS) $(LWIP_DIR)/src/include/lwip/init.h &:
	sh tools/fetch-lwip.sh $(LWIP_DIR)
$(BUILD)/kernel-obj/lwip/%.o: $(LWIP_DIR)/src/%.c kernel/net/lwip/lwipopts.h kernel/net/lwip/arch/cc.h
	@mkdir -p $(dir $@)
	$(CC) $(LWIP_CFLAGS) -MMD -MP -c $< -o $@
# The kernel's network code includes lwIP's headers.
$(BUILD)/kernel-obj/kernel/net/%.o: kernel/net/%.c $(LWIP_DIR)/src/include/lwip/init.h
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_CFLAGS) $(LWIP_INCLUDES) -MMD -MP -c $< -o $@

$(UNIFONT_GLYPHS): tools/gen_unifont_glyphs.py
	@mkdir -p $(dir $@)
	python3 tools/gen_unifont_glyphs.py $(UNIFONT_HEX) $@

$(KEYMAP_TABLES): tools/gen_keymap_tables.py
	@mkdir -p $(dir $@)
	python3 tools/gen_keymap_tables.py $@

# libjsmn-dev's one header (the API's JSON parser), seen by the kernel build
# through a directory of its own: -nostdinc keeps the rest of /usr/include out.
JSMN_HEADER ?= /usr/include/jsmn.h
JSMN_DIR := $(BUILD)/gen/jsmn
$(JSMN_DIR)/jsmn.h: $(JSMN_HEADER)
	@mkdir -p $(dir $@)
	ln -sf $(abspath $<) $@
KERNEL_CFLAGS += -I$(JSMN_DIR)

$(BUILD)/kernel-obj/%.o: %.c | $(JSMN_DIR)/jsmn.h
	@mkdir -p $(dir $@)
	$(CC) $(KERNEL_CFLAGS) -MMD -MP -c $< -o $@

$(BUILD)/kernel-obj/%.asm.o: %.asm
	@mkdir -p $(dir $@)
	$(NASM) -f elf64 -g -F dwarf $< -o $@

$(BUILD)/kernel.elf: $(KERNEL_OBJS) linker.ld
	$(LD) -nostdlib -static -z max-page-size=0x1000 -T linker.ld -o $@ $(KERNEL_OBJS)

# ---------------------------------------------------------------- loader
EFI_INC := /usr/include/efi
EFI_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -ffreestanding -fpic \
    -fshort-wchar -mno-red-zone -fno-stack-protector -fno-strict-aliasing \
    -fno-builtin -fno-asynchronous-unwind-tables -DGNU_EFI_USE_MS_ABI \
    -I$(EFI_INC) -I$(EFI_INC)/x86_64 -I$(EFI_INC)/protocol -I.
BOOT_SRCS := $(wildcard boot/*.c)
BOOT_OBJS := $(patsubst %.c,$(BUILD)/boot-obj/%.o,$(BOOT_SRCS))

$(BUILD)/boot-obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(EFI_CFLAGS) -MMD -MP -c $< -o $@

# loader.so -> PE; .sbat (boot/sbat.c) is the metadata shim insists on; -S drops
# the COFF symbols, trailing data that sbsign would warn about.
LINK_LOADER = $(LD) -nostdlib -znocombreloc -shared -Bsymbolic -T /usr/lib/elf_x86_64_efi.lds \
    /usr/lib/crt0-efi-x86_64.o $^ -L/usr/lib -lefi -lgnuefi $(shell $(CC) -print-libgcc-file-name) -o $@
EFI_FROM_SO = objcopy -j .text -j .sdata -j .data -j .dynamic -j .dynsym -j .rel -j .rela \
    -j '.rel.*' -j '.rela.*' -j .reloc -j .sbat -S --target efi-app-x86_64 --subsystem=10 $< $@

# A development loader has no kernel SHA-256 built in and checks none.
KERNEL_HASH_NONE := $(BUILD)/gen/kernel_hash_none.c
$(KERNEL_HASH_NONE): tools/gen-kernel-hash.sh
	@mkdir -p $(dir $@)
	sh tools/gen-kernel-hash.sh > $@

$(BUILD)/loader.so: $(BOOT_OBJS) $(BUILD)/boot-obj/$(KERNEL_HASH_NONE:.c=.o)
	$(LINK_LOADER)

$(BUILD)/BOOTX64.EFI: $(BUILD)/loader.so
	$(EFI_FROM_SO)

# ---------------------------------------------------------------- Secure Boot
# docs/hardware.md says how a user keeps Secure Boot on.
#   make keys                 an owner key pair in KEYS_DIR (ignored by git)
#   make image SIGN=1         the loader signed with it, the kernel's SHA-256
#                             built in; SIGN_KEY=... SIGN_CERT=... another pair
#                             (SIGN_KEY_PASS: its password, else asked for)
#   make image SHIM=1         also Debian's Microsoft-signed shim as BOOTX64.EFI,
#                             our signed loader as grubx64.efi (implies SIGN=1)
KEYS_DIR  ?= keys
SIGN_KEY  ?= $(KEYS_DIR)/llmk-owner.key
SIGN_CERT ?= $(KEYS_DIR)/llmk-owner.crt
SHIM_DIR  ?= /usr/lib/shim
SIGN      := $(if $(SHIM),1,$(SIGN))
SIGNED    := $(BUILD)/signed
SIGN_STAMP := $(SIGNED)/sign.cfg
$(shell mkdir -p $(SIGNED); echo '$(abspath $(SIGN_KEY) $(SIGN_CERT))' | cmp -s - $(SIGN_STAMP) || echo '$(abspath $(SIGN_KEY) $(SIGN_CERT))' > $(SIGN_STAMP))

.PHONY: keys signed
keys:
	sh tools/make-keys.sh $(KEYS_DIR)

$(SIGNED)/kernel_hash.c: $(BUILD)/kernel.elf tools/gen-kernel-hash.sh
	sh tools/gen-kernel-hash.sh $< > $@

$(SIGNED)/loader.so: $(BOOT_OBJS) $(BUILD)/boot-obj/$(SIGNED)/kernel_hash.o
	$(LINK_LOADER)

$(SIGNED)/loader-unsigned.efi: $(SIGNED)/loader.so
	$(EFI_FROM_SO)

$(SIGNED)/BOOTX64.EFI: $(SIGNED)/loader-unsigned.efi $(SIGN_STAMP) tools/sign-efi.sh
	sh tools/sign-efi.sh $(SIGN_KEY) $(SIGN_CERT) $< $@

# A missing shim or MokManager: say which package brings them.
$(SHIM_DIR)/%.efi.signed:
	@echo "make: $@ is missing: SHIM=1 needs Debian's shim-signed (sh tools/install-deps.sh)" >&2; exit 1

# The certificate in DER form, on the ESP for the firmware's or MokManager's "enroll from file".
$(SIGNED)/llmk-owner.cer: $(SIGN_STAMP)
	openssl x509 -in $(SIGN_CERT) -outform DER -out $@

signed: $(SIGNED)/BOOTX64.EFI $(SIGNED)/llmk-owner.cer

# ---------------------------------------------------------------- ramdisk and image
# The ramdisk holds MODEL, TOKENIZER and EXTRA under their base names;
# boot.cfg names the default model. Rebuilt whenever the choice changes.
# A split GGUF model (MODEL=NAME-00001-of-0000N.gguf) brings its other pieces.
MODEL_PIECES  := $(filter-out $(MODEL),$(wildcard $(subst -00001-of-,-?????-of-,$(MODEL))))
RAMDISK_FILES := $(strip $(MODEL) $(MODEL_PIECES) $(TOKENIZER) $(EXTRA))
RAMDISK_STAMP := $(BUILD)/ramdisk.files
$(shell mkdir -p $(BUILD); echo '$(abspath $(RAMDISK_FILES))' | cmp -s - $(RAMDISK_STAMP) || echo '$(abspath $(RAMDISK_FILES))' > $(RAMDISK_STAMP))

models/stories15M.bin models/tokenizer.bin &:
	@sh tools/fetch-model.sh models

$(BUILD)/ramdisk.tar: $(RAMDISK_FILES) $(RAMDISK_STAMP) tools/mkramdisk.sh
	sh tools/mkramdisk.sh $@ $(RAMDISK_FILES)

# NET=dhcp (or NET=1) turns the network on in boot.cfg, NET=static too (add
# ip=, gw=, mask= to build/boot.cfg); API_KEY=... is the HTTP API's key.
NET     ?=
API_KEY ?=
NET_MODE := $(if $(filter 1 dhcp,$(NET)),dhcp,$(NET))
BOOT_CFG_STAMP := $(BUILD)/boot-cfg.settings
$(shell mkdir -p $(BUILD); echo '$(NET_MODE) $(API_KEY)' | cmp -s - $(BOOT_CFG_STAMP) || echo '$(NET_MODE) $(API_KEY)' > $(BOOT_CFG_STAMP))
$(BUILD)/boot.cfg: $(RAMDISK_STAMP) $(BOOT_CFG_STAMP)
	printf 'model=%s\ntokenizer=%s\n' $(notdir $(MODEL)) $(notdir $(TOKENIZER)) > $@
	$(if $(NET_MODE),printf 'net=%s\n' '$(NET_MODE)' >> $@)
	$(if $(API_KEY),printf 'api_key=%s\n' '$(API_KEY)' >> $@)

# The ramdisk goes into a GPT partition of its own (no FAT32 4 GiB limit);
# RAMDISK_ON_ESP=1 puts it on the EFI System Partition as ramdisk.tar instead.
RAMDISK_ON_ESP ?=
MKIMAGE_FLAGS := $(if $(RAMDISK_ON_ESP),,--ramdisk-partition)
# SIGN=1: the signed loader and our certificate; SHIM=1: shim first, then it.
IMAGE_LOADER := $(if $(SIGN),$(SIGNED)/BOOTX64.EFI,$(BUILD)/BOOTX64.EFI)
IMAGE_FIRST  := $(if $(SHIM),$(SHIM_DIR)/shimx64.efi.signed,$(IMAGE_LOADER))
IMAGE_PARTS  := $(IMAGE_FIRST) $(if $(SIGN),$(SIGNED)/llmk-owner.cer) \
    $(if $(SHIM),$(IMAGE_LOADER) $(SHIM_DIR)/mmx64.efi.signed)
MKIMAGE_FLAGS += $(if $(SIGN),--esp-file $(SIGNED)/llmk-owner.cer=llmk-owner.cer) \
    $(if $(SHIM),--esp-file $(IMAGE_LOADER)=EFI/BOOT/grubx64.efi --esp-file $(SHIM_DIR)/mmx64.efi.signed=EFI/BOOT/mmx64.efi)
IMAGE_STAMP := $(BUILD)/image.cfg
$(shell echo '$(MKIMAGE_FLAGS) $(IMAGE_FIRST)' | cmp -s - $(IMAGE_STAMP) || echo '$(MKIMAGE_FLAGS) $(IMAGE_FIRST)' > $(IMAGE_STAMP))
$(BUILD)/disk.img: $(IMAGE_PARTS) $(IMAGE_STAMP) $(BUILD)/kernel.elf $(BUILD)/ramdisk.tar $(BUILD)/boot.cfg tools/mkimage.sh
	sh tools/mkimage.sh $(MKIMAGE_FLAGS) $@ $(IMAGE_FIRST) $(BUILD)/kernel.elf $(BUILD)/ramdisk.tar $(BUILD)/boot.cfg

.PHONY: all image run run-gui
all: $(BUILD)/BOOTX64.EFI $(BUILD)/kernel.elf $(BUILD)/ramdisk.tar $(BUILD)/boot.cfg
image: $(BUILD)/disk.img

# make run NET=1: QEMU's user-mode network (DHCP gives 10.0.2.15) with host
# 127.0.0.1:NET_PORT forwarded to the API's port in the guest (8080, as
# llama-server); NET_MODEL=e1000e or e1000 tries the Intel cards.
, := ,
API_PORT  ?= 8080
NET_PORT  ?= $(API_PORT)
NET_MODEL ?= virtio-net-pci
QEMU_NIC  := $(if $(NET),user$(,)model=$(NET_MODEL)$(,)hostfwd=tcp:127.0.0.1:$(NET_PORT)-:$(API_PORT),none)
QEMU_FLAGS := -machine q35 -cpu max -accel tcg -m $(QEMU_MEM) -smp $(QEMU_SMP) \
    -bios $(OVMF) -drive format=raw,file=$(BUILD)/disk.img -nic $(QEMU_NIC) -no-reboot \
    -device isa-debug-exit,iobase=0xf4,iosize=0x04
run: image
	$(QEMU) $(QEMU_FLAGS) -display none -vga std -serial mon:stdio
run-gui: image
	$(QEMU) $(QEMU_FLAGS) -vga std -serial mon:stdio

# ---------------------------------------------------------------- host builds
# The same lib/ and llm/ sources as the kernel, built as a normal program.
HOST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -I. \
    -fno-builtin -fno-tree-loop-distribute-patterns $(MATH_FLAGS)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LIB_SRCS := $(wildcard lib/*.c)
LLM_SRCS := $(wildcard llm/*/*.c llm/*/*/*.c)

$(BUILD)/host/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/host/san/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(HOST_CFLAGS) -O1 $(SAN_FLAGS) -MMD -MP -c $< -o $@

HOST_LIB_OBJS := $(patsubst %.c,$(BUILD)/host/obj/%.o,$(LIB_SRCS) $(LLM_SRCS))
SAN_LIB_OBJS  := $(patsubst %.c,$(BUILD)/host/san/%.o,$(LIB_SRCS) $(LLM_SRCS))

# Host programs: tools/NAME.c -> build/host/NAME (optimised).
TOOL_SRCS := $(wildcard tools/*.c)
TOOLS := $(patsubst tools/%.c,$(BUILD)/host/%,$(TOOL_SRCS))
$(BUILD)/host/%: $(BUILD)/host/obj/tools/%.o $(HOST_LIB_OBJS)
	$(CC) $^ -o $@ -lm -ldl -lpthread

# Host unit tests: tests/host/test_*.c -> build/host/tests/test_* (sanitised).
HOST_TEST_SRCS := $(wildcard tests/host/test_*.c)
HOST_TESTS := $(patsubst tests/host/%.c,$(BUILD)/host/tests/%,$(HOST_TEST_SRCS))
$(BUILD)/host/tests/%: $(BUILD)/host/san/tests/host/%.o $(SAN_LIB_OBJS)
	@mkdir -p $(dir $@)
	$(CC) $(SAN_FLAGS) $^ -o $@ -lm -ldl -lpthread
# The console test draws the generated glyphs too.
$(BUILD)/host/tests/test_fbcon: $(BUILD)/host/san/$(UNIFONT_GLYPHS:.c=.o)
# The loader's SHA-256, checked against hashlib.
$(BUILD)/host/tests/test_sha256: $(BUILD)/host/san/boot/sha256.o
# The keymap test types on the generated layouts.
$(BUILD)/host/tests/test_keymap: $(BUILD)/host/san/$(KEYMAP_TABLES:.c=.o)

.PHONY: host host-test host-unit-test python-test qemu-test test deps bench clean
host: $(TOOLS) $(HOST_TESTS)

# Each test runner ends with "LABEL: N passed, N failed, N skipped".
HOST_TEST_SCRIPTS := $(wildcard tests/host/test_*.py)
host-test: host-unit-test python-test
# Two at a time, the slowest (test_prefill_batch, ~110 s under ASan) first.
host-unit-test: $(HOST_TESTS) $(TOOLS)
	@python3 tests/run_host_tests.py --label host --jobs 2 --shared $(SHARED) \
	    $(filter %/test_prefill_batch,$(HOST_TESTS)) $(filter-out %/test_prefill_batch,$(HOST_TESTS))
# llama.cpp for the python tests' cross-checks comes from node-llama-cpp
# (tests/reference, installed by `make test`). A llama.cpp build beside the
# project (never built by it) adds test_gguf_split.py's llama-gguf-split check.
LLAMA_CPP_DIR ?= ../llama.cpp
LLAMA_CPP_BIN ?= $(if $(wildcard $(LLAMA_CPP_DIR)/build/bin/llama-gguf-split),$(abspath $(LLAMA_CPP_DIR)/build/bin))
python-test: $(TOOLS)
	@LLAMA_CPP_BIN=$(LLAMA_CPP_BIN) python3 tests/run_host_tests.py --label python --shared $(SHARED) $(HOST_TEST_SCRIPTS)

# The harness builds its own disk images: it needs the loader and the kernel
# (and the loader with the kernel's SHA-256, which the Secure Boot cases sign).
qemu-test: $(BUILD)/BOOTX64.EFI $(BUILD)/kernel.elf $(SIGNED)/loader-unsigned.efi $(TOOLS)
	python3 tests/qemu/harness.py --shared $(SHARED) --ovmf $(OVMF)

# Every runner runs (make -k) even when one fails; each writes its closing
# line to TEST_SUMMARY_DIR, and tests/test_summary.py ends `make test` with
# the totals ("test: N passed, N failed, N skipped") and the exit status.
# With CI set, missing $(SHARED)/models or references that do not install
# (tools/install-references.sh) fail at once.
TEST_SUMMARIES := $(BUILD)/test-summaries
.PHONY: references
references:
	@python3 tests/test_summary.py --install-references
# The runners' prerequisites are built first, on every core (build-all); a
# build failure still lets every runner run and report.
test:
	@python3 tests/test_summary.py --check-shared $(SHARED)
	@python3 tests/test_summary.py --install-references
	@rm -rf $(TEST_SUMMARIES)
	@status=0; $(MAKE) --no-print-directory -k -j$(BUILD_JOBS) build-all || status=$$?; \
	TEST_SUMMARY_DIR=$(abspath $(TEST_SUMMARIES)) $(MAKE) --no-print-directory -k \
	    host-unit-test python-test fuzz-replay qemu-test || status=$$?; \
	python3 tests/test_summary.py $(TEST_SUMMARIES) host python fuzz qemu --make-status $$status

# Cases too slow for make test (4.5 and 9 GiB ramdisks read under TCG).
.PHONY: test-big
test-big: all $(TOOLS) references
	LLMK_BIG_TESTS=1 python3 tests/qemu/harness.py --shared $(SHARED) --ovmf $(OVMF) -k test_big_

# test-big with the 8B cases' full comparison too (116-token prompt, 16 tokens: about half an hour more on 2 cores, not measured).
.PHONY: test-big-full
test-big-full: all $(TOOLS) references
	LLMK_BIG_TESTS=1 LLMK_BIG_FULL=1 python3 tests/qemu/harness.py --shared $(SHARED) --ovmf $(OVMF) -k test_big_

# Machines, CPUs, cores, memory sizes, firmwares and displays (tests/qemu/matrix_rows.py).
.PHONY: test-matrix
test-matrix: all $(TOOLS) references
	LLMK_MATRIX_TESTS=1 python3 tests/qemu/harness.py --shared $(SHARED) --ovmf $(OVMF) -k test_matrix_

deps:
	sh tools/install-deps.sh

# Every tracked C file formatted as .clang-format says? Lists those that are
# not and fails (CI runs it); `clang-format -i FILE` fixes one.
.PHONY: format-check
format-check:
	@sh tools/format-check.sh

clean:
	rm -rf $(BUILD)

include tests/fuzz/fuzz.mk
include tools/bench.mk

# Everything make test's runners need: loader, kernel, host tools, host tests
# (sanitised objects) and fuzzers. `make test` builds it with -j$(BUILD_JOBS)
# before any runner starts (the runners alone would build one file at a time);
# after the includes, so that FUZZ_BINS is known.
BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
.PHONY: build-all
build-all: $(BUILD)/BOOTX64.EFI $(BUILD)/kernel.elf $(TOOLS) $(HOST_TESTS) $(FUZZ_BINS)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
