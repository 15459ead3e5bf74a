"""cases_gemma3.py - a gemma3 GGUF model (gguf-arch2's Q4_K file: sliding
window 16 on 5 of 6 layers, head_dim 128 != dim/heads) loads at boot, /model
shows its window, pattern and head_dim, and a greedy answer long enough to
wrap the local layers' KV ring (79 positions: window 16 + GGUF_PREFILL_WINDOW_MAX 64 - 1) equals build/host/llmrun's on
the same file; a copy whose window is larger than its context is refused at
/load with its reason while the gemma3 model keeps answering."""
import os
import subprocess

from cases_boot import boot_to_prompt
from cases_llm import LLMRUN, answer, first_difference, set_all

GEMMA3 = "gguf-arch2/gemma3-Q4_K.gguf"
PROMPT = "make build"
STEPS = 120  # prompt + answer positions: past the ring of 79 and its mirror (context 128)
SIMD = "sse2"  # one kernel set on both sides: the same code gives the same bits
WINDOW_KEY = b"gemma3.attention.sliding_window"


def window_too_large(src, dst):
    """A copy of src whose sliding_window (a uint32 after its key) is 129, above the context of 128."""
    data = bytearray(open(src, "rb").read())
    key = len(WINDOW_KEY).to_bytes(8, "little") + WINDOW_KEY + (4).to_bytes(4, "little")
    at = data.index(key) + len(key)
    assert int.from_bytes(data[at:at + 4], "little") == 16, "unexpected window in the test file"
    data[at:at + 4] = (129).to_bytes(4, "little")
    with open(dst, "wb") as f:
        f.write(data)


def test_gemma3_answers_as_llmrun(ctx):
    model = ctx.model(GEMMA3)
    host = subprocess.run([LLMRUN, model, "-t", "0", "-n", str(STEPS), "-i", PROMPT, "--threads", "2",
                           "--simd", SIMD], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert host.returncode == 0, f"llmrun: {host.stderr.decode(errors='replace')[-300:]}"
    assert b"sliding window 16 on 5 of 6 layers (pattern 6)" in host.stderr, host.stderr[-400:]
    want = host.stdout.decode("utf-8", errors="replace").rstrip("\n")
    work = os.path.join(ctx.image_dir, "gemma3-files")
    os.makedirs(work, exist_ok=True)
    bad = os.path.join(work, "gemma3-window129.gguf")
    window_too_large(model, bad)
    img = ctx.image("gemma3", [model, bad], "model=gemma3-Q4_K.gguf\n")
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/model")
        for part in ("GGUF, arch gemma3", "head_dim 128 (dim/heads 64)",
                     "sliding window 16 on 5 of 6 layers (pattern 6)", "rope base 10000 local / 1000000 global",
                     "local KV cache a ring of 79 positions"):
            assert part in out, f"/model lacks {part!r}: {out!r}"
        set_all(vm, temp=0, steps=STEPS, simd=SIMD)
        text, stats = answer(vm, PROMPT)
        print(f"  gemma3: {stats.group(0)}")
        assert want.startswith(PROMPT) and len(want) > len(PROMPT) + 10, f"llmrun answered {want!r}"
        assert text == want, f"kernel vs llmrun: {first_difference(text, want)}"
        out = vm.command("/load gemma3-window129.gguf")
        assert "gemma3.attention.sliding_window = 129 is larger than the context (128)" in out, out
        assert "still using gemma3-Q4_K.gguf" in out, out
        again, _ = answer(vm, PROMPT)
        assert again == want, f"after the refused load: {first_difference(again, want)}"


CASES = [test_gemma3_answers_as_llmrun]
