#!/usr/bin/env python3
"""Checks of build/host/gguf_convert against llama.cpp's files for synthA
(../shared/models/gguf-tests): both input kinds, byte for byte where our
quantiser is ggml's own (F32, Q8_0, Q4_0), by logits where it is a simpler
fit (Q4_K_M), plus the copied metadata, the vocabulary still working and
bad input refused.

Run from the repository root. Prints one line per check; exit 0 all passed,
1 any failed, 77 when the test data or a binary is missing.
"""
import array
import os
import struct
import subprocess
import sys
import tempfile

from check import check, exit_status, missing_prerequisite

CONVERT = os.environ.get("GGUF_CONVERT", "build/host/gguf_convert")
LLMRUN = os.environ.get("LLMRUN", "build/host/llmrun")
MODELS = os.environ.get("MODELS_DIR", "../shared/models")
TESTS = os.path.join(MODELS, "gguf-tests")
TYPE_NAMES = {0: "F32", 1: "F16", 2: "Q4_0", 8: "Q8_0", 12: "Q4_K", 14: "Q6_K"}


def read_gguf(path):
    """(metadata {key: (type, raw value bytes)}, [(name, dims, type, data bytes)]) of a GGUF v2/v3 file."""
    data = open(path, "rb").read()
    pos = 4
    version, n_tensors, n_kv = struct.unpack_from("<IQQ", data, pos)
    pos += 20
    fixed = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}

    def string(p):
        n = struct.unpack_from("<Q", data, p)[0]
        return data[p + 8:p + 8 + n].decode("utf-8", "replace"), p + 8 + n

    def skip_value(vtype, p):
        if vtype == 8:
            return string(p)[1]
        if vtype == 9:
            etype, count = struct.unpack_from("<IQ", data, p)
            p += 12
            for _ in range(count):
                p = skip_value(etype, p)
            return p
        return p + fixed[vtype]

    meta = {}
    for _ in range(n_kv):
        key, pos = string(pos)
        vtype = struct.unpack_from("<I", data, pos)[0]
        end = skip_value(vtype, pos + 4)
        meta[key] = (vtype, data[pos + 4:end])
        pos = end
    infos = []
    for _ in range(n_tensors):
        name, pos = string(pos)
        n_dims = struct.unpack_from("<I", data, pos)[0]
        dims = struct.unpack_from(f"<{n_dims}Q", data, pos + 4)
        ttype, offset = struct.unpack_from("<IQ", data, pos + 4 + 8 * n_dims)
        pos += 4 + 8 * n_dims + 12
        infos.append((name, dims, ttype, offset))
    align = struct.unpack("<I", meta["general.alignment"][1])[0] if "general.alignment" in meta else 32
    start = (pos + align - 1) // align * align
    bounds = sorted(offset for _, _, _, offset in infos) + [len(data) - start]
    tensors = []
    for name, dims, ttype, offset in infos:
        following = min(b for b in bounds if b > offset)
        tensors.append((name, dims, ttype, data[start + offset:start + following]))
    return meta, tensors


def convert(src, dst, qtype):
    return subprocess.run([CONVERT, src, dst, "--type", qtype], capture_output=True, timeout=120)


def tensor_bytes(ttype, dims):
    """Bytes of a tensor of these dims, for the types this test meets."""
    n = 1
    for d in dims:
        n *= d
    per_block = {0: (1, 4), 1: (1, 2), 2: (32, 18), 8: (32, 34), 12: (256, 144), 14: (256, 210)}[ttype]
    return n // per_block[0] * per_block[1]


def same_tensors(got_path, want_path, may_lack=()):
    """'' when every tensor (matched by name: files order them differently)
    has the same dims, type and data bytes, else the first difference.
    Names in may_lack may be missing from got (a tied classifier)."""
    got = {t[0]: t[1:] for t in read_gguf(got_path)[1]}
    want = {t[0]: t[1:] for t in read_gguf(want_path)[1]}
    if set(got) - set(want) or set(want) - set(got) - set(may_lack):
        return f"tensor names differ: extra {sorted(set(got) - set(want))}, missing {sorted(set(want) - set(got))}"
    for name, (dims, ttype, data) in got.items():
        wdims, wtype, wdata = want[name]
        if (dims, ttype) != (wdims, wtype):
            return f"{name}: dims/type {dims} {ttype} vs {wdims} {wtype}"
        n = tensor_bytes(ttype, dims)
        if data[:n] != wdata[:n]:
            first = next(i for i in range(n) if data[i] != wdata[i])
            return f"{name} ({TYPE_NAMES.get(ttype, ttype)}) differs at byte {first}"
    return ""


