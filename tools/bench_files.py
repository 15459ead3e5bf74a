#!/usr/bin/env python3
"""bench_files.py - benchmark models made the way users get them: written by
llama.cpp's own gguf-py (as its converter writes them) and quantised by its
llama-quantize.

    python3 tools/bench_files.py [--shape stories110M|llama-3.2-1b] [--untied]
        [--types F16,Q8_0,Q4_0,Q4_K_M,Q6_K] (also F32, BF16) [--dir build/bench]
        [--gguf-py ../llama.cpp/gguf-py] [--quantize ../llama.cpp/build/bin/llama-quantize]
        [--vocab FILE] [--seed 1]

Random weights (numpy, seeded), llama architecture, with a real vocabulary
copied from a tokenizer-only GGUF of ../shared/models/vocab (llama.cpp
refuses a file without one): the llama SPM vocabulary (32000 tokens) for the
stories110M shape, Llama 3's (128256) for the Llama-3.2-1B shape. Tied (no
output.weight: the classifier is the embedding, as Llama 3.2 1B ships) or
untied (--untied). F32/F16/BF16 files are written by gguf-py's GGUFWriter,
1-D norms in F32 as its converter keeps them; every quantised type is
`llama-quantize F16-FILE OUT TYPE`, its default mix (it picks token_embd's
and output's types itself: Q6_K for a Q4_0 file's tied classifier). Files
are DIR/SHAPE-llama-{tied,untied}-TYPE.gguf, made once and kept. Prints one
"TYPE PATH" line per file. Python standard library + numpy; gguf-py from a
llama.cpp checkout (--gguf-py or GGUF_PY; neither Debian nor npm packages it).
"""
import argparse
import os
import subprocess
import sys
import types

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB_DIR = os.path.join(HERE, "..", "..", "shared", "models", "vocab")

# llama.cpp's llama-architecture hyperparameters of the two shapes.
SHAPES = {
    "stories110M": dict(dim=768, layers=12, heads=12, kv_heads=12, hidden=2048, vocab=32000, ctx=1024,
                        rope_base=10000.0, vocab_file="ggml-vocab-llama-spm.gguf"),
    "llama-3.2-1b": dict(dim=2048, layers=16, heads=32, kv_heads=8, hidden=8192, vocab=128256, ctx=131072,
                         rope_base=500000.0, vocab_file="llama3.gguf"),
}
BASE_TYPES = ("F32", "F16", "BF16")
QUANT_TYPES = ("Q8_0", "Q4_0", "Q4_K_M", "Q6_K")


def load_gguf_py(path):
    sys.path.insert(0, path)
    try:
        import yaml  # noqa: F401
    except ImportError:
        # gguf-py imports PyYAML for reading model cards only, which nothing
        # here does; a bare machine (the device run) may lack it.
        sys.modules["yaml"] = types.ModuleType("yaml")
    try:
        import gguf  # noqa: E402  (llama.cpp's gguf-py, from its checkout)
    except ImportError as e:
        raise SystemExit(f"bench_files: no gguf-py at {path} ({e}); pass --gguf-py or GGUF_PY")
    return gguf


def copy_tokenizer(gguf, writer, vocab_path, n_vocab):
    """Every tokenizer.* key of a tokenizer-only GGUF, as the converter writes them."""
    reader = gguf.GGUFReader(vocab_path)
    tokens = reader.fields.get("tokenizer.ggml.tokens")
    if tokens is None or len(tokens.data) != n_vocab:
        raise SystemExit(f"bench_files: {vocab_path} does not hold a {n_vocab}-token vocabulary")
    for key, field in reader.fields.items():
        if not key.startswith("tokenizer."):
            continue
        main = field.types[0]
        sub = field.types[-1] if main == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), main, sub)


def tensors(shape, tied, seed):
    """(name, float32 array) in the converter's order; numpy shapes are (rows, columns)."""
    import numpy as np

    s = SHAPES[shape]
    rng = np.random.default_rng(seed)
    dim, kv_dim = s["dim"], s["dim"] // s["heads"] * s["kv_heads"]

    def matrix(rows, cols):
        # Scaled as a trained model's are, so activations stay finite.
        return rng.standard_normal((rows, cols), dtype=np.float32) * np.float32(cols**-0.5)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n, dtype=np.float32)).astype(np.float32)

    yield "token_embd.weight", matrix(s["vocab"], dim)
    for i in range(s["layers"]):
        b = f"blk.{i}."
        yield b + "attn_norm.weight", norm(dim)
        yield b + "attn_q.weight", matrix(dim, dim)
        yield b + "attn_k.weight", matrix(kv_dim, dim)
        yield b + "attn_v.weight", matrix(kv_dim, dim)
        yield b + "attn_output.weight", matrix(dim, dim)
        yield b + "ffn_norm.weight", norm(dim)
        yield b + "ffn_gate.weight", matrix(s["hidden"], dim)
        yield b + "ffn_up.weight", matrix(s["hidden"], dim)
        yield b + "ffn_down.weight", matrix(dim, s["hidden"])
    yield "output_norm.weight", norm(dim)
    if not tied:
        yield "output.weight", matrix(s["vocab"], dim)


