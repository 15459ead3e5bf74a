#!/usr/bin/env python3
"""Writes a tiny valid GGUF v3 file (every metadata type, three tensors of
F32/F16/Q8_0) as a fuzz seed: make_gguf_seed.py OUT"""
import struct
import sys

def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b

def value(t, v):
    fmt = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
    if t == 8:
        return gstr(v)
    if t == 9:
        et, items = v
        return struct.pack("<IQ", et, len(items)) + b"".join(value(et, x) for x in items)
    return struct.pack("<" + fmt[t], v)

kvs = [
    ("general.architecture", 8, "llama"),
    ("general.alignment", 4, 32),
    ("llama.block_count", 4, 1),
    ("llama.embedding_length", 4, 32),
    ("llama.attention.layer_norm_rms_epsilon", 6, 1e-5),
    ("test.u8", 0, 200), ("test.i8", 1, -5), ("test.u16", 2, 60000), ("test.i16", 3, -30000),
    ("test.i32", 5, -7), ("test.bool", 7, True), ("test.u64", 10, 1 << 40), ("test.i64", 11, -(1 << 40)),
    ("test.f64", 12, 2.5),
    ("tokenizer.ggml.tokens", 9, (8, ["<unk>", "<s>", "</s>", "a", "b", " ab"])),
    ("tokenizer.ggml.scores", 9, (6, [0.0, 0.0, 0.0, -1.0, -2.0, -0.5])),
    ("tokenizer.ggml.token_type", 9, (5, [2, 3, 3, 1, 1, 1])),
    ("test.nested", 9, (9, [(4, [1, 2]), (8, ["x"])])),
]
# name, dims, ggml type, data bytes
tensors = [
    ("token_embd.weight", [4, 2], 0, struct.pack("<8f", *[i / 8 for i in range(8)])),
    ("output_norm.weight", [8], 1, struct.pack("<8H", *([0x3C00] * 8))),
    ("blk.0.attn_q.weight", [32, 1], 8, struct.pack("<H", 0x3C00) + bytes(range(32))),
]
out = bytearray(b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)))
for k, t, v in kvs:
    out += gstr(k) + struct.pack("<I", t) + value(t, v)
offset = 0
offsets = []
for name, dims, t, data in tensors:
    offsets.append(offset)
    out += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
    out += struct.pack("<IQ", t, offset)
    offset = (offset + len(data) + 31) // 32 * 32
out += bytes(-len(out) % 32)
data_start = len(out)
for (name, dims, t, data), off in zip(tensors, offsets):
    out += bytes(data_start + off - len(out)) + data
with open(sys.argv[1], "wb") as f:
    f.write(out)
