"""cases_moe.py - QEMU case for a qwen3moe (mixture-of-experts) GGUF model at
the shell: /model shows its experts, a greedy answer equals what
build/host/llmrun gives on the same file with the same kernel set, and a copy
whose top-k exceeds its expert count is refused by /load with its reason
while the model keeps answering."""
import os
import subprocess

from cases_boot import boot_to_prompt
from cases_llm import LLMRUN, answer, first_difference, set_all

MOE = "gguf-arch2/qwen3moe-Q4_K.gguf"
PROMPT = "Hello"
STEPS = 12
SIMD = "sse2"  # one kernel set on both sides: the same code gives the same bits


def host_answer(model):
    r = subprocess.run([LLMRUN, model, "-t", "0", "-n", str(STEPS), "-i", PROMPT, "--simd", SIMD],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert r.returncode == 0, f"llmrun: {r.stderr.decode(errors='replace')[-300:]}"
    err = r.stderr.decode(errors="replace")
    assert "experts 8, 2 used per token" in err, f"llmrun does not show the experts: {err!r}"
    return r.stdout.decode("utf-8", errors="replace").rstrip("\n")


def too_many_used(model, work):
    """A copy of the model with expert_used_count 9 (of 8 experts)."""
    data = bytearray(open(model, "rb").read())
    key = b"qwen3moe.expert_used_count"
    at = data.find(key) + len(key)
    assert at > len(key) and int.from_bytes(data[at:at + 4], "little") == 4, "expert_used_count is not a u32"
    data[at + 4:at + 8] = (9).to_bytes(4, "little")
    path = os.path.join(work, "qwen3moe-top9.gguf")
    with open(path, "wb") as f:
        f.write(data)
    return path


def test_gguf_qwen3moe_answers(ctx):
    model = ctx.model(MOE)
    work = os.path.join(ctx.image_dir, "gguf-moe-files")
    os.makedirs(work, exist_ok=True)
    bad = too_many_used(model, work)
    want = host_answer(model)
    img = ctx.image("gguf-qwen3moe", [model, bad], "model=qwen3moe-Q4_K.gguf\n")
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/model")
        for fact in ("GGUF, arch qwen3moe", "features:   experts 8, 2 used per token (expert ffn 256)"):
            assert fact in out, f"/model lacks {fact!r}: {out!r}"
        set_all(vm, temp=0, steps=STEPS, simd=SIMD)
        text, stats = answer(vm, PROMPT)
        assert text == want, f"kernel vs llmrun: {first_difference(text, want)}"
        out = vm.command("/load qwen3moe-top9.gguf")
        assert "expert_used_count = 9" in out and "still using qwen3moe-Q4_K.gguf" in out, out
        text, _ = answer(vm, PROMPT)
        assert text == want, f"after the refused load: {first_difference(text, want)}"


CASES = [
    test_gguf_qwen3moe_answers,
]
