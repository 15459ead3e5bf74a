"""cases_gguf.py - QEMU cases for GGUF models in the shell: a GGUF llama
model answers with the llama2.c golden text, a qwen3 model chats over two
turns exactly like a from-scratch host run of the whole conversation, the
context limit is reported (then /chat slide), a truncated GGUF is
refused while the previous model keeps answering, Qwen3's think block is
shown or hidden as /set think says, sampled chat goes on with one random
sequence, and a 44 MB model costs its file plus KV cache plus a few MiB (the
cache f16, q8_0 or f32 as /set kv says)."""
import os
import re
import subprocess
import sys

from cases_boot import boot_to_prompt
from cases_llm import answer, first_difference, golden, set_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLMRUN = os.path.join(ROOT, "build", "host", "llmrun")
QWEN = "gguf-arch/qwen3-tied-Q8_0.gguf"
SYSTEM = "Be brief."
TURNS = ("Hello there", "Tell me more")
STEPS = 20
MIB = 1 << 20


def numpy_python():
    """Debian's python3 (it has numpy, which tools/gguf_write.py needs; the
    default python3 may be another one)."""
    return "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def test_gguf_stories_golden(ctx):
    img = ctx.image("gguf-stories", [ctx.model("stories260K.gguf")], "model=stories260K.gguf\n")
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/model")
        assert "stories260K.gguf" in out and "GGUF, arch llama" in out and "its own vocabulary" in out, out
        set_all(vm, temp=0, steps=200)
        text, stats = answer(vm, "Once upon a time")
        want = golden(ctx, "stories260K__once_upon_a_time.txt")
        assert text == want, first_difference(text, want)
        assert stats.group(5) == "steps", f"stop reason {stats.group(5)}"


def test_gguf_kv_type_from_boot_cfg(ctx):
    """boot.cfg kv=f32 gives the loaded GGUF model an f32 KV cache (its greedy
    text is the llama2.c golden one as with f16); kv=bogus is reported at boot
    and the default f16 stays."""
    img = ctx.image("gguf-kv-f32", [ctx.model("stories260K.gguf")], "model=stories260K.gguf\nkv=f32\n")
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/model")
        assert "kv cache:   f32" in out, f"/model: {out!r}"
        set_all(vm, temp=0, steps=200)
        text, _ = answer(vm, "Once upon a time")
        want = golden(ctx, "stories260K__once_upon_a_time.txt")
        assert text == want, first_difference(text, want)
    img = ctx.image("gguf-kv-bogus", [ctx.model("stories260K.gguf")], "model=stories260K.gguf\nkv=bogus\n")
    with boot_to_prompt(ctx, image=img) as vm:
        assert "boot.cfg: kv=bogus is not f16, q8_0 or f32; using f16" in vm.text(), vm.tail()
        assert "kv cache:   f16" in vm.command("/model")


def host_chat(ctx, turns, sampling=("-t", "0", "--chat-scratch")):
    """What llmrun -m chat prints for these turns (by default greedy, run from
    scratch each turn)."""
    if not os.path.exists(LLMRUN):
        raise AssertionError("build/host/llmrun is missing: run make")
    r = subprocess.run([LLMRUN, ctx.model(QWEN), "-m", "chat", "-n", str(STEPS), "-y", SYSTEM, *sampling],
                       input="".join(t + "\n" for t in turns).encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True, timeout=120)
    return r.stdout.decode("utf-8", errors="replace")