def logits(model, tokens, extra=()):
    with tempfile.NamedTemporaryFile(suffix=".f32") as out:
        r = subprocess.run([LLMRUN, model, *extra, "--logits-out", out.name, "--tokens", " ".join(map(str, tokens))],
                           capture_output=True, timeout=300)
        if r.returncode != 0:
            return None, r.stderr.decode(errors="replace")
        values = array.array("f")
        values.frombytes(open(out.name, "rb").read())
        return values, ""


def logit_gap(model, tokens, reference_name):
    """(mean, max) |logit difference| of model against a gguf-tests logits file, or (None, why)."""
    reference = array.array("f")
    reference.frombytes(open(os.path.join(TESTS, reference_name), "rb").read())
    got, err = logits(model, tokens)
    if got is None or len(got) != len(reference):
        return None, err or f"{0 if got is None else len(got)} values, want {len(reference)}"
    diffs = [abs(a - b) for a, b in zip(got, reference)]
    return sum(diffs) / len(diffs), max(diffs)


def main():
    f32 = os.path.join(TESTS, "synthA-F32.gguf")
    missing = missing_prerequisite((f32, os.path.join(TESTS, "synthA.bin"), os.path.join(TESTS, "tokens.txt")),
                                   (CONVERT, LLMRUN))
    if missing:
        return missing
    tokens = [int(t) for t in open(os.path.join(TESTS, "tokens.txt")).read().split()]
    work = tempfile.mkdtemp(prefix="gguf-convert-")

    # llama2.c checkpoint in: F32 and Q8_0 tensors as llama.cpp's converter and llama-quantize --pure wrote them
    # (synthA.bin shares its classifier with the embedding: we leave output.weight out, llama.cpp writes a copy).
    for qtype in ("F32", "Q8_0"):
        out = os.path.join(work, f"bin-{qtype}.gguf")
        r = convert(os.path.join(TESTS, "synthA.bin"), out, qtype)
        why = (r.stderr.decode(errors="replace") if r.returncode
               else same_tensors(out, os.path.join(TESTS, f"synthA-{qtype}.gguf"), may_lack=("output.weight",)))
        check(r.returncode == 0 and not why, f"synthA.bin -> {qtype}: every tensor equals llama.cpp's", why)

    # GGUF in, with ggml's own quantisers: the same bytes as llama-quantize --pure.
    meta_in, _ = read_gguf(f32)
    for qtype, ftype in (("Q8_0", 7), ("Q4_0", 2)):
        out = os.path.join(work, f"gguf-{qtype}.gguf")
        r = convert(f32, out, qtype)
        why = r.stderr.decode(errors="replace") if r.returncode else same_tensors(out, os.path.join(TESTS, f"synthA-{qtype}.gguf"))
        check(r.returncode == 0 and not why, f"synthA-F32.gguf -> {qtype}: every tensor equals llama-quantize's", why)
        if r.returncode:
            continue
        meta_out, _ = read_gguf(out)
        lost = [k for k in meta_in if meta_out.get(k) != meta_in[k]]
        check(not lost, f"{qtype}: every metadata pair of the input copied", f"missing or changed: {lost[:5]}")
        check(meta_out.get("general.file_type") == (4, struct.pack("<I", ftype)),
              f"{qtype}: general.file_type is {ftype}", repr(meta_out.get("general.file_type")))

    # The vocabulary came along: llmrun tokenises and runs the result without -z.
    q8 = os.path.join(work, "gguf-Q8_0.gguf")
    r = subprocess.run([LLMRUN, q8, "--tokenize"], input=b"Lily and Tom", capture_output=True, timeout=60)
    want = subprocess.run([LLMRUN, f32, "--tokenize"], input=b"Lily and Tom", capture_output=True, timeout=60)
    check(r.returncode == 0 and r.stdout == want.stdout and r.stdout.strip(),
          "the requantised file tokenises like its input", f"{r.stdout!r} vs {want.stdout!r} {r.stderr[-200:]!r}")

    # Requantising to the type a tensor already has copies it.
    again = os.path.join(work, "gguf-Q8_0-again.gguf")
    r = convert(q8, again, "Q8_0")
    why = r.stderr.decode(errors="replace") if r.returncode else same_tensors(again, q8)
    check(r.returncode == 0 and not why and b"(0 requantised)" in r.stderr, "Q8_0 -> Q8_0 copies every tensor",
          why or repr(r.stderr))

    # Q4_K_M: llama.cpp's type choice; our simpler Q4_K fit stays close to llama.cpp's error against F32.
    km = os.path.join(work, "gguf-Q4_K_M.gguf")
    r = convert(f32, km, "Q4_K_M")
    check(r.returncode == 0, "synthA-F32.gguf -> Q4_K_M", r.stderr.decode(errors="replace"))
    if r.returncode == 0:
        got_types = {n: t for n, _, t, _ in read_gguf(km)[1]}
        want_types = {n: t for n, _, t, _ in read_gguf(os.path.join(TESTS, "synthA-Q4_K_M.gguf"))[1]}
        check(got_types == want_types, "Q4_K_M: the tensor types llama-quantize chose",
              f"{set(got_types.items()) ^ set(want_types.items())}")
        mean, worst = logit_gap(km, tokens, "synthA-F32.logits.f32")
        if mean is None:
            check(False, "Q4_K_M logits", worst)
        else:
            # llama.cpp's own Q4_K_M file: max 6.57, mean 0.964 against the F32 logits (README)
            print(f"  Q4_K_M vs F32 logits: mean {mean:.3f}, max {worst:.3f} (llama.cpp's file: 0.964, 6.57)")
            check(mean < 1.3 and worst < 9.0, "Q4_K_M logits within 1.35x of llama.cpp's Q4_K_M error vs F32",
                  f"mean {mean:.3f} max {worst:.3f}")

    # A quantised input (Q4_K) requantised to Q8_0: close to llama.cpp's logits for the dequantised Q4_K
    # weights (Q8_0 adds about half a step of error; llama.cpp's own Q8_0 vs F32: max 0.57, mean 0.10).
    out = os.path.join(work, "q4k-to-q8_0.gguf")
    r = convert(os.path.join(TESTS, "synthA-Q4_K.gguf"), out, "Q8_0")
    mean, worst = (logit_gap(out, tokens, "synthA-Q4_K.deqf32.logits.f32") if r.returncode == 0
                   else (None, r.stderr.decode(errors="replace")))
    if mean is None:
        check(False, "Q4_K -> Q8_0 requantised", worst)
    else:
        print(f"  Q4_K -> Q8_0 vs the dequantised Q4_K logits: mean {mean:.3f}, max {worst:.3f}")
        check(mean < 0.15 and worst < 1.0, "Q4_K -> Q8_0: logits close to the dequantised Q4_K model's",
              f"mean {mean:.3f} max {worst:.3f}")

    # Rows that do not split into the type's blocks: stories260K (dim 64, hidden 172) as Q4_K gets Q8_0 where
    # rows are whole Q8_0 blocks (64 values) and stays F32 where they are not (ffn_down's 172), and runs.
    small = os.path.join(MODELS, "stories260K.bin")
    if os.path.exists(small):
        out = os.path.join(work, "s260k-Q4_K.gguf")
        r = convert(small, out, "Q4_K")
        types = {n: t for n, _, t, _ in read_gguf(out)[1]} if r.returncode == 0 else {}
        check(types.get("blk.0.attn_q.weight") == 8 and types.get("blk.0.ffn_down.weight") == 0 and
              types.get("token_embd.weight") == 8, "Q4_K on rows of 64 and 172: Q8_0 and F32 fallbacks",
              f"{r.stderr!r} {types}")
        r = subprocess.run([LLMRUN, out, "-z", os.path.join(MODELS, "tok512.bin"), "-t", "0", "-n", "30"],
                           capture_output=True, timeout=60)
        check(r.returncode == 0 and len(r.stdout) > 20, "the fallback file runs", repr(r.stderr[-200:]))

    # Bad input: one line, exit 1, no output file left claiming success.
    vocab_only = os.path.join(MODELS, "vocab", "ggml-vocab-gpt-2.gguf")
    if os.path.exists(vocab_only):
        r = convert(vocab_only, os.path.join(work, "none.gguf"), "Q8_0")
        check(r.returncode == 1 and b"no tensors" in r.stderr, "a vocabulary-only file is refused", repr(r.stderr))
    truncated = os.path.join(work, "truncated.gguf")
    with open(truncated, "wb") as f:
        f.write(open(f32, "rb").read()[:5000])
    r = convert(truncated, os.path.join(work, "none2.gguf"), "Q8_0")
    check(r.returncode == 1 and r.stderr.startswith(b"gguf_convert: "), "a truncated GGUF is refused with a reason",
          repr(r.stderr))
    r = convert(f32, os.path.join(work, "none3.gguf"), "Q3_X")
    check(r.returncode == 1 and b"unsupported --type" in r.stderr, "an unknown --type is refused", repr(r.stderr))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
