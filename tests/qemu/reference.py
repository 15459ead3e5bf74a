"""reference.py - the QEMU cases' llama.cpp answers (node-llama-cpp through
tests/reference/llama_ref.py): a case that needs one and finds
node-llama-cpp missing is skipped (a failure with CI set, harness.py)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reference"))
import llama_ref  # noqa: E402,F401  (re-exported for the cases)

_cache = {}


def greedy(ctx, model, n, prompt, kv="f32"):
    """llama.cpp's greedy answer (llama_ref.greedy), once per run for each question."""
    why = llama_ref.missing()
    if why:
        raise sys.modules[type(ctx).__module__].Skip(f"the llama.cpp reference: {why}")
    key = (os.path.abspath(model), n, prompt, kv)
    if key not in _cache:
        _cache[key] = llama_ref.greedy(model, n, prompt=prompt, kv=kv)
    return _cache[key]


def check_answer(what, text, prompt, ref, generated):
    """The kernel's answer text (prompt included) is the prompt and llama.cpp's
    first `generated` greedy tokens; returns a line that says what answered."""
    assert 1 <= generated <= len(ref["texts"]), \
        f"{what}: the kernel generated {generated} tokens, the reference has {len(ref['texts'])}"
    want = prompt + ref["texts"][generated - 1]
    if text != want:
        i = next((i for i, (x, y) in enumerate(zip(text, want)) if x != y), min(len(text), len(want)))
        raise AssertionError(f"{what}: the kernel's answer differs from llama.cpp's at character {i}: "
                             f"{text[i:i + 60]!r} vs {want[i:i + 60]!r} (llama.cpp's step margins "
                             f"{[round(m, 3) for m in ref['margins'][:generated]]}, {ref['reference']})")
    return (f"answer = llama.cpp's {generated} greedy tokens (smallest margin {min(ref['margins'][:generated]):.2f}, "
            f"{ref['reference']})")
