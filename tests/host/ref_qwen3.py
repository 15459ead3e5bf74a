#!/usr/bin/env python3
"""Independent numpy (float64) reference for the qwen2 / qwen3 / llama
forward pass, written from the architecture description (RMSNorm, GQA,
NeoX RoPE for qwen, adjacent-pair RoPE for llama with Llama 3's
rope_freqs divisors and linear scaling, per-head q/k RMSNorm for qwen3,
q/k/v biases for qwen2, SwiGLU, tied or separate output) and a minimal GGUF reader of its own (F32, F16,
Q8_0 tensors). It shares no code with llm/ or tools/.

    python3 tests/host/ref_qwen3.py MODEL.gguf "ID ID ..." OUT.f32
        writes float32 logits [positions][vocab] (teacher-forced)
"""
import struct
import sys

import numpy as np

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q",
            11: "<q", 12: "<d"}


class _Cursor:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.data, self.pos)[0]
        self.pos += struct.calcsize(fmt)
        return v

    def string(self):
        n = self.take("<Q")
        s = self.data[self.pos:self.pos + n]
        self.pos += n
        return s.decode("utf-8", "replace")

    def value(self, vtype):
        if vtype == 8:
            return self.string()
        if vtype == 9:
            elem, count = self.take("<I"), self.take("<Q")
            return [self.value(elem) for _ in range(count)]
        return self.take(_SCALARS[vtype])


