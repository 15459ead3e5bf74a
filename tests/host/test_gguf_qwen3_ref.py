#!/usr/bin/env python3
"""Tiny qwen2/qwen3/llama models written by our own GGUF writer
(tools/gguf_write.py) run through build/host/llmrun and compared with an
independent numpy float64 forward pass (tests/host/ref_qwen3.py), which is
itself first checked against llama.cpp's logits for ../shared/models/gguf-arch
(qwen) and gguf-tests/synthA (llama). The llama models carry Llama 3's
rope_freqs and linear RoPE scaling, which no shared file has.

Tolerances (max |logit difference| over all positions):
  F32, F16 weights, and Q8_0 with --f32-matmul (dequantised weights, fp32
  activations): 1e-4, every top-1 equal.
  Q8_0 fast path (activations rounded to int8 blocks of 32, as ggml does):
  max 0.5, mean 0.06, top-1 at all but 4 positions (measured max 0.15-0.29,
  mean 0.03, top-1 46-48 of 48; README of gguf-arch: this gap is <= 0.7).

Prints one line per check; exit 0 all passed, 1 any failed, 77 when numpy,
the test data or the binary is missing.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
except ImportError:
    # The default python3 may be a pyenv one without numpy; Debian's has it.
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != "/usr/bin/python3" \
            and not os.environ.get("GGUF_REF_REEXEC"):
        os.environ["GGUF_REF_REEXEC"] = "1"
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    print("SKIP: numpy is not installed (apt-get install python3-numpy)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tools"))
import gguf_write  # noqa: E402
import ref_qwen3  # noqa: E402
from check import check, exit_status  # noqa: E402

LLMRUN = os.environ.get("LLMRUN", "build/host/llmrun")
MODELS = os.environ.get("MODELS_DIR", "../shared/models")
ARCH_DIR = os.path.join(MODELS, "gguf-arch")


def compare(name, got, want, max_tol, mean_tol=None, min_top1=None):
    if got is None or got.shape != want.shape:
        check(False, name, f"no logits or wrong shape {None if got is None else got.shape} vs {want.shape}")
        return
    diff = np.abs(got.astype(np.float64) - want)
    top1 = int((got.argmax(1) == want.argmax(1)).sum())
    need_top1 = len(want) if min_top1 is None else min_top1
    ok = diff.max() <= max_tol and (mean_tol is None or diff.mean() <= mean_tol) and top1 >= need_top1
    check(ok, name, f"max {diff.max():.3g} (limit {max_tol}), mean {diff.mean():.3g}"
                    f"{'' if mean_tol is None else f' (limit {mean_tol})'}, top-1 {top1}/{len(want)}")


def run_llmrun(model, ids, extra, tmp, vocab):
    out = os.path.join(tmp, "logits.f32")
    if os.path.exists(out):
        os.unlink(out)
    # An f32 KV cache: the reference keeps keys and values unrounded (f16,
    # llmrun's default, moves these logits by up to ~1e-2; tests/host/test_gguf_kv.c).
    r = subprocess.run([LLMRUN, model, "--kv", "f32", "--logits-out", out, "--tokens", " ".join(map(str, ids))]
                       + extra, capture_output=True, timeout=120)
    if r.returncode != 0:
        print(f"# llmrun exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}")
        return None
    return np.fromfile(out, "<f4").reshape(len(ids), vocab)


def check_reference_against_llama_cpp():
    """The reference must reproduce llama.cpp on the shared qwen files."""
    with open(os.path.join(ARCH_DIR, "tokens.txt")) as f:
        ids = [int(s) for s in f.read().split()]
    for model, ref_name in (("qwen3-tied-F32", "qwen3-tied-F32.logits.f32"),
                            ("qwen2-F32", "qwen2-F32.logits.f32"),
                            ("qwen3-tied-Q8_0", "qwen3-tied-Q8_0.deqf32.logits.f32")):
        meta, tensors = ref_qwen3.read_gguf(os.path.join(ARCH_DIR, model + ".gguf"))
        got = ref_qwen3.logits(meta, tensors, ids)
        want = np.fromfile(os.path.join(ARCH_DIR, ref_name), "<f4").reshape(len(ids), -1)
        compare(f"numpy reference matches llama.cpp on gguf-arch/{model} ({ref_name})", got,
                want.astype(np.float64), 1e-4)
    # Its llama path (adjacent-pair RoPE) on synthA, a llama-architecture file.
    tests_dir = os.path.join(MODELS, "gguf-tests")
    with open(os.path.join(tests_dir, "tokens.txt")) as f:
        ids = [int(s) for s in f.read().split()]
    meta, tensors = ref_qwen3.read_gguf(os.path.join(tests_dir, "synthA-F32.gguf"))
    got = ref_qwen3.logits(meta, tensors, ids)
    want = np.fromfile(os.path.join(tests_dir, "synthA-F32.logits.f32"), "<f4").reshape(len(ids), -1)
    compare("numpy reference matches llama.cpp on gguf-tests/synthA-F32 (llama)", got, want.astype(np.float64),
            1e-4)


def check_writer_roundtrip(tmp):
    """What the writer wrote reads back (by the reference's own reader) as
    the same weights and metadata."""
    weights, config = gguf_write.make_qwen_model("qwen3", seed=3)
    path = os.path.join(tmp, "roundtrip.gguf")
    gguf_write.qwen_gguf(weights, config, gguf_write.GGML_F32, alignment=64).write(path)
    meta, tensors = ref_qwen3.read_gguf(path)
    same = set(tensors) == set(weights) and all(np.array_equal(tensors[k], weights[k]) for k in weights)
    check(same, "writer: F32 tensors read back bit for bit (alignment 64)")
    want = {"general.alignment": 64, "test.i8": -100, "test.u16": 60000, "test.i16": -30000,
            "test.i32": -2000000000, "test.u64": 1 << 40, "test.i64": -(1 << 40), "test.f64": 0.1,
            "test.bool": True, "test.f64s": [1.5, -2.25], "test.u8s": [1, 2, 3], "qwen3.block_count": 2}
    bad = {k: meta.get(k) for k, v in want.items() if meta.get(k) != v}
    check(not bad, "writer: metadata of every value type reads back", f"differs: {bad}")
    q8 = gguf_write.quantize_q8_0(weights["blk.0.attn_q.weight"])
    back = gguf_write.dequantize_q8_0(q8).reshape(weights["blk.0.attn_q.weight"].shape)
    err = np.abs(back - weights["blk.0.attn_q.weight"]).max()
    check(err <= np.abs(weights["blk.0.attn_q.weight"]).max() / 254 * 1.01 + 1e-3,
          "writer: Q8_0 quantisation within half a step", f"max error {err}")


def check_models(tmp):
    rng = np.random.default_rng(2024)
    cases = (("qwen3", True, 11), ("qwen3", False, 12), ("qwen2", True, 13))
    for arch, tied, seed in cases:
        weights, config = gguf_write.make_qwen_model(arch, seed=seed, tied=tied)
        vocab = config["vocab"]
        eot = vocab - 3
        ids = [eot] + [int(v) for v in rng.integers(0, eot, 47)]
        label = f"{arch}-{'tied' if tied else 'untied'}"
        for type_name in ("F32", "F16", "Q8_0"):
            path = os.path.join(tmp, f"{label}-{type_name}.gguf")
            alignment = 64 if type_name == "F16" else 32
            gguf_write.qwen_gguf(weights, config, gguf_write.TYPE_NAMES[type_name], alignment).write(path)
            meta, tensors = ref_qwen3.read_gguf(path)
            want = ref_qwen3.logits(meta, tensors, ids)
            for vname, flags in (("", []), (" --avx2", ["--avx2"])):
                got = run_llmrun(path, ids, flags, tmp, vocab)
                if type_name == "Q8_0":
                    compare(f"{label} Q8_0{vname}: llmrun (int8 activations) vs numpy f64", got, want, 0.5,
                            0.06, len(ids) - 4)
                    got = run_llmrun(path, ids, flags + ["--f32-matmul"], tmp, vocab)
                    compare(f"{label} Q8_0{vname} --f32-matmul: llmrun vs numpy f64 (dequantised)", got, want,
                            1e-4)
                else:
                    compare(f"{label} {type_name}{vname}: llmrun vs numpy f64", got, want, 1e-4)
        if arch == "qwen3" and tied:
            # The writer's byte-level vocabulary with merges, through llmrun's tokenizer.
            tokens, _, _ = gguf_write.byte_level_vocab()
            path = os.path.join(tmp, f"{label}-F32.gguf")
            r = subprocess.run([LLMRUN, path, "--tokenize"], input=b"the thing", capture_output=True,
                               timeout=60)
            want_ids = [tokens.index(t) for t in ("t", "he", "Ġt", "h", "in", "g")]
            got_ids = r.stdout.decode().split()
            check(r.returncode == 0 and got_ids == [str(i) for i in want_ids],
                  "writer vocabulary: 'the thing' tokenizes with its merges",
                  f"got {got_ids} want {want_ids} {r.stderr[-200:]!r}")


def check_llama_rope(tmp):
    """llama models (adjacent-pair RoPE) with Llama 3's rope_freqs divisors
    and with linear RoPE scaling: llmrun vs numpy f64 over 48 positions (the
    angles then matter at every position)."""
    rng = np.random.default_rng(7)
    for label, opts in (("llama rope_freqs", dict(rope_freqs=True)),
                        ("llama linear scaling x4", dict(rope_scale=4.0)),
                        ("llama rope_freqs + scaling x2", dict(rope_freqs=True, rope_scale=2.0))):
        weights, config = gguf_write.make_qwen_model("llama", seed=21, tied=False, **opts)
        vocab = config["vocab"]
        ids = [int(v) for v in rng.integers(0, vocab - 3, 48)]
        path = os.path.join(tmp, "llama-rope.gguf")
        gguf_write.qwen_gguf(weights, config, gguf_write.GGML_F32).write(path)
        meta, tensors = ref_qwen3.read_gguf(path)
        want = ref_qwen3.logits(meta, tensors, ids)
        compare(f"{label}: llmrun vs numpy f64", run_llmrun(path, ids, [], tmp, vocab), want, 1e-4)
        # Without the option the reference differs by far more than the tolerance, so a loader that
        # ignored rope_freqs or the scaling would fail the comparison above.
        plain_meta = {k: v for k, v in meta.items() if ".rope.scaling." not in k}
        plain = ref_qwen3.logits(plain_meta, {k: v for k, v in tensors.items() if k != "rope_freqs.weight"}, ids)
        gap = float(np.abs(plain - want).max())
        check(gap > 0.05, f"{label}: the option changes the reference logits", f"max change {gap:.3g}")


def main():
    if not os.access(LLMRUN, os.X_OK):
        print(f"SKIP: {LLMRUN} not built (make build/host/llmrun)")
        return 77
    if not os.path.exists(os.path.join(ARCH_DIR, "qwen3-tied-F32.gguf")):
        print(f"SKIP: {ARCH_DIR} not found (set MODELS_DIR)")
        return 77
    check_reference_against_llama_cpp()
    with tempfile.TemporaryDirectory() as tmp:
        check_writer_roundtrip(tmp)
        check_models(tmp)
        check_llama_rope(tmp)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
