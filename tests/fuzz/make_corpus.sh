#!/bin/sh
# make_corpus.sh - seed corpora for the fuzz harnesses, built from the shared
# models (never committed: they are cut-down copies of those files).
#
#   make_corpus.sh MODELS_DIR OUT_DIR [GEN_MODEL]
#
# OUT_DIR/NAME/ gets seeds for tests/fuzz/fuzz_NAME.c. Missing models are
# skipped with a note; the committed seeds in tests/fuzz/corpus still work.
set -eu
models=${1:?models dir}
out=${2:?output dir}
gen_model=${3:-build/host/gen_model}
rm -rf "$out"
mkdir -p "$out"
out=$(cd "$out" && pwd)
mkdir -p "$out/checkpoint" "$out/tokenizer" "$out/tar" "$out/config" "$out/line_editor" "$out/utf8" "$out/gguf" \
    "$out/jinja" "$out/boot_config" "$out/gpt" "$out/usb_descriptors"

have() { [ -f "$models/$1" ] || { echo "make_corpus: $models/$1 missing, skipped"; return 1; }; }

# checkpoint: heads of the real files (they fail the size check, but reach it),
# and tiny complete models of every version that load and run.
for f in stories260K.bin stories260K_v1.bin stories260K_q80.bin; do
    have $f || continue
    for n in 28 256 300 1024 4096; do head -c $n "$models/$f" >"$out/checkpoint/${f%.bin}-$n"; done
done
if [ -x "$gen_model" ]; then
    shape="--dim 8 --hidden 16 --layers 1 --heads 2 --kv-heads 1 --vocab 12 --seq 6"
    for v in 0 1; do
        "$gen_model" $shape --version $v --out "$out/checkpoint/tiny-v$v" >/dev/null
        "$gen_model" $shape --version $v --separate-classifier --out "$out/checkpoint/tiny-v$v-sep" >/dev/null
    done
    "$gen_model" $shape --version 2 --group-size 8 --out "$out/checkpoint/tiny-v2-gs8" >/dev/null
    "$gen_model" --dim 16 --hidden 24 --layers 2 --heads 2 --kv-heads 2 --vocab 10 --seq 4 --version 2 \
        --group-size 8 --out "$out/checkpoint/tiny-v2-straddle" >/dev/null
else
    echo "make_corpus: $gen_model missing: no generated checkpoints"
fi

# tokenizer: flags byte (1 BOS, 2 EOS, 4 fixed vocab size), uint16 LE length,
# tokenizer bytes, text.
tok_seed() { # flags file text out
    size=$(wc -c <"$2")
    printf "\\$(printf %03o "$1")\\$(printf %03o $((size % 256)))\\$(printf %03o $((size / 256)))" >"$4"
    cat "$2" >>"$4"
    printf '%s' "$3" >>"$4"
}
if have tok512.bin; then
    tok_seed 3 "$models/tok512.bin" "Once upon a time, there was a little girl." "$out/tokenizer/tok512-story"
    tok_seed 1 "$models/tok512.bin" "héllo wörld ✓ 日本 🙂" "$out/tokenizer/tok512-utf8"
    tok_seed 0 "$models/tok512.bin" "" "$out/tokenizer/tok512-empty"
    head -c 300 "$models/tok512.bin" >"$out/tokenizer/tok512-head.bin"
    tok_seed 3 "$out/tokenizer/tok512-head.bin" "abc" "$out/tokenizer/tok512-truncated"
    rm "$out/tokenizer/tok512-head.bin"
fi

# tar: small archives in the formats tar(1) writes.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/d/sub"
printf 'model=stories260K.bin\n' >"$work/d/boot.cfg"
printf 'x' >"$work/d/one"
head -c 700 /dev/zero | tr '\0' 'a' >"$work/d/sub/seven-hundred"
long=$(printf 'n%.0s' $(seq 1 70))
mkdir -p "$work/d/$long" # ustar splits the path into prefix and name
printf 'long' >"$work/d/$long/$long"
have tok512.bin && head -c 1500 "$models/tok512.bin" >"$work/d/stories260K.bin"
for fmt in ustar gnu posix; do
    (cd "$work/d" && tar -b 1 --format=$fmt -cf "$work/$fmt.tar" .) 2>/dev/null && cp "$work/$fmt.tar" "$out/tar/$fmt.tar"
done
(cd "$work/d" && tar -b 1 --format=ustar -cf "$out/tar/one.tar" one)
head -c 1024 "$out/tar/ustar.tar" >"$out/tar/ustar-cut"

# config: first byte is the value buffer size for config_get.
printf '\040ramdisk=ramdisk.tar\nmodel=stories260K.bin\ntokenizer=tok512.bin\n' >"$out/config/boot.cfg"
printf '\010# comment\r\n  model = a b c  \r\n\nbad line\n=x\nmodel=\n' >"$out/config/odd.cfg"

# line editor: typed lines, edits, escapes, history.
printf 'hello\rworld\033[D\033[DX\r\020\020\r' >"$out/line_editor/edit"
printf 'h\303\251llo \342\234\223\010\010\001\033[3~\005\013\025abc\003' >"$out/line_editor/utf8"
printf 'one\rtwo\r\365\365\366\367\370\371\372\rq\033OH\033[1~\033[4~\014\r' >"$out/line_editor/keys"

# utf8
printf 'plain ascii' >"$out/utf8/ascii"
printf 'h\303\251 \342\234\223 \360\237\231\202 \355\237\277 \364\217\277\277' >"$out/utf8/valid"
printf '\300\200 \355\240\200 \364\220\200\200 \340\200\200 \370\210\200\200\200 \342\234' >"$out/utf8/invalid"

# gguf: the shared GGUF files' first 4 KiB (headers and metadata).
for f in stories260K.gguf tinyllamas-stories-260k-q8_0.gguf llama-2-tiny-random.gguf; do
    have $f && head -c 4096 "$models/$f" >"$out/gguf/${f%.gguf}-4k"
done
python3 "$(dirname "$0")/make_gguf_seed.py" "$out/gguf/tiny.gguf"
# jinja: the real chat templates, as they are (the harness's fixed conversation)
# and followed by a NUL and a context of their own.
for f in "$models"/templates/*.jinja; do
    [ -f "$f" ] || continue
    n=$(basename "$f" .jinja)
    cp "$f" "$out/jinja/$n"
    { cat "$f"; printf '\000{"messages": [{"role": "user", "content": "x"}], "add_generation_prompt": false}'; } \
        >"$out/jinja/$n-ctx"
done
# gguf_model: tiny complete models of every architecture (numpy: the
# system's python3-numpy when the first python3 has none).
py=python3
python3 -c 'import numpy' 2>/dev/null || py=/usr/bin/python3
$py "$(dirname "$0")/make_gguf_model_seeds.py" "$out/gguf_model"

# boot_config: first byte is the kernel command line's size less one.
printf '\377ramdisk=big.tar\nvideo=1024x768\nmodel=stories260K.bin\ntokenizer=tok512.bin\n' >"$out/boot_config/boot.cfg"
printf '\020# c\r\n video = max \nramdisk=../x\nvideo=99999x0\nbad\n=x\nkv_type=q8_0\nthreads=4\n' >"$out/boot_config/odd.cfg"

# gpt and usb_descriptors: disks and descriptors written by a script.
python3 "$(dirname "$0")/make_parser_seeds.py" "$out"

for d in "$out"/*; do echo "make_corpus: $(ls "$d" | wc -l) seeds in $d"; done