def write_base(gguf, path, shape, tied, qtype, vocab_path, seed):
    """An F32/F16/BF16 file written by gguf-py's GGUFWriter."""
    import numpy as np

    s = SHAPES[shape]
    w = gguf.GGUFWriter(path + ".tmp", "llama")
    w.add_name(f"random {shape}")
    w.add_context_length(s["ctx"])
    w.add_embedding_length(s["dim"])
    w.add_block_count(s["layers"])
    w.add_feed_forward_length(s["hidden"])
    w.add_head_count(s["heads"])
    w.add_head_count_kv(s["kv_heads"])
    w.add_rope_dimension_count(s["dim"] // s["heads"])
    w.add_rope_freq_base(s["rope_base"])
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(s["vocab"])
    w.add_file_type({"F32": gguf.LlamaFileType.ALL_F32, "F16": gguf.LlamaFileType.MOSTLY_F16,
                     "BF16": gguf.LlamaFileType.MOSTLY_BF16}[qtype])
    copy_tokenizer(gguf, w, vocab_path, s["vocab"])
    for name, data in tensors(shape, tied, seed):
        if data.ndim == 1 or qtype == "F32":
            w.add_tensor(name, data)
        elif qtype == "F16":
            w.add_tensor(name, data.astype(np.float16))
        else:
            raw = gguf.GGMLQuantizationType.BF16
            w.add_tensor(name, gguf.quants.quantize(data, raw), raw_dtype=raw)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    os.replace(path + ".tmp", path)


def file_path(directory, shape, tied, qtype):
    return os.path.join(directory, f"{shape}-llama-{'tied' if tied else 'untied'}-{qtype}.gguf")


def make_files(shape, types, tied, directory, gguf_py, quantize, vocab=None, seed=1, log=print):
    """{type: path} of the files, each written when missing."""
    os.makedirs(directory, exist_ok=True)
    vocab = vocab or os.path.join(VOCAB_DIR, SHAPES[shape]["vocab_file"])
    gguf = None
    paths = {}
    for qtype in types:
        if qtype not in BASE_TYPES + QUANT_TYPES:
            raise SystemExit(f"bench_files: type {qtype} is none of {', '.join(BASE_TYPES + QUANT_TYPES)}")
        base = qtype if qtype in BASE_TYPES else "F16"
        base_path = file_path(directory, shape, tied, base)
        if not os.path.exists(base_path):
            gguf = gguf or load_gguf_py(gguf_py)
            log(f"bench_files: writing {base_path} (gguf-py GGUFWriter, random weights, seed {seed})")
            write_base(gguf, base_path, shape, tied, base, vocab, seed)
        path = file_path(directory, shape, tied, qtype)
        if not os.path.exists(path):
            if not os.access(quantize, os.X_OK):
                raise SystemExit(f"bench_files: no llama-quantize at {quantize}; pass --quantize or LLAMA_QUANTIZE")
            log(f"bench_files: {os.path.basename(quantize)} {base_path} -> {qtype}")
            r = subprocess.run([quantize, base_path, path + ".tmp", qtype, str(os.cpu_count() or 1)],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise SystemExit(f"bench_files: llama-quantize failed: {r.stderr.strip()[-600:]}")
            os.replace(path + ".tmp", path)
        paths[qtype] = path
    return paths


def default_llama_dir():
    return os.environ.get("LLAMA_CPP_DIR", os.path.join(HERE, "..", "..", "llama.cpp"))


def add_arguments(p):
    """The options bench_compare.py shares with this script."""
    p.add_argument("--untied", action="store_true", help="a separate output.weight (default: tied, as Llama 3.2 1B)")
    p.add_argument("--gguf-py", default=os.environ.get("GGUF_PY", os.path.join(default_llama_dir(), "gguf-py")))
    p.add_argument("--quantize", default=os.environ.get(
        "LLAMA_QUANTIZE", os.path.join(default_llama_dir(), "build", "bin", "llama-quantize")))
    p.add_argument("--vocab", default=None, help="a tokenizer-only GGUF (default: by shape, from ../shared/models/vocab)")
    p.add_argument("--seed", type=int, default=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", default="stories110M", choices=tuple(SHAPES))
    p.add_argument("--types", default="F16,Q8_0,Q4_0,Q4_K_M,Q6_K")
    p.add_argument("--dir", default="build/bench")
    add_arguments(p)
    a = p.parse_args()
    paths = make_files(a.shape, a.types.split(","), not a.untied, a.dir, a.gguf_py, a.quantize, a.vocab, a.seed,
                       log=lambda s: print(s, file=sys.stderr, flush=True))
    for qtype, path in paths.items():
        print(qtype, path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
