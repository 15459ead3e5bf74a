#!/usr/bin/env python3
"""Checks build/host/gen_gguf: small random models of each type with each
vocabulary, read back by an independent GGUF parser (below, from the GGUF
specification): tensor types (llama.cpp's Q4_K_M mix recomputed here), sizes,
offsets and alignment, norms of 1.0, weights ~N(0, 0.02), the vocabulary's
layout (Llama 3's special ids, every merge making a token), the gguf-split
layout of --split (split keys, metadata in the first piece only, the same
tensors and bytes as the unsplit file); then build/host/llmrun loads each
file, its logits are finite and greedy decoding repeats itself.

llama.cpp (node-llama-cpp, tests/reference/llama_ref.mjs) must load the
files too, each also as a two-piece split, and its 16 greedy tokens must be
llmrun's (llama_cpp_check.py); without node-llama-cpp those checks are skip
lines (failures under CI).

Exit 0 all passed, 1 any failed, 77 when a binary is missing. The Llama 2
vocabulary part needs ../shared/models/tokenizer.bin (MODELS_DIR) and is
reported as skipped without it.
"""
import math
import os
import struct
import subprocess
import sys
import tempfile

from check import check, check_skipped, exit_status
from llama_cpp_check import check_llmrun_vs_llama_cpp

GEN = os.environ.get("GEN_GGUF", "build/host/gen_gguf")
LLMRUN = os.environ.get("LLMRUN", "build/host/llmrun")
MODELS = os.environ.get("MODELS_DIR", "../shared/models")
TOK32K = os.path.join(MODELS, "tokenizer.bin")
PROMPT = "Once upon a time"

F32, F16, Q4_0, Q8_0, Q4_K, Q6_K, BF16 = 0, 1, 2, 8, 12, 14, 30
BLOCK = {F32: (1, 4), F16: (1, 2), Q4_0: (32, 18), Q8_0: (32, 34), Q4_K: (256, 144), Q6_K: (256, 210), BF16: (1, 2)}
TYPE_OF = {"F32": F32, "F16": F16, "BF16": BF16, "Q4_0": Q4_0, "Q8_0": Q8_0, "Q4_K_M": Q4_K}


class Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        v = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take("Q")
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s.decode("utf-8")

    SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}

    def value(self, vtype):
        if vtype == 8:
            return self.string()
        if vtype == 9:
            elem, count = self.take("I"), self.take("Q")
            return [self.value(elem) for _ in range(count)]
        return self.take(self.SCALARS[vtype])


def parse(path):
    """(metadata {key: (type, value)}, [(name, dims, type, offset)], data start, file bytes)"""
    with open(path, "rb") as f:
        data = f.read()
    r = Reader(data)
    magic, version, n_tensors, n_kv = r.take("4sIQQ")
    assert magic == b"GGUF" and version == 3, (magic, version)
    kv = {}
    for _ in range(n_kv):
        key, vtype = r.string(), r.take("I")
        kv[key] = (vtype, r.value(vtype))
    tensors = []
    for _ in range(n_tensors):
        name, n_dims = r.string(), r.take("I")
        dims = [r.take("Q") for _ in range(n_dims)]
        tensors.append((name, dims, r.take("I"), r.take("Q")))
    start = (r.pos + 31) // 32 * 32
    return kv, tensors, start, data


def tensor_bytes(dims, ttype):
    elems, size = BLOCK[ttype]
    rows = 1
    for d in dims[1:]:
        rows *= d
    return dims[0] // elems * size * rows


def use_more_bits(layer, n_layers):
    return layer < n_layers // 8 or layer >= 7 * n_layers // 8 or (layer - n_layers // 8) % 3 == 2


def expected_type(name, dims, qtype, n_layers, tied):
    """llama.cpp's choice (llama-quant.cpp) for a pure or a Q4_K_M file."""
    if len(dims) == 1 or name.endswith(".ffn_gate_inp.weight"):  # llama.cpp keeps the router F32
        return F32
    want = TYPE_OF[qtype]
    if qtype == "Q4_K_M":
        layer = int(name.split(".")[1]) if name.startswith("blk.") else -1
        if name == "output.weight" or (tied and name == "token_embd.weight"):
            want = Q6_K
        elif (name.endswith((".attn_v.weight", ".ffn_down.weight", ".ffn_down_exps.weight"))
              and use_more_bits(layer, n_layers)):
            want = Q6_K
    if dims[0] % BLOCK[want][0]:
        want = Q8_0 if dims[0] % 32 == 0 else F32
    return want


