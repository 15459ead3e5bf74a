"""cases_half_weights.py - F16 and BF16 GGUF weights in the kernel: a greedy
answer with the SSE2 kernel set (both types), and with the AVX2 one (F16,
through F16C), is the text build/host/llmrun gives with the same set on the
same file: the same llm/ code built for the host gives the same bits, and
llmrun's logits on these files agree with llama.cpp's
(tests/host/test_gguf_model.c). Each prompt fills at least one prefill batch
of 16 positions, so the gemm (llm/compute/*/f16_bf16_*.c) runs full and partial
tiles.
AVX2 float code is slow under TCG (20-30x SSE2's time here, for every
weight type), so its prompt is shorter."""
import subprocess

from cases_boot import boot_to_prompt
from cases_llm import LLMRUN, answer, first_difference, set_all

LONG = "Once upon a time there was a little girl who lived in a village near the forest and she"
SHORT = "Once upon a time there was a little girl who lived"
# (type, kernel set, prompt, llama2.c's -n: prompt tokens plus new ones)
RUNS = (("F16", "sse2", LONG, 48), ("BF16", "sse2", LONG, 48), ("F16", "avx2", SHORT, 24))


def host_text(model, simd, prompt, steps):
    r = subprocess.run([LLMRUN, model, "-t", "0", "-n", str(steps), "-i", prompt, "--threads", "2", "--simd", simd],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    assert r.returncode == 0, f"llmrun --simd {simd}: {r.stderr.decode(errors='replace')[-300:]}"
    return r.stdout.decode("utf-8", errors="replace").rstrip("\n")


def test_half_weights_match_host(ctx):
    files = {t: ctx.model(f"gguf-tests/synthA-{t}.gguf") for t in ("F16", "BF16")}
    img = ctx.image("half-weights", list(files.values()), "model=synthA-F16.gguf\n")
    with boot_to_prompt(ctx, image=img) as vm:
        for t, simd, prompt, steps in RUNS:
            out = vm.command(f"/load synthA-{t}.gguf")
            assert "error" not in out.lower(), f"/load synthA-{t}.gguf: {out!r}"
            set_all(vm, temp=0, steps=steps, simd=simd)
            text, stats = answer(vm, prompt)
            want = host_text(files[t], simd, prompt, steps)
            assert len(want) > len(prompt), f"llmrun answered {want!r}"
            assert text.rstrip("\n") == want, f"{t}, {simd}: kernel vs llmrun: {first_difference(text, want)}"
            print(f"  synthA-{t}, {simd}: {stats.group(0)}")


CASES = [test_half_weights_match_host]
