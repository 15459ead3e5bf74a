#!/usr/bin/env python3
"""gguf_write - a small GGUF v3 writer and a tiny qwen2/qwen3 model maker.

Written from the GGUF specification (header, typed metadata, tensor infos,
alignment padding, tensor data), independent of gguf-py and of our C reader.

    python3 tools/gguf_write.py OUT.gguf [--arch qwen2|qwen3] [--type F32|F16|Q8_0]
                                [--seed N] [--untied] [--alignment N]
    python3 tools/gguf_write.py OUT.gguf --think-script

As a module: GGUFWriter (add_* metadata, add_tensor, write) and
make_qwen_model(arch, seed, ...) -> (weights dict, config dict), used by
tests/host/test_gguf_qwen3_ref.py; make_script_model() for a model whose
greedy answer is fixed (a Qwen3 think block, then "Z!"), used by the QEMU
case test_gguf_think_block_shown_or_hidden.
"""
import argparse
import struct
import sys

import numpy as np

# Metadata value types (GGUF spec).
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)
SCALAR_FORMATS = {UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
                  FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d"}

# Tensor types this writer can encode.
GGML_F32, GGML_F16, GGML_Q8_0 = 0, 1, 8
TYPE_NAMES = {"F32": GGML_F32, "F16": GGML_F16, "Q8_0": GGML_Q8_0}
FILE_TYPES = {GGML_F32: 0, GGML_F16: 1, GGML_Q8_0: 7}  # general.file_type (llama_ftype)


def encode_string(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def encode_value(vtype, value, elem_type=None):
    if vtype == STRING:
        return encode_string(value)
    if vtype == ARRAY:
        out = struct.pack("<IQ", elem_type, len(value))
        if elem_type == STRING:
            return out + b"".join(encode_string(v) for v in value)
        if elem_type == ARRAY:
            raise ValueError("nested arrays are not written by this tool")
        return out + b"".join(struct.pack(SCALAR_FORMATS[elem_type], v) for v in value)
    return struct.pack(SCALAR_FORMATS[vtype], value)


def quantize_q8_0(x):
    """Rows of float values (length a multiple of 32) to Q8_0 blocks: an fp16
    scale d = max|x| / 127 and 32 int8 values round(x / d), ties away from 0."""
    blocks = np.asarray(x, dtype=np.float32).reshape(-1, 32)
    amax = np.abs(blocks).max(axis=1)
    d = amax / np.float32(127)
    inv = np.where(d != 0, 1.0 / np.where(d != 0, d, 1), 0).astype(np.float32)
    v = blocks * inv[:, None]
    q = (np.sign(v) * np.floor(np.abs(v) + 0.5)).astype(np.int8)
    out = np.zeros(len(blocks), dtype=[("d", "<f2"), ("qs", "i1", 32)])
    out["d"] = d.astype(np.float16)
    out["qs"] = q
    return out.tobytes()


def dequantize_q8_0(raw):
    blocks = np.frombuffer(raw, dtype=[("d", "<f2"), ("qs", "i1", 32)])
    return (blocks["d"].astype(np.float32)[:, None] * blocks["qs"].astype(np.float32)).reshape(-1)


class GGUFWriter:
    def __init__(self, alignment=32):
        self.alignment = alignment
        self.kvs = []      # (key, encoded type + value)
        self.tensors = []  # (name, ne, ggml type, raw bytes)
        if alignment != 32:
            self.add("general.alignment", UINT32, alignment)

    def add(self, key, vtype, value, elem_type=None):
        head = struct.pack("<I", vtype)
        self.kvs.append((key, head + encode_value(vtype, value, elem_type)))

    def add_array(self, key, elem_type, values):
        self.add(key, ARRAY, list(values), elem_type)

    def add_tensor(self, name, array, ggml_type=GGML_F32):
        """array: numpy array in row-major [..., out][in] order; GGUF ne lists
        the innermost dimension first."""
        a = np.asarray(array, dtype=np.float32)
        ne = list(reversed(a.shape))
        if ggml_type == GGML_F32:
            raw = a.astype("<f4").tobytes()
        elif ggml_type == GGML_F16:
            raw = a.astype("<f2").tobytes()
        elif ggml_type == GGML_Q8_0:
            if ne[0] % 32:
                raise ValueError(f"{name}: rows of {ne[0]} values are not whole Q8_0 blocks")
            raw = quantize_q8_0(a)
        else:
            raise ValueError(f"unsupported tensor type {ggml_type}")
        self.tensors.append((name, ne, ggml_type, raw))

    def _pad(self, n):
        return (-n) % self.alignment

    def to_bytes(self):
        out = bytearray(b"GGUF")
        out += struct.pack("<IQQ", 3, len(self.tensors), len(self.kvs))
        for key, value in self.kvs:
            out += encode_string(key) + value
        offset = 0
        for name, ne, ggml_type, raw in self.tensors:
            out += encode_string(name) + struct.pack("<I", len(ne))
            out += b"".join(struct.pack("<Q", n) for n in ne)
            out += struct.pack("<IQ", ggml_type, offset)
            offset += len(raw) + self._pad(len(raw))
        out += bytes(self._pad(len(out)))
        for _, _, _, raw in self.tensors:
            out += raw + bytes(self._pad(len(raw)))
        return bytes(out)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())


def byte_level_vocab(think=False, words=()):
    """A GPT-2 style byte-level vocabulary: the 256 bytes in GPT-2's
    byte-to-unicode order, a few merges, then three control tokens; with
    think, also a "\\n\\n" merge and Qwen3's <think> and </think> (user-defined
    tokens, printed as their text); then one normal token per text in words
    (its UTF-8 bytes in the byte-level spelling)."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    byte_char = {b: chr(b) for b in printable}
    extra = 0
    for b in range(256):
        if b not in byte_char:
            byte_char[b] = chr(256 + extra)
            extra += 1
    order = printable + [b for b in range(256) if b not in printable]
    tokens = [byte_char[b] for b in order]
    merges = [("Ġ", "t"), ("h", "e"), ("Ġt", "he"), ("i", "n"), ("Ġ", "a"), ("e", "r")]
    if think:
        merges.append(("Ċ", "Ċ"))
    for a, b in merges:
        tokens.append(a + b)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    types = [1] * len(tokens) + [3] * len(specials)
    tokens += specials
    if think:
        tokens += ["<think>", "</think>"]
        types += [4, 4]
    for word in words:
        tokens.append("".join(byte_char[b] for b in word.encode("utf-8")))
        types.append(1)
    return tokens, types, [f"{a} {b}" for a, b in merges]


# What the script model says after ChatML's "<|im_start|>assistant\n" (its
# last token is "\n"): a think block, a blank line, then "Z!" and the end of
# the turn.
THINK_SCRIPT = ["Ċ", "<think>", "q", "</think>", "ĊĊ", "Z", "!", "<|im_end|>"]
# The Unicode script model's answer: a Chinese line, a blank line, then a
# Cyrillic one (each word one token), to see non-ASCII text streamed to the
# screen. (A token may appear once: the next one depends on it alone.)
UNICODE_WORDS = ["你好，世界！", "Пример:", "жизнь"]
UNICODE_SCRIPT = ["Ċ", UNICODE_WORDS[0], "ĊĊ", UNICODE_WORDS[1], "Ġ", UNICODE_WORDS[2], "<|im_end|>"]


def make_script_model(script=THINK_SCRIPT, heads=4, head_dim=72, ffn=32, context=128, words=()):
    """A qwen3 model whose greedy next token depends only on the current one
    and follows `script`: one-hot embeddings, every attention and FFN matrix
    zero (the residual stream stays the embedding), and an output row per
    step of the script. For testing what the chat layer does with the
    tokens (e.g. hiding the think block), not the maths."""
    tokens, _, _ = byte_level_vocab(think=True, words=words)
    spelled = {w: tokens[len(tokens) - len(words) + i] for i, w in enumerate(words)}
    script = [spelled.get(t, t) for t in script]
    vocab, dim = len(tokens), heads * head_dim
    assert dim >= vocab, "one-hot embeddings need dim >= vocab"
    zeros = lambda *shape: np.zeros(shape, dtype=np.float32)
    ones = lambda n: np.ones(n, dtype=np.float32)
    w = {"token_embd.weight": np.eye(vocab, dim, dtype=np.float32)}
    p = "blk.0."
    w[p + "attn_norm.weight"] = ones(dim)
    for name in ("attn_q", "attn_k", "attn_v"):
        w[p + name + ".weight"] = zeros(dim, dim)
    w[p + "attn_q_norm.weight"] = ones(head_dim)
    w[p + "attn_k_norm.weight"] = ones(head_dim)
    w[p + "attn_output.weight"] = zeros(dim, dim)
    w[p + "ffn_norm.weight"] = ones(dim)
    w[p + "ffn_gate.weight"] = zeros(ffn, dim)
    w[p + "ffn_down.weight"] = zeros(dim, ffn)
    w[p + "ffn_up.weight"] = zeros(ffn, dim)
    w["output_norm.weight"] = ones(dim)
    out = zeros(vocab, dim)
    for a, b in zip(script, script[1:]):
        out[tokens.index(b), tokens.index(a)] = 1.0
    w["output.weight"] = out
    config = dict(arch="qwen3", dim=dim, ffn=ffn, layers=1, heads=heads, kv_heads=heads, head_dim=head_dim,
                  vocab=vocab, context=context, eps=1e-6, rope_base=1e6, think=True, words=list(words))
    return w, config


def make_qwen_model(arch="qwen3", seed=7, dim=64, ffn=96, layers=2, heads=4, kv_heads=2, head_dim=32,
                    tied=True, context=64, rope_freqs=False, rope_scale=None):
    """Random weights of a tiny qwen2/qwen3/llama model (numpy float32,
    [out][in]) and its configuration. Norm weights are 1 + 0.2 N(0,1) so a
    missing norm weight shows; qwen2 gets q/k/v biases, qwen3 per-head q/k
    norms. rope_freqs adds Llama 3's per-pair frequency divisors (1 to 8),
    rope_scale a linear RoPE scaling factor."""
    rng = np.random.default_rng(seed)
    tokens, _, _ = byte_level_vocab()
    vocab = len(tokens)

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def norm(n):
        return (1 + 0.2 * rng.standard_normal(n)).astype(np.float32)

    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    w = {"token_embd.weight": normal((vocab, dim), 0.25)}
    for layer in range(layers):
        p = f"blk.{layer}."
        w[p + "attn_norm.weight"] = norm(dim)
        w[p + "attn_q.weight"] = normal((q_dim, dim), dim ** -0.5)
        if arch == "qwen2":
            w[p + "attn_q.bias"] = normal(q_dim, 0.1)
        w[p + "attn_k.weight"] = normal((kv_dim, dim), dim ** -0.5)
        if arch == "qwen2":
            w[p + "attn_k.bias"] = normal(kv_dim, 0.1)
        w[p + "attn_v.weight"] = normal((kv_dim, dim), dim ** -0.5)
        if arch == "qwen2":
            w[p + "attn_v.bias"] = normal(kv_dim, 0.1)
        if arch == "qwen3":
            w[p + "attn_q_norm.weight"] = norm(head_dim)
            w[p + "attn_k_norm.weight"] = norm(head_dim)
        w[p + "attn_output.weight"] = normal((dim, q_dim), 2 * q_dim ** -0.5)
        w[p + "ffn_norm.weight"] = norm(dim)
        w[p + "ffn_gate.weight"] = normal((ffn, dim), dim ** -0.5)
        w[p + "ffn_down.weight"] = normal((dim, ffn), 2 * ffn ** -0.5)
        w[p + "ffn_up.weight"] = normal((ffn, dim), dim ** -0.5)
    w["output_norm.weight"] = norm(dim)
    if not tied:
        w["output.weight"] = normal((vocab, dim), 0.25)
    if rope_freqs:
        w["rope_freqs.weight"] = (1 + 7 * rng.random(head_dim // 2)).astype(np.float32)
    config = dict(arch=arch, dim=dim, ffn=ffn, layers=layers, heads=heads, kv_heads=kv_heads,
                  head_dim=head_dim, vocab=vocab, context=context, eps=1e-6,
                  rope_base=500000.0 if arch == "llama" else 1e6, rope_scale=rope_scale)
    return w, config


def qwen_gguf(weights, config, ggml_type=GGML_F32, alignment=32):
    """A GGUFWriter holding the model: every 2-D tensor in ggml_type, every
    1-D tensor F32, plus metadata of every scalar and array type."""
    arch = config["arch"]
    g = GGUFWriter(alignment)
    g.add("general.architecture", STRING, arch)
    g.add("general.name", STRING, f"tiny-{arch}")
    g.add("general.file_type", UINT32, FILE_TYPES[ggml_type])
    g.add("general.quantization_version", UINT32, 2)
    g.add(f"{arch}.context_length", UINT32, config["context"])
    g.add(f"{arch}.embedding_length", UINT32, config["dim"])
    g.add(f"{arch}.block_count", UINT32, config["layers"])
    g.add(f"{arch}.feed_forward_length", UINT32, config["ffn"])
    g.add(f"{arch}.attention.head_count", UINT32, config["heads"])
    g.add(f"{arch}.attention.head_count_kv", UINT32, config["kv_heads"])
    g.add(f"{arch}.attention.key_length", UINT32, config["head_dim"])
    g.add(f"{arch}.attention.value_length", UINT32, config["head_dim"])
    g.add(f"{arch}.rope.freq_base", FLOAT32, config["rope_base"])
    g.add(f"{arch}.rope.dimension_count", UINT32, config["head_dim"])
    if config.get("rope_scale"):
        g.add(f"{arch}.rope.scaling.type", STRING, "linear")
        g.add(f"{arch}.rope.scaling.factor", FLOAT32, config["rope_scale"])
    g.add(f"{arch}.attention.layer_norm_rms_epsilon", FLOAT32, config["eps"])
    # Keys of the remaining value types, ignored by loaders; they exercise
    # the reader's handling of every type.
    g.add("test.u8", UINT8, 200)
    g.add("test.i8", INT8, -100)
    g.add("test.u16", UINT16, 60000)
    g.add("test.i16", INT16, -30000)
    g.add("test.i32", INT32, -2000000000)
    g.add("test.u64", UINT64, 1 << 40)
    g.add("test.i64", INT64, -(1 << 40))
    g.add("test.f64", FLOAT64, 0.1)
    g.add("test.bool", BOOL, True)
    g.add_array("test.f64s", FLOAT64, [1.5, -2.25])
    g.add_array("test.u8s", UINT8, [1, 2, 3])
    tokens, types, merges = byte_level_vocab(config.get("think", False), config.get("words", ()))
    g.add("tokenizer.ggml.model", STRING, "gpt2")
    g.add("tokenizer.ggml.pre", STRING, "qwen2")
    g.add_array("tokenizer.ggml.tokens", STRING, tokens)
    g.add_array("tokenizer.ggml.token_type", INT32, types)
    g.add_array("tokenizer.ggml.merges", STRING, merges)
    eot = tokens.index("<|endoftext|>")
    g.add("tokenizer.ggml.bos_token_id", UINT32, eot)
    g.add("tokenizer.ggml.eos_token_id", UINT32, eot)
    g.add("tokenizer.ggml.padding_token_id", UINT32, eot)
    g.add("tokenizer.ggml.add_bos_token", BOOL, False)
    for name, array in weights.items():
        g.add_tensor(name, array, ggml_type if np.ndim(array) == 2 else GGML_F32)
    return g


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--arch", choices=("qwen2", "qwen3", "llama"), default="qwen3")
    ap.add_argument("--type", choices=sorted(TYPE_NAMES), default="F32")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--untied", action="store_true")
    ap.add_argument("--alignment", type=int, default=32)
    ap.add_argument("--think-script", action="store_true",
                    help="the script model (make_script_model): a think block, then 'Z!'")
    ap.add_argument("--unicode-script", action="store_true",
                    help="a script model whose answer (after a think block) is a Chinese and a Cyrillic line")
    args = ap.parse_args(argv)
    if args.think_script:
        weights, config = make_script_model()
    elif args.unicode_script:
        weights, config = make_script_model(UNICODE_SCRIPT, words=UNICODE_WORDS)
    else:
        weights, config = make_qwen_model(args.arch, args.seed, tied=not args.untied)
    g = qwen_gguf(weights, config, TYPE_NAMES[args.type], args.alignment)
    g.write(args.out)
    print(f"gguf_write: wrote {args.out}: {len(g.tensors)} tensors, {args.type}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
