#!/usr/bin/env python3
"""Split GGUF models (llama.cpp's gguf-split layout) through build/host/llmrun.

gen_gguf writes a small model whole and as 2 and 3 pieces; llmrun given the
first piece must produce the unsplit file's logits byte for byte and its
greedy text. Broken sets (a piece missing, from another set, out of order, a
tensor missing or in two pieces, the first piece misnamed or given alone as
a later piece) must each fail with their one-line reason.

Run from the repository root. Exit 0 all passed, 1 any failed, 77 when a
binary is missing.
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile

from check import check, check_skipped, exit_status
from llama_cpp_check import check_llmrun_vs_llama_cpp
from test_gen_gguf import generate, parse

GEN = os.environ.get("GEN_GGUF", "build/host/gen_gguf")
LLMRUN = os.environ.get("LLMRUN", "build/host/llmrun")
LLAMA_CPP_BIN = os.environ.get("LLAMA_CPP_BIN", "")
SMALL = ["--shape", "stories15M", "--dim", "64", "--heads", "4", "--kv-heads", "2", "--ffn", "128",
         "--layers", "4", "--ctx", "64", "--vocab", "1024", "--std", "0.2"]
TOKENS = "1 300 301 302 700 15 16 900"
PROMPT = "Once upon a time"


def llmrun(args):
    return subprocess.run([LLMRUN, *args], capture_output=True, timeout=120)


def piece(stem, i, n):
    return f"{stem}-{i:05d}-of-{n:05d}.gguf"


def logits(work, model):
    out = os.path.join(work, "logits.bin")
    r = llmrun([model, "--logits-out", out, "--tokens", TOKENS])
    if r.returncode != 0:
        return None, r.stderr.decode(errors="replace")
    with open(out, "rb") as f:
        return f.read(), ""


def greedy(model):
    r = llmrun([model, "-t", "0", "-n", "24", "-i", PROMPT])
    return r.returncode, r.stdout


def check_same_as_whole(work, qtype, n):
    args = [*SMALL, "--type", qtype]
    whole = os.path.join(work, f"whole-{qtype}.gguf")
    stem = os.path.join(work, f"set-{qtype}-{n}")
    generate([whole, *args])
    generate([stem + ".gguf", *args, "--split", str(n)])
    want, why = logits(work, whole)
    got, why2 = logits(work, piece(stem, 1, n))
    check(want is not None and got == want, f"{qtype} in {n} pieces: logits of {len(TOKENS.split())} positions "
          "equal the unsplit file's byte for byte", why or why2 or "logits differ")
    rc_w, text_w = greedy(whole)
    rc_s, text_s = greedy(piece(stem, 1, n))
    check(rc_w == 0 and rc_s == 0 and text_s == text_w and len(text_w) > len(PROMPT),
          f"{qtype} in {n} pieces: greedy text equals the unsplit file's", f"{text_s!r} vs {text_w!r}")


def check_llama_cpp_split(work):
    """llama.cpp reads our sets as llmrun does; with LLAMA_CPP_BIN, a set
    written by llama.cpp's own llama-gguf-split loads the same."""
    for qtype, n in (("Q8_0", 3), ("Q4_K_M", 2)):
        check_llmrun_vs_llama_cpp(f"{qtype} in {n} pieces", LLMRUN, piece(os.path.join(work, f"set-{qtype}-{n}"), 1, n),
                                  PROMPT)
    if not LLAMA_CPP_BIN:
        return
    tool = os.path.join(LLAMA_CPP_BIN, "llama-gguf-split")
    label = "llama-gguf-split's 3 pieces: logits equal the unsplit file's byte for byte"
    if not os.access(tool, os.X_OK):
        check_skipped(label, f"LLAMA_CPP_BIN={LLAMA_CPP_BIN} has no llama-gguf-split")
        return
    whole, stem = os.path.join(work, "whole-Q8_0.gguf"), os.path.join(work, "cpp")
    r = subprocess.run([tool, "--split", "--split-max-tensors", "15", whole, stem], capture_output=True, timeout=120)
    want, why = logits(work, whole)
    got, why2 = logits(work, piece(stem, 1, 3))
    check(r.returncode == 0 and want is not None and got == want, label,
          f"exit {r.returncode} {r.stderr[-200:]!r} {why}{why2}")


