"""llama_cpp_check.py - one check line: llmrun's greedy tokens on a GGUF file
equal llama.cpp's (node-llama-cpp, tests/reference/llama_ref.mjs).

llama.cpp generates n greedy tokens after the prompt (BOS as it adds it);
llmrun then reads the prompt and those tokens (--tokens, --logits-out) and
its argmax at every step must be llama.cpp's token: the same greedy
continuation, step by step (compare_greedy: only where both programs see
a near tie, at most one step in eight, may ours differ). Without
node-llama-cpp the check is a `skip - ` line (a failure under CI)."""
import array
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference"))
import llama_ref  # noqa: E402
from check import check, check_skipped  # noqa: E402


def maxima_rows(path, rows, first, wanted):
    """For float32 rows first.. of the rows in path: every token at the row's
    maximum (one, unless rows of the output matrix are equal: gen_gguf draws
    small rows from a pool of blocks, so a small model can repeat a row), and
    how far the row's maximum is above its logit of wanted[r]."""
    width = os.path.getsize(path) // 4 // rows
    values = array.array("f")
    with open(path, "rb") as f:
        f.seek(first * width * 4)
        values.frombytes(f.read())
    maxima, gaps = [], []
    for r in range(rows - first):
        row = values[r * width:(r + 1) * width]
        top = max(row)
        maxima.append([i for i, v in enumerate(row) if v == top])
        gaps.append(top - row[wanted[r]])
    return maxima, gaps


def llmrun_greedy_on(llmrun, model, ids, start, wanted, kv, extra=()):
    """llmrun's maxima after each of ids[start - 1:], teacher-forced, and its
    gap to wanted[r] (llama.cpp's choice) at each."""
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "logits.f32")
        r = subprocess.run([llmrun, model, "--kv", kv, *extra, "--logits-out", out, "--tokens",
                            " ".join(map(str, ids))], capture_output=True, timeout=600)
        if r.returncode != 0:
            raise RuntimeError(f"llmrun --logits-out: exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}")
        return maxima_rows(out, len(ids), start - 1, wanted)


def _check(name, llmrun, model, n, kv, extra, ask, tie=0.0):
    why = llama_ref.missing()
    if why:
        check_skipped(name, why)
        return False
    try:
        ref = ask()
        ids = ref["prompt_ids"] + ref["tokens"][:-1]
        ours, gaps = llmrun_greedy_on(llmrun, model, ids, len(ref["prompt_ids"]), ref["tokens"], kv, extra)
    except (llama_ref.ReferenceError, RuntimeError, subprocess.TimeoutExpired) as e:
        return check(False, name, str(e))
    ok, detail = llama_ref.compare_greedy(ours, ref, tie, gaps)
    return check(ok, f"{name}, {detail}, {ref['reference']}", detail)


def check_llmrun_vs_llama_cpp(label, llmrun, model, prompt, n=16, kv="f32", extra=()):
    """One check: n greedy tokens after the prompt text, llmrun's equal llama.cpp's."""
    name = f"llama.cpp: {label}: llmrun's {n} greedy tokens equal llama.cpp's ({kv} KV)"
    return _check(name, llmrun, model, n, kv, extra, lambda: llama_ref.greedy(model, n, prompt=prompt, kv=kv))


def check_ids_vs_llama_cpp(label, llmrun, model, ids, n=32, kv="f32", ctx=None, extra=(), tie=0.0):
    """The same after prompt token ids (BOS included if wanted); tie as in llama_ref.compare_greedy."""
    name = f"llama.cpp: {label}: llmrun's {n} greedy tokens equal llama.cpp's ({kv} KV)"
    return _check(name, llmrun, model, n, kv, extra, lambda: llama_ref.greedy(model, n, ids=ids, kv=kv, ctx=ctx), tie)
