#!/usr/bin/env python3
"""Writes tiny complete GGUF models, one per architecture the model builder
knows (llama, qwen2, qwen3, smollm3, gemma3, qwen3moe; F32 and Q8_0), as
seeds for tests/fuzz/fuzz_gguf_model.c: make_gguf_model_seeds.py OUT_DIR.
Each is under 9 KiB (tests/fuzz/fuzz_gguf_model.options raises -max_len to 16384), so mutations reach
read_hparams, build, bind and the first forward step."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))
from gguf_write import ARRAY, FLOAT32, GGML_F32, GGML_Q8_0, STRING, UINT32, GGUFWriter  # noqa: E402


def model(arch, ggml_type, dim, heads, kv_heads, head_dim, ffn, vocab, layers, seed):
    rng = np.random.default_rng(seed)
    w = GGUFWriter()
    w.add("general.architecture", STRING, arch)
    for key, v in [("embedding_length", dim), ("feed_forward_length", ffn), ("block_count", layers),
                   ("attention.head_count", heads), ("attention.head_count_kv", kv_heads),
                   ("attention.key_length", head_dim), ("attention.value_length", head_dim),
                   ("context_length", 8)]:
        w.add(f"{arch}.{key}", UINT32, v)
    w.add(f"{arch}.attention.layer_norm_rms_epsilon", FLOAT32, 1e-6)
    w.add(f"{arch}.rope.freq_base", FLOAT32, 10000.0)
    if arch == "qwen3moe":
        w.add("qwen3moe.expert_count", UINT32, 4)
        w.add("qwen3moe.expert_used_count", UINT32, 2)
        w.add("qwen3moe.expert_feed_forward_length", UINT32, ffn)
    if arch == "gemma3":
        w.add("gemma3.attention.sliding_window", UINT32, 4)
        w.add("gemma3.rope.freq_base_swa", FLOAT32, 10000.0)
    w.add_array("tokenizer.ggml.tokens", STRING, [f"t{i}" for i in range(vocab)])

    def t(name, *shape, typ=ggml_type):
        w.add_tensor(name, (rng.standard_normal(shape) * 0.3).astype(np.float32), typ)

    q_dim, kv_dim = heads * head_dim, kv_heads * head_dim
    t("token_embd.weight", vocab, dim)
    t("output_norm.weight", dim, typ=GGML_F32)
    for l in range(layers):
        p = f"blk.{l}."
        t(p + "attn_norm.weight", dim, typ=GGML_F32)
        t(p + "ffn_norm.weight", dim, typ=GGML_F32)
        t(p + "attn_q.weight", q_dim, dim)
        t(p + "attn_k.weight", kv_dim, dim)
        t(p + "attn_v.weight", kv_dim, dim)
        t(p + "attn_output.weight", dim, q_dim)
        if arch == "qwen2":
            for n, d in (("q", q_dim), ("k", kv_dim), ("v", kv_dim)):
                t(p + f"attn_{n}.bias", d, typ=GGML_F32)
        if arch in ("qwen3", "qwen3moe", "gemma3"):
            t(p + "attn_q_norm.weight", head_dim, typ=GGML_F32)
            t(p + "attn_k_norm.weight", head_dim, typ=GGML_F32)
        if arch == "gemma3":
            t(p + "post_attention_norm.weight", dim, typ=GGML_F32)
            t(p + "post_ffw_norm.weight", dim, typ=GGML_F32)
        if arch == "qwen3moe":
            t(p + "ffn_gate_inp.weight", 4, dim, typ=GGML_F32)
            t(p + "ffn_gate_exps.weight", 4, ffn, dim)
            t(p + "ffn_up_exps.weight", 4, ffn, dim)
            t(p + "ffn_down_exps.weight", 4, dim, ffn)
        else:
            t(p + "ffn_gate.weight", ffn, dim)
            t(p + "ffn_up.weight", ffn, dim)
            t(p + "ffn_down.weight", dim, ffn)
    if arch == "llama":
        t("output.weight", vocab, dim)  # untied; the others share token_embd
    return w.to_bytes()


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for i, arch in enumerate(["llama", "qwen2", "qwen3", "smollm3", "gemma3", "qwen3moe"]):
        f32 = model(arch, GGML_F32, 8, 2, 1, 4, 8, 8, 2 if arch != "qwen3moe" else 1, i)
        seeds = [(f"{arch}-F32", f32)]
        if arch != "qwen3moe":  # its experts at Q8_0's 32-wide rows would be 64 KiB
            seeds.append((f"{arch}-Q8_0", model(arch, GGML_Q8_0, 32, 2, 1, 16, 32, 4, 1, 10 + i)))
        for name, data in seeds:
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)


main()