def read_gguf(path):
    """Returns (metadata dict, {name: float64 array shaped [..., out][in]})."""
    with open(path, "rb") as f:
        data = f.read()
    c = _Cursor(data)
    if data[:4] != b"GGUF":
        raise ValueError(f"{path}: not a GGUF file")
    c.pos = 4
    version, n_tensors, n_kv = c.take("<I"), c.take("<Q"), c.take("<Q")
    if version not in (2, 3):
        raise ValueError(f"{path}: GGUF version {version}")
    meta = {}
    for _ in range(n_kv):
        key = c.string()
        meta[key] = c.value(c.take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = c.string()
        ne = [c.take("<Q") for _ in range(c.take("<I"))]
        infos.append((name, ne, c.take("<I"), c.take("<Q")))
    align = meta.get("general.alignment", 32)
    base = (c.pos + align - 1) // align * align
    tensors = {}
    for name, ne, ttype, offset in infos:
        count = int(np.prod(ne))
        start = base + offset
        if ttype == 0:
            v = np.frombuffer(data, "<f4", count, start)
        elif ttype == 1:
            v = np.frombuffer(data, "<f2", count, start)
        elif ttype == 8:
            blocks = np.frombuffer(data, [("d", "<f2"), ("qs", "i1", 32)], count // 32, start)
            v = blocks["d"].astype(np.float64)[:, None] * blocks["qs"].astype(np.float64)
        else:
            raise ValueError(f"{name}: tensor type {ttype} is not handled by the reference")
        tensors[name] = np.asarray(v, dtype=np.float64).reshape(list(reversed(ne)))
    return meta, tensors


def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def rope_neox(v, pos, base):
    """v: [heads][head_dim]; element i pairs with i + head_dim/2."""
    half = v.shape[-1] // 2
    theta = pos * base ** (-2.0 * np.arange(half) / v.shape[-1])
    cos, sin = np.cos(theta), np.sin(theta)
    a, b = v[:, :half], v[:, half:]
    return np.concatenate([a * cos - b * sin, a * sin + b * cos], axis=-1)


def rope_angles(pos, head_dim, base, freq_factors, pos_scale):
    """The angle of each rotated pair i: pos * scale * base^(-2i/d) / factor_i."""
    theta = pos * pos_scale * base ** (-2.0 * np.arange(head_dim // 2) / head_dim)
    return theta / freq_factors if freq_factors is not None else theta


def rope_pairs(v, theta):
    """llama (GGML "normal") RoPE: element 2i pairs with 2i + 1."""
    cos, sin = np.cos(theta), np.sin(theta)
    a, b = v[:, 0::2], v[:, 1::2]
    out = np.empty_like(v)
    out[:, 0::2], out[:, 1::2] = a * cos - b * sin, a * sin + b * cos
    return out


def logits(meta, t, token_ids):
    """Teacher-forced logits for every position, float64 [positions][vocab]."""
    arch = meta["general.architecture"]
    if arch not in ("qwen2", "qwen3", "llama"):
        raise ValueError(f"architecture {arch} is not handled by the reference")
    dim = meta[f"{arch}.embedding_length"]
    layers = meta[f"{arch}.block_count"]
    heads = meta[f"{arch}.attention.head_count"]
    kv_heads = meta.get(f"{arch}.attention.head_count_kv", heads)
    head_dim = meta.get(f"{arch}.attention.key_length", dim // heads)
    eps = meta.get(f"{arch}.attention.layer_norm_rms_epsilon", 1e-6)
    base = meta.get(f"{arch}.rope.freq_base", 10000.0)
    pos_scale = 1.0
    if meta.get(f"{arch}.rope.scaling.type") == "linear":
        pos_scale = 1.0 / meta[f"{arch}.rope.scaling.factor"]
    freq_factors = t.get("rope_freqs.weight")
    group = heads // kv_heads
    embed = t["token_embd.weight"]
    out_w = t.get("output.weight", embed)
    keys = [[] for _ in range(layers)]
    values = [[] for _ in range(layers)]
    rows = []
    for pos, tok in enumerate(token_ids):
        x = embed[tok].copy()
        for li in range(layers):
            p = f"blk.{li}."
            h = rms_norm(x, t[p + "attn_norm.weight"], eps)
            q = t[p + "attn_q.weight"] @ h + t.get(p + "attn_q.bias", 0)
            k = t[p + "attn_k.weight"] @ h + t.get(p + "attn_k.bias", 0)
            v = t[p + "attn_v.weight"] @ h + t.get(p + "attn_v.bias", 0)
            q, k, v = q.reshape(heads, head_dim), k.reshape(kv_heads, head_dim), v.reshape(kv_heads, head_dim)
            if p + "attn_q_norm.weight" in t:
                q = rms_norm(q, t[p + "attn_q_norm.weight"], eps)
                k = rms_norm(k, t[p + "attn_k_norm.weight"], eps)
            if arch == "llama":
                theta = rope_angles(pos, head_dim, base, freq_factors, pos_scale)
                q, k = rope_pairs(q, theta), rope_pairs(k, theta)
            else:
                q, k = rope_neox(q, pos * pos_scale, base), rope_neox(k, pos * pos_scale, base)
            keys[li].append(k)
            values[li].append(v)
            K, V = np.stack(keys[li]), np.stack(values[li])  # [pos][kv_head][head_dim]
            att_out = np.empty((heads, head_dim))
            for hd in range(heads):
                kv = hd // group
                scores = K[:, kv, :] @ q[hd] / np.sqrt(head_dim)
                w = np.exp(scores - scores.max())
                att_out[hd] = (w / w.sum()) @ V[:, kv, :]
            x = x + t[p + "attn_output.weight"] @ att_out.reshape(-1)
            h = rms_norm(x, t[p + "ffn_norm.weight"], eps)
            gate = t[p + "ffn_gate.weight"] @ h
            up = t[p + "ffn_up.weight"] @ h
            x = x + t[p + "ffn_down.weight"] @ (gate / (1 + np.exp(-gate)) * up)
        rows.append(out_w @ rms_norm(x, t["output_norm.weight"], eps))
    return np.stack(rows)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    meta, tensors = read_gguf(argv[0])
    ids = [int(s) for s in argv[1].split()]
    logits(meta, tensors, ids).astype("<f4").tofile(argv[2])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
