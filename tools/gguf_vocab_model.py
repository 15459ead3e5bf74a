#!/usr/bin/env python3
"""gguf_vocab_model - a tiny random-weight model around a real vocabulary.

    python3 tools/gguf_vocab_model.py VOCAB.gguf OUT.gguf [--arch llama|qwen3] [--type F32|Q8_0] [--seed N]

Copies every tokenizer.* key of VOCAB.gguf (a tokenizer-only GGUF such as
../shared/models/vocab/llama3.gguf: tokens, merges, special ids and the
Jinja tokenizer.chat_template) into a small tied-embedding model of the
given architecture (tools/gguf_write.py's weights, with the embedding sized
to the vocabulary). Its answers are noise; what it is for is the prompt a
chat template makes from the real vocabulary (the QEMU chat-template case).
"""
import argparse
import struct
import sys

import numpy as np

import gguf_write as gw

SCALAR_SIZES = {t: struct.calcsize(f) for t, f in gw.SCALAR_FORMATS.items()}


def read_kvs(data):
    """The metadata pairs of a GGUF file as (key, raw type + value bytes)."""
    magic, version, n_tensors, n_kv = struct.unpack_from("<4sIQQ", data, 0)
    if magic != b"GGUF" or version not in (2, 3):
        raise ValueError("not a GGUF v2/v3 file")
    pos = 24

    def string_end(at):
        (n,) = struct.unpack_from("<Q", data, at)
        return at + 8 + n

    def value_end(vtype, at):
        if vtype == gw.STRING:
            return string_end(at)
        if vtype == gw.ARRAY:
            elem, count = struct.unpack_from("<IQ", data, at)
            at += 12
            if elem == gw.STRING:
                for _ in range(count):
                    at = string_end(at)
                return at
            return at + SCALAR_SIZES[elem] * count
        return at + SCALAR_SIZES[vtype]

    kvs = []
    for _ in range(n_kv):
        key_end = string_end(pos)
        key = data[pos + 8:key_end].decode("utf-8")
        (vtype,) = struct.unpack_from("<I", data, key_end)
        end = value_end(vtype, key_end + 4)
        kvs.append((key, bytes(data[key_end:end])))
        pos = end
    return kvs


def token_count(kvs):
    for key, raw in kvs:
        if key == "tokenizer.ggml.tokens":
            _, _, count = struct.unpack_from("<IIQ", raw, 0)
            return count
    raise ValueError("the file has no tokenizer.ggml.tokens")


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vocab")
    ap.add_argument("out")
    ap.add_argument("--arch", choices=("llama", "qwen3"), default="llama")
    ap.add_argument("--type", choices=("F32", "Q8_0"), default="Q8_0")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args(argv)
    with open(args.vocab, "rb") as f:
        kvs = [kv for kv in read_kvs(f.read()) if kv[0].startswith("tokenizer.")]
    vocab = token_count(kvs)
    weights, config = gw.make_qwen_model(args.arch, args.seed, tied=True, context=256)
    rng = np.random.default_rng(args.seed + 1)
    weights["token_embd.weight"] = (rng.standard_normal((vocab, config["dim"])) * 0.25).astype(np.float32)
    config["vocab"] = vocab
    # The model's keys from gguf_write, its own tokenizer keys replaced by the real ones.
    g = gw.qwen_gguf(weights, config, gw.TYPE_NAMES[args.type])
    g.kvs = [kv for kv in g.kvs if not kv[0].startswith("tokenizer.")] + kvs
    g.write(args.out)
    print(f"gguf_vocab_model: wrote {args.out}: {args.arch}, vocabulary of {vocab} from {args.vocab}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