def check_layout(label, path, qtype, n_layers, tied, alone=True):
    kv, tensors, start, data = parse(path)
    end, layout_ok, types_ok = 0, True, True
    for name, dims, ttype, offset in tensors:
        layout_ok &= offset == end and (start + offset) % 32 == 0
        end = offset + (tensor_bytes(dims, ttype) + 31) // 32 * 32
        if alone:
            types_ok &= ttype == expected_type(name, dims, qtype, n_layers, tied)
    check(layout_ok and start + end == len(data), f"{label}: offsets contiguous, 32-aligned, file ends with the data",
          f"data {start}+{end}, file {len(data)}")
    if alone:
        check(types_ok, f"{label}: tensor types as llama.cpp's {qtype} chooses",
              str([(n, t) for n, _, t, _ in tensors][:12]))
    return kv, tensors, start, data


def dequantize_first_blocks(ttype, raw, count=64):
    """The first count blocks of raw as floats (F32, F16, BF16, Q8_0, Q4_0)."""
    out = []
    if ttype == F32:
        return list(struct.unpack_from(f"<{count * 32}f", raw))
    if ttype == F16:
        return list(struct.unpack_from(f"<{count * 32}e", raw))
    if ttype == BF16:  # the top halves of fp32s
        return [struct.unpack("<f", struct.pack("<I", h << 16))[0] for h in struct.unpack_from(f"<{count * 32}H", raw)]
    for b in range(count):
        if ttype == Q8_0:
            d = struct.unpack_from("<e", raw, b * 34)[0]
            out += [d * q for q in struct.unpack_from("<32b", raw, b * 34 + 2)]
        else:
            d = struct.unpack_from("<e", raw, b * 18)[0]
            qs = raw[b * 18 + 2:b * 18 + 18]
            out += [d * ((q & 15) - 8) for q in qs] + [d * ((q >> 4) - 8) for q in qs]
    return out


def check_values(label, kv, tensors, start, data):
    ones = all(struct.unpack_from(f"<{dims[0]}f", data, start + off) == (1.0,) * dims[0]
               for name, dims, ttype, off in tensors if name.endswith("norm.weight"))
    check(ones, f"{label}: every norm is 1.0")
    name, dims, ttype, off = next(t for t in tensors if t[0] == "blk.0.attn_q.weight")
    if ttype in (F32, F16, BF16, Q8_0, Q4_0):
        v = dequantize_first_blocks(ttype, data[start + off:])
        mean = sum(v) / len(v)
        std = math.sqrt(sum((x - mean) ** 2 for x in v) / len(v))
        check(abs(mean) < 0.005 and 0.015 < std < 0.025, f"{label}: weights ~N(0, 0.02)", f"mean {mean}, std {std}")


def check_bpe_vocab(label, kv, n_vocab):
    tokens = kv["tokenizer.ggml.tokens"][1]
    merges = kv["tokenizer.ggml.merges"][1]
    types = kv["tokenizer.ggml.token_type"][1]
    ids = {t: i for i, t in enumerate(tokens)}
    specials = n_vocab - 256
    check(len(tokens) == n_vocab and len(ids) == n_vocab, f"{label}: {n_vocab} distinct tokens")
    check(kv["tokenizer.ggml.model"][1] == "gpt2" and kv["tokenizer.ggml.pre"][1] == "llama-bpe",
          f"{label}: gpt2 model, llama-bpe pre-tokenizer")
    check(kv["tokenizer.ggml.bos_token_id"][1] == specials and kv["tokenizer.ggml.eos_token_id"][1] == specials + 1
          and tokens[specials] == "<|begin_of_text|>" and tokens[specials + 9] == "<|eot_id|>"
          and all(t == 3 for t in types[specials:]) and all(t == 1 for t in types[:specials]),
          f"{label}: Llama 3's special tokens at {specials}.. (control)")
    byte_chars = [chr(b) for b in range(33, 127)] + [chr(b) for b in range(161, 173)] + [chr(b) for b in range(174, 256)]
    check(all(c in ids for c in byte_chars) and "Ġ" in ids and "Ċ" in ids, f"{label}: the 256 byte tokens")
    made = [m.split(" ") for m in merges]
    check(len(merges) == n_vocab - 512 and all(len(p) == 2 and p[0] in ids and p[1] in ids and p[0] + p[1] in ids
                                               for p in made), f"{label}: every merge joins two tokens into a token")


def llmrun(args):
    return subprocess.run([LLMRUN] + args, capture_output=True, timeout=120)