def test_gguf_qwen3_chat(ctx):
    qwen = ctx.model(QWEN)
    work = os.path.join(ctx.image_dir, "gguf-corrupt-files")
    os.makedirs(work, exist_ok=True)
    data = open(qwen, "rb").read()
    truncated = os.path.join(work, "truncated.gguf")
    with open(truncated, "wb") as f:
        f.write(data[: len(data) // 2])
    img = ctx.image("gguf-qwen3", [qwen, truncated], "model=qwen3-tied-Q8_0.gguf\n")
    # Expected answers: turn 1 alone, then turns 1+2 (the second answer follows the first one's line).
    first = host_chat(ctx, TURNS[:1])
    both = host_chat(ctx, TURNS)
    assert both.startswith(first), "llmrun chat is not deterministic"
    want1 = first[:-1].rstrip("\n")
    want2 = both[len(first):-1].rstrip("\n")
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/model")
        for fact in ("GGUF, arch qwen3", "Q8_0 (mostly)", "context 128", "byte-level BPE", "chat template chatml",
                     "parameters:", "memory:"):
            assert fact in out, f"/model lacks {fact!r}: {out!r}"
        set_all(vm, temp=0, steps=STEPS)
        out = vm.command(f"/system {SYSTEM}")
        assert "system: set" in out, out
        out = vm.command("/chat")
        assert "chat: on (template chatml, with a system prompt" in out, out
        text1, _ = answer(vm, TURNS[0])
        assert text1.rstrip("\n") == want1, f"turn 1: {first_difference(text1.rstrip(chr(10)), want1)}"
        text2, stats2 = answer(vm, TURNS[1])
        assert text2.rstrip("\n") == want2, f"turn 2: {first_difference(text2.rstrip(chr(10)), want2)}"
        out = vm.command("/stats")
        assert "last answer: " in out, out
        prefilled = int(out.split("last answer: ")[1].split(" ")[0])
        assert prefilled < 40, f"the second turn prefilled {prefilled} tokens: the KV cache was not kept"

        # Keep talking until the 128-token context is full: a clear message, then /chat slide.
        for _ in range(6):
            out = vm.command("Go on")
            if "context is full" in out:
                break
        else:
            raise AssertionError(f"the context never filled: {out!r}")
        assert "/chat reset" in out and "/chat slide" in out, out
        out = vm.command("Go on")
        assert "context is full" in out, f"a full conversation took another turn: {out!r}"
        out = vm.command("/chat slide", timeout=120)
        assert "chat: dropped" in out and "stop:" in out, f"/chat slide: {out!r}"
        out = vm.command("/chat reset")
        assert "started over" in out, out
        out = vm.command("/chat off")
        assert "chat: off" in out, out

        out = vm.command("/load truncated.gguf")
        assert "load: truncated.gguf:" in out and "still using qwen3-tied-Q8_0.gguf" in out, out
        text, stats = answer(vm, "Hello")
        assert stats.group(5) in ("steps", "eos"), stats.group(0)


def test_gguf_think_block_shown_or_hidden(ctx):
    """A script model (tools/gguf_write.py --think-script) answers every chat
    turn with "<think>q</think>", a blank line, then "Z!": /set think hide
    drops the block and the blank line after it, /set think show brings
    them back."""
    work = os.path.join(ctx.image_dir, "think-model")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "think-script.gguf")
    subprocess.run([numpy_python(), os.path.join(ROOT, "tools", "gguf_write.py"), path, "--think-script"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    img = ctx.image("gguf-think", [path], "model=think-script.gguf\n")
    shown = "<think>q</think>\n\nZ!"
    with boot_to_prompt(ctx, image=img) as vm:
        set_all(vm, temp=0, steps=20)
        out = vm.command("/chat")
        assert "chat: on (template chatml" in out, out
        text, stats = answer(vm, "hi")
        assert text.rstrip("\n") == shown, f"think show: {text!r}"
        vm.command("/set think hide")
        assert "think hide" in vm.command("/set"), "/set does not report think hide"
        text, _ = answer(vm, "hi again")
        assert text.rstrip("\n") == "Z!", f"think hide: {text!r}"
        vm.command("/set think show")
        text, _ = answer(vm, "once more")
        assert text.rstrip("\n") == shown, f"think show again: {text!r}"


def test_gguf_chat_sampling_goes_on_across_turns(ctx):
    """Sampled chat: the conversation keeps one sampler, so its random
    sequence goes on from turn to turn, as in llmrun -m chat (same seed,
    same SSE2 arithmetic: the same two answers)."""
    img = ctx.image("gguf-qwen3-sampled", [ctx.model(QWEN)], "model=qwen3-tied-Q8_0.gguf\n")
    sampling = ("-t", "0.9", "-p", "0.95", "-s", "42", "--simd", "sse2")
    first = host_chat(ctx, TURNS[:1], sampling)
    both = host_chat(ctx, TURNS, sampling)
    assert both.startswith(first), "llmrun chat is not deterministic"
    want1, want2 = first[:-1].rstrip("\n"), both[len(first):-1].rstrip("\n")
    with boot_to_prompt(ctx, image=img) as vm:
        set_all(vm, temp=0.9, topp=0.95, seed=42, steps=STEPS, simd="sse2")
        vm.command(f"/system {SYSTEM}")
        assert "chat: on" in vm.command("/chat")
        text1, _ = answer(vm, TURNS[0])
        assert text1.rstrip("\n") == want1, f"turn 1: {first_difference(text1.rstrip(chr(10)), want1)}"
        text2, _ = answer(vm, TURNS[1])
        assert text2.rstrip("\n") == want2, f"turn 2: {first_difference(text2.rstrip(chr(10)), want2)}"
        # Starting over restarts the random sequence: the first answer again.
        assert "started over" in vm.command("/chat reset")
        text3, _ = answer(vm, TURNS[0])
        assert text3.rstrip("\n") == want1, f"after /chat reset: {first_difference(text3.rstrip(chr(10)), want1)}"


def model_state_bytes(vm, kv):
    """The exact bytes of the model's run state with its KV cache, from /mem's line for that KV type."""
    out = vm.command("/mem")
    m = re.search(r"model\+kv " + kv + r"\s+[0-9.]+ MiB \((\d+) bytes\)", out)
    assert m, f"/mem has no model+kv {kv} line: {out!r}"
    return int(m.group(1)), out


def test_gguf_memory_is_file_plus_kv(ctx):
    """A 44 MB Q8_0 llama model (41M parameters, written by tools/gguf_write.py):
    its weights are used in place in the ramdisk, so RAM in use beyond the
    ramdisk and the run state + KV cache stays within 32 MiB; it answers.
    The KV cache is f16 by default; /set kv f32 and q8_0 re-create it with
    the sizes those types take (12 layers x 512 positions x 512 values, keys
    and values: 24, 12 and 6.375 MiB), q8_0 answers, a change ends a /chat
    conversation (saying so), a bad type is refused in one line."""
    work = os.path.join(ctx.image_dir, "gguf-memory")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "llama41m-Q8_0.gguf")
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import gguf_write as g; "
            "w, c = g.make_qwen_model('llama', seed=5, dim=512, ffn=1536, layers=12, heads=8, kv_heads=8, "
            "head_dim=64, tied=False, context=512); g.qwen_gguf(w, c, g.GGML_Q8_0).write(sys.argv[2])")
    subprocess.run([numpy_python(), "-c", code, os.path.join(ROOT, "tools"), path], check=True, timeout=300)
    file_bytes = os.path.getsize(path)
    assert file_bytes > 40 * MIB, f"the test model is only {file_bytes} bytes"
    img = ctx.image("gguf-memory", [path], "model=llama41m-Q8_0.gguf\n")
    values = 2 * 12 * 512 * 512
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/model")
        m = re.search(r"weights ([0-9.]+) MiB in place in the ramdisk, run state and KV cache ([0-9.]+) MiB", out)
        assert m, f"/model has no memory line: {out!r}"
        assert abs(float(m.group(1)) * MIB - file_bytes) < MIB, f"weights {m.group(1)} MiB, file {file_bytes} bytes"
        assert "kv cache:   f16, 12.0 MiB" in out, f"/model: {out!r}"
        state, out = model_state_bytes(vm, "f16")
        assert abs(float(m.group(2)) * MIB - state) < MIB / 10, f"/model {m.group(2)} MiB, /mem {state} bytes"
        used = int(re.search(r"used\s+[0-9.]+ MiB \((\d+) bytes\)", out).group(1))
        ramdisk = int(re.search(r"ramdisk\s+[0-9.]+ MiB \((\d+) bytes\)", out).group(1))
        beyond = used - ramdisk - state
        print(f"  41M-parameter Q8_0 GGUF ({file_bytes / MIB:.1f} MiB): RAM beyond the ramdisk and the run state "
              f"+ KV cache ({state / MIB:.1f} MiB): {beyond / MIB:.1f} MiB")
        assert beyond <= 32 * MIB, f"{beyond / MIB:.1f} MiB beyond file + KV cache: {out!r}"
        set_all(vm, temp=0, steps=4)
        _, stats = answer(vm, "hi")
        assert stats.group(5) == "steps", f"stop reason {stats.group(5)}"
        out = vm.command("/set kv f32")
        assert "kv f32" in out, f"/set kv f32: {out!r}"
        f32_state, _ = model_state_bytes(vm, "f32")
        assert f32_state - state == values * 2, f"f32 KV: state {f32_state}, f16 {state}"
        out = vm.command("/set kv q8_0")
        assert "kv q8_0" in out, f"/set kv q8_0: {out!r}"
        q8_state, _ = model_state_bytes(vm, "q8_0")
        assert state - q8_state == values * 2 - values // 32 * 34, f"q8_0 KV: state {q8_state}, f16 {state}"
        _, stats = answer(vm, "hi")
        assert stats.group(5) == "steps", f"q8_0 KV: stop reason {stats.group(5)}"
        assert "chat: on" in vm.command("/chat")
        answer(vm, "hello")
        out = vm.command("/set kv f16")
        assert "chat: ended (the KV cache is re-created)" in out and "kv f16" in out, f"/set kv f16 in /chat: {out!r}"
        out = vm.command("/set kv q8_0")
        out = vm.command("/set kv bogus")
        lines = [line for line in out.split("\n")[1:] if line.strip()]
        assert len(lines) == 1 and "kv is f16, q8_0 or f32" in lines[0], f"/set kv bogus: {out!r}"
        assert "kv cache:   q8_0" in vm.command("/model"), "a refused type changed the cache"


CASES = [
    test_gguf_stories_golden,
    test_gguf_kv_type_from_boot_cfg,
    test_gguf_qwen3_chat,
    test_gguf_think_block_shown_or_hidden,
    test_gguf_chat_sampling_goes_on_across_turns,
    test_gguf_memory_is_file_plus_kv,
]
