#!/usr/bin/env python3
"""Checks gguf_convert --tokenizer: a llama2.c checkpoint converted with its
tokenizer.bin carries the vocabulary as llama.cpp reads a SentencePiece one
(read back here by the GGUF parser of test_gguf_convert.py against the
tokenizer.bin's own records), llmrun on the converted file alone gives the
greedy text llmrun gives on the .bin with -z, and a tokenizer of another
size is refused with a reason.

llama.cpp (node-llama-cpp, llama_cpp_check.py) must load the converted
files, F32 and Q8_0, and its greedy tokens must be llmrun's (a skip line
without node-llama-cpp, a failure under CI).

Exit 0 all passed, 1 any failed, 77 when the test data or a binary is missing.
"""
import os
import struct
import subprocess
import sys
import tempfile

from check import check, check_skipped, exit_status, missing_prerequisite
from llama_cpp_check import check_llmrun_vs_llama_cpp
from test_gguf_convert import CONVERT, LLMRUN, MODELS, read_gguf

CHECKPOINT = os.path.join(MODELS, "stories260K.bin")
TOKENIZER = os.path.join(MODELS, "tok512.bin")
OTHER_TOKENIZER = os.path.join(MODELS, "tokenizer.bin")  # 32000 tokens
PROMPT = "Once upon a time"
TOKEN_TYPE_NORMAL, TOKEN_TYPE_UNKNOWN, TOKEN_TYPE_CONTROL, TOKEN_TYPE_BYTE = 1, 2, 3, 6


def tokenizer_records(path):
    """[(piece bytes, score)] of a llama2.c tokenizer.bin."""
    data = open(path, "rb").read()
    pos, records = 4, []
    while pos < len(data):
        score, n = struct.unpack_from("<fi", data, pos)
        records.append((data[pos + 8:pos + 8 + n], score))
        pos += 8 + n
    return records


def array_values(raw, elem_format):
    """The elements of a GGUF array value of fixed-size elements."""
    etype, count = struct.unpack_from("<IQ", raw, 0)
    return list(struct.unpack_from(f"<{count}{elem_format}", raw, 12))


def string_array(raw):
    etype, count = struct.unpack_from("<IQ", raw, 0)
    pos, out = 12, []
    for _ in range(count):
        n = struct.unpack_from("<Q", raw, pos)[0]
        out.append(raw[pos + 8:pos + 8 + n])
        pos += 8 + n
    return out


def check_vocabulary(path):
    meta, _ = read_gguf(path)
    records = tokenizer_records(TOKENIZER)
    tokens = string_array(meta["tokenizer.ggml.tokens"][1])
    scores = array_values(meta["tokenizer.ggml.scores"][1], "f")
    types = array_values(meta["tokenizer.ggml.token_type"][1], "i")
    # llama2.c's export wrote SentencePiece's U+2581 as ' ' and BOS/EOS with newlines around them.
    want = [b"<s>" if i == 1 else b"</s>" if i == 2 else piece.replace(b" ", "\u2581".encode())
            for i, (piece, _) in enumerate(records)]
    check(meta.get("tokenizer.ggml.model", (0, b""))[1][8:] == b"llama", "tokenizer.ggml.model is 'llama'")
    check(tokens == want, "the tokens are the tokenizer.bin's pieces, with the word marker U+2581",
          f"{len(tokens)} tokens, first differing: {next((i for i, (a, b) in enumerate(zip(tokens, want)) if a != b), None)}")
    check(scores == [s for _, s in records], "the scores are the tokenizer.bin's")
    byte_ids = [i for i, t in enumerate(tokens) if len(t) == 6 and t.startswith(b"<0x") and t.endswith(b">")]
    check(types[0] == TOKEN_TYPE_UNKNOWN and types[1] == types[2] == TOKEN_TYPE_CONTROL
          and all(types[i] == TOKEN_TYPE_BYTE for i in byte_ids) and len(byte_ids) == 256
          and types.count(TOKEN_TYPE_NORMAL) == len(tokens) - 3 - 256,
          "token types: unknown, BOS and EOS control, 256 byte tokens, the rest normal")
    ids = {k: struct.unpack("<I", meta[k][1])[0] for k in ("tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id")}
    check(ids == {"tokenizer.ggml.bos_token_id": 1, "tokenizer.ggml.eos_token_id": 2}, "BOS is 1, EOS is 2", repr(ids))
    check(struct.unpack("<I", meta["llama.vocab_size"][1])[0] == len(tokens), "llama.vocab_size is the token count")


def llmrun_text(args):
    r = subprocess.run([LLMRUN, *args, "-t", "0", "-n", "48", "-i", PROMPT], capture_output=True, timeout=120)
    return r.returncode, r.stdout.decode(errors="replace")


def main():
    missing = missing_prerequisite((CHECKPOINT, TOKENIZER), (CONVERT, LLMRUN))
    if missing:
        return missing
    with tempfile.TemporaryDirectory() as work:
        rc_bin, want = llmrun_text([CHECKPOINT, "-z", TOKENIZER])
        for qtype in ("F32", "Q8_0"):
            out = os.path.join(work, f"260K-{qtype}.gguf")
            r = subprocess.run([CONVERT, CHECKPOINT, out, "--type", qtype, "--tokenizer", TOKENIZER],
                               capture_output=True, timeout=120)
            if not check(r.returncode == 0, f"stories260K.bin + tok512.bin -> {qtype}", r.stderr.decode(errors="replace")):
                continue
            if qtype == "F32":
                check_vocabulary(out)
                rc, got = llmrun_text([out])
                check(rc_bin == 0 and rc == 0 and got == want and len(want) > len(PROMPT) + 20,
                      "llmrun on the converted F32 file alone: the greedy text of the .bin with -z",
                      f"{got!r} vs {want!r}")
            else:
                rc, got = llmrun_text([out])
                check(rc == 0 and got.startswith(PROMPT) and len(got) > len(PROMPT) + 20,
                      f"llmrun runs the converted {qtype} file with its own vocabulary", got[-200:])
            check_llmrun_vs_llama_cpp(f"stories260K converted to {qtype}", LLMRUN, out, PROMPT, n=32)
        if os.path.exists(OTHER_TOKENIZER):
            r = subprocess.run([CONVERT, CHECKPOINT, os.path.join(work, "bad.gguf"), "--tokenizer", OTHER_TOKENIZER],
                               capture_output=True, timeout=120)
            check(r.returncode == 1 and b"32000 tokens" in r.stderr and b"512" in r.stderr,
                  "a tokenizer.bin of another vocabulary size is refused with both sizes", repr(r.stderr))
        else:
            check_skipped("a tokenizer of the wrong size", f"{OTHER_TOKENIZER} not found")
        r = subprocess.run([CONVERT, os.path.join(work, "260K-F32.gguf"), os.path.join(work, "x.gguf"), "--tokenizer",
                            TOKENIZER], capture_output=True, timeout=120)
        check(r.returncode == 1 and b"keeps its own vocabulary" in r.stderr,
              "--tokenizer with a GGUF input is refused with a reason", repr(r.stderr))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