def check_runs(label, path, work, tokenizer_args=()):
    logits_path = os.path.join(work, "logits.f32")
    r = llmrun([path, *tokenizer_args, "--logits-out", logits_path, "--tokens", "1 5 9 300"])
    ok = r.returncode == 0
    if ok:
        with open(logits_path, "rb") as f:
            raw = f.read()
        values = struct.unpack(f"<{len(raw) // 4}f", raw)
        ok = len(values) > 0 and all(math.isfinite(v) for v in values) and max(values) != min(values)
    check(ok, f"{label}: llmrun loads it, its logits are finite", r.stderr.decode(errors="replace")[-300:])
    runs = [llmrun([path, *tokenizer_args, "-t", "0", "-n", "16", "-i", "Once upon a time"]) for _ in range(2)]
    check(all(x.returncode == 0 for x in runs) and runs[0].stdout == runs[1].stdout
          and runs[0].stdout.startswith(b"Once upon a time") and len(runs[0].stdout) > len(b"Once upon a time"),
          f"{label}: llmrun greedy decoding runs and repeats itself",
          repr(runs[0].stdout[:80]) + runs[0].stderr.decode(errors="replace")[-200:])


def generate(args):
    r = subprocess.run([GEN, *args], capture_output=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"gen_gguf {' '.join(args)}: {r.stderr.decode(errors='replace')}")


def check_split(work, small):
    whole = os.path.join(work, "whole.gguf")
    generate([whole, *small, "--type", "Q8_0", "--vocab", "1024"])
    generate([os.path.join(work, "parts.gguf"), *small, "--type", "Q8_0", "--vocab", "1024", "--split", "3"])
    wkv, wtensors, wstart, wdata = parse(whole)
    pieces = [os.path.join(work, f"parts-{i:05d}-of-00003.gguf") for i in range(1, 4)]
    check(all(os.path.exists(p) for p in pieces), "split: three files named NAME-0000i-of-00003.gguf")
    got, keys_ok = {}, True
    for i, p in enumerate(pieces):
        kv, tensors, start, data = check_layout(f"split piece {i + 1}", p, "Q8_0", 2, True, alone=False)
        keys_ok &= kv["split.no"] == (2, i) and kv["split.count"] == (2, 3)
        keys_ok &= kv["split.tensors.count"] == (5, len(wtensors))
        keys_ok &= (set(kv) - {"split.no", "split.count", "split.tensors.count"} == set(wkv)) if i == 0 else len(kv) == 3
        keys_ok &= len(tensors) > 0
        for name, dims, ttype, off in tensors:
            got[name] = (dims, ttype, data[start + off:start + off + tensor_bytes(dims, ttype)])
    check(keys_ok, "split: split.no (u16), split.count (u16), split.tensors.count (i32); metadata in piece 1 only")
    want = {name: (dims, ttype, wdata[wstart + off:wstart + off + tensor_bytes(dims, ttype)])
            for name, dims, ttype, off in wtensors}
    order = [n for p in pieces for n, _, _, _ in parse(p)[1]]
    check(got == want and order == [t[0] for t in wtensors],
          "split: the pieces hold the unsplit file's tensors, in order, byte for byte")


def check_llama_cpp(work, small):
    """llama.cpp loads what gen_gguf writes, whole and split in two, and its
    greedy tokens are llmrun's."""
    # dim 512: two Q4_K blocks a row (one block a row repeats rows of the tied output from gen_gguf's pool
    # of 8192 blocks, and every greedy step is then an exact tie).
    cases = [("dim 512, 128256-token BPE, Q4_K_M", [*small, "--dim", "512", "--vocab", "128256", "--type", "Q4_K_M"]),
             ("dim 256, 1024-token BPE, untied, Q4_0", [*small, "--vocab", "1024", "--type", "Q4_0", "--untied"]),
             ("dim 256, 1024-token BPE, untied, BF16", [*small, "--vocab", "1024", "--type", "BF16", "--untied"])]
    if os.path.exists(TOK32K):
        cases.append(("stories15M shape, Llama 2 vocabulary, Q8_0", ["--shape", "stories15M", "--type", "Q8_0",
                                                                    "--spm", TOK32K]))
    for label, args in cases:
        path = os.path.join(work, "cpp.gguf")
        generate([path, *args])
        check_llmrun_vs_llama_cpp(label, LLMRUN, path, PROMPT)
        if "Q4_0" in args:  # the SSE2 set too: the kernel's set under TCG and on CPUs without AVX2
            check_llmrun_vs_llama_cpp(label + ", SSE2 kernels", LLMRUN, path, PROMPT, extra=("--simd", "sse2"))
        generate([os.path.join(work, "cpp-split.gguf"), *args, "--split", "2"])
        check_llmrun_vs_llama_cpp(label + ", in 2 pieces", LLMRUN, os.path.join(work, "cpp-split-00001-of-00002.gguf"),
                                  PROMPT)