def rewrite_later_piece(path, change):
    """Rewrites a piece after the first (its metadata is the three split keys)
    with change(tensors) applied to its [(name, dims, type, offset)] list; the
    data section stays as it was."""
    kv, tensors, start, data = parse(path)
    tensors = change(tensors)
    formats = {2: "H", 4: "I", 5: "i"}
    out = bytearray(struct.pack("<4sIQQ", b"GGUF", 3, len(tensors), len(kv)))
    for key, (vtype, value) in kv.items():
        out += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I" + formats[vtype], vtype, value)
    for name, dims, ttype, offset in tensors:
        out += struct.pack("<Q", len(name)) + name.encode() + struct.pack("<I", len(dims))
        out += struct.pack(f"<{len(dims)}QIQ", *dims, ttype, offset)
    out += bytes(-len(out) % 32)
    with open(path, "wb") as f:
        f.write(out + data[start:])


def check_refused(label, model, reason):
    r = llmrun([model, "-t", "0", "-n", "4"])
    err = r.stderr.decode(errors="replace").strip()
    lines = err.splitlines()
    check(r.returncode != 0 and len(lines) == 1 and reason in err and not r.stdout,
          f"refused: {label}: {reason}", f"exit {r.returncode}, stderr {err!r}")


def fresh_set(work, name, source_stem, n):
    """A copy of a generated set under a new stem."""
    stem = os.path.join(work, name)
    for i in range(1, n + 1):
        shutil.copy(piece(source_stem, i, n), piece(stem, i, n))
    return stem


def check_bad_sets(work):
    two, three = os.path.join(work, "set-Q8_0-2"), os.path.join(work, "set-Q8_0-3")
    stem = fresh_set(work, "missing", three, 3)
    os.remove(piece(stem, 2, 3))
    check_refused("a piece missing", piece(stem, 1, 3),
                  f"{os.path.basename(piece(stem, 2, 3))} of the split model is missing")

    stem = fresh_set(work, "mixed", two, 2)
    shutil.copy(piece(three, 2, 3), piece(stem, 2, 2))
    check_refused("a piece of another set", piece(stem, 1, 2), "says split.count 3, the first piece 2")

    stem = fresh_set(work, "order", three, 3)
    shutil.copy(piece(three, 1, 3), piece(stem, 2, 3))
    check_refused("the first piece named -00002-of-", piece(stem, 1, 3),
                  "says split.no 0, expected 1 (pieces out of order)")
    stem = fresh_set(work, "swapped", three, 3)
    shutil.copy(piece(three, 3, 3), piece(stem, 2, 3))
    shutil.copy(piece(three, 2, 3), piece(stem, 3, 3))
    check_refused("pieces 2 and 3 swapped", piece(stem, 1, 3), "says split.no 2, expected 1 (pieces out of order)")
    check_refused("a later piece given first", piece(three, 2, 3),
                  "this is piece 2 of 3 of a split model; load NAME-00001-of-00003.gguf")

    stem = fresh_set(work, "dropped", two, 2)
    rewrite_later_piece(piece(stem, 2, 2), lambda ts: ts[1:])
    n_tensors = len(parse(os.path.join(work, "whole-Q8_0.gguf"))[1])
    check_refused("a tensor missing", piece(stem, 1, 2),
                  f"the 2 pieces hold {n_tensors - 1} tensors, split.tensors.count says {n_tensors}")

    stem = fresh_set(work, "twice", two, 2)
    first_name = parse(piece(stem, 1, 2))[1][0][0]
    rewrite_later_piece(piece(stem, 2, 2), lambda ts: [(first_name, *ts[0][1:])] + ts[1:])
    check_refused("a tensor in two pieces", piece(stem, 1, 2),
                  f"tensor {first_name} is in piece 2 and in an earlier piece")

    alone = os.path.join(work, "renamed.gguf")
    shutil.copy(piece(two, 1, 2), alone)
    check_refused("the first piece under another name", alone,
                  "the first of 2 pieces must be named NAME-00001-of-00002.gguf to find the others")


def main():
    for binary in (GEN, LLMRUN):
        if not os.access(binary, os.X_OK):
            print(f"SKIP: {binary} not built (make host)")
            return 77
    with tempfile.TemporaryDirectory() as work:
        for qtype, n in (("Q8_0", 2), ("Q8_0", 3), ("Q4_K_M", 2), ("F16", 3)):
            check_same_as_whole(work, qtype, n)
        check_llama_cpp_split(work)
        check_bad_sets(work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