def check_qwen3moe(work):
    """--shape qwen3moe-mini made small: the qwen3moe keys, 3-D expert tensors
    [in, out, experts], an F32 router, q/k norms; llmrun runs it."""
    path = os.path.join(work, "qwen3moe.gguf")
    generate([path, "--shape", "qwen3moe-mini", "--dim", "256", "--heads", "4", "--kv-heads", "2", "--layers", "8",
              "--vocab", "1024", "--ctx", "128", "--type", "Q4_K_M"])
    label = "qwen3moe-mini shape, dim 256, Q4_K_M"
    kv, tensors, start, data = check_layout(label, path, "Q4_K_M", 8, False)
    dims = {name: d for name, d, _, _ in tensors}
    check(kv["general.architecture"][1] == "qwen3moe" and kv["qwen3moe.expert_count"][1] == 64
          and kv["qwen3moe.expert_used_count"][1] == 8 and kv["qwen3moe.expert_feed_forward_length"][1] == 512,
          f"{label}: qwen3moe keys, 64 experts of width 512, 8 used")
    check(dims.get("blk.0.ffn_gate_exps.weight") == [256, 512, 64] and dims.get("blk.7.ffn_down_exps.weight")
          == [512, 256, 64] and dims.get("blk.0.ffn_gate_inp.weight") == [256, 64]
          and dims.get("blk.0.attn_k_norm.weight") == [64], f"{label}: expert tensors, router, q/k norms", str(dims)[:300])
    check_runs(label, path, work)
    r = llmrun([path, "-n", "2", "-i", "Hi"])
    check(b"experts 64, 8 used per token" in r.stderr, f"{label}: llmrun shows the experts", r.stderr[-200:])
    # The experts each token picks (router top-8 of 64) decide the answer: llama.cpp picks its own.
    check_llmrun_vs_llama_cpp(label, LLMRUN, path, PROMPT)


def main():
    for binary in (GEN, LLMRUN):
        if not os.access(binary, os.X_OK):
            print(f"SKIP: {binary} not built (make host)")
            return 77
    # dim 256: Q4_K fits the rows, so Q4_K_M shows its mix; 8 layers give it Q6_K layers and Q4_K layers.
    small = ["--shape", "stories15M", "--dim", "256", "--heads", "4", "--kv-heads", "2", "--ffn", "512",
             "--layers", "8", "--ctx", "128"]
    with tempfile.TemporaryDirectory() as work:
        for qtype in ("F32", "F16", "BF16", "Q8_0", "Q4_0", "Q4_K_M"):
            path = os.path.join(work, f"bpe-{qtype}.gguf")
            generate([path, *small, "--type", qtype, "--vocab", "1024"])
            label = f"BPE 1024 {qtype}"
            kv, tensors, start, data = check_layout(label, path, qtype, 8, True)
            check_values(label, kv, tensors, start, data)
            check(kv["general.file_type"][1] == {"F32": 0, "F16": 1, "BF16": 32, "Q8_0": 7, "Q4_0": 2,
                                                  "Q4_K_M": 15}[qtype],
                  f"{label}: general.file_type")
            check_runs(label, path, work)
        check_bpe_vocab("BPE 1024", kv, 1024)

        path = os.path.join(work, "llama3-vocab.gguf")
        generate([path, *small, "--layers", "2", "--type", "Q4_K_M", "--untied", "--vocab", "128256"])
        kv, tensors, start, data = check_layout("BPE 128256 untied Q4_K_M", path, "Q4_K_M", 2, False)
        check_bpe_vocab("BPE 128256", kv, 128256)
        check("output.weight" in [t[0] for t in tensors], "untied: an output.weight of its own")
        check_runs("BPE 128256 Q4_K_M", path, work)

        if os.path.exists(TOK32K):
            for qtype in ("Q4_0", "Q8_0"):
                path = os.path.join(work, f"spm-{qtype}.gguf")
                generate([path, "--shape", "stories15M", "--type", qtype, "--spm", TOK32K])
                label = f"Llama 2 vocabulary, stories15M shape, {qtype}"
                kv, tensors, start, data = check_layout(label, path, qtype, 6, True)
                tokens = kv["tokenizer.ggml.tokens"][1]
                check(kv["tokenizer.ggml.model"][1] == "llama" and len(tokens) == 32000 and tokens[1] == "<s>"
                      and tokens[3] == "<0x00>" and "▁Once" in tokens and kv["llama.vocab_size"][1] == 32000,
                      f"{label}: SentencePiece tokens with the word marker U+2581")
                check_runs(label, path, work)
        else:
            check_skipped("the Llama 2 vocabulary", f"{TOK32K} not found (set MODELS_DIR)")
        check_qwen3moe(work)
        check_split(work, small)
        check_llama_cpp(work, small)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
