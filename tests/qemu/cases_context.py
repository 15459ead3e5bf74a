"""cases_context.py - QEMU cases for the context length and the memory
check before every load: a tiny GGUF trained for 16384 positions answers
past position 8192 (no hidden cap), bad /set ctx values are refused with a
reason, a boot.cfg ctx= whose KV cache does not fit in 256 MiB is lowered
at boot with the numbers, and a model whose run state cannot fit is
refused at /load with the bytes needed and free while the previous model
keeps answering; bad boot.cfg ctx= values are reported and the model's own
context is used."""
import os
import re
import subprocess

from cases_boot import READY
from cases_llm import answer, set_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HOST = os.path.join(ROOT, "build", "host")
LONG_CTX = 16384


def tool_output(ctx, name, args):
    """A model file written by a host tool (once per image directory)."""
    path = os.path.join(ctx.image_dir, name)
    if not os.path.exists(path):
        tool = os.path.join(HOST, args[0])
        if not os.path.exists(tool):
            raise AssertionError(f"build/host/{args[0]} is missing: run make host")
        where = ["--out", path] if args[0] == "gen_model" else [path]
        subprocess.run([tool, *where, *args[1:]], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path


def long_gguf(ctx):
    """A 0.1 MB GGUF (dim 32, 1 layer, synthetic BPE vocabulary) trained, by
    its metadata, for 16384 positions."""
    return tool_output(ctx, "ctx16k.gguf", ["gen_gguf", "--shape", "stories15M", "--dim", "32", "--layers", "1",
                                              "--heads", "2", "--kv-heads", "1", "--ffn", "64", "--vocab", "768",
                                              "--ctx", str(LONG_CTX), "--type", "Q8_0"])


def test_context_past_8192(ctx):
    img = ctx.image("ctx-16k", [long_gguf(ctx)], "model=ctx16k.gguf\n")
    with ctx.boot(image=img) as vm:
        boot = vm.expect(READY, timeout=60)
        vm.wait_prompt(timeout=20)
        assert f"context {LONG_CTX})" in boot and "lowered" not in boot, f"boot log: {boot[-800:]!r}"
        for value, reason in (("0", "bad value for ctx: '0' (a context length"),
                              ("abc", "bad value for ctx: 'abc' (a context length"),
                              ("999999999", f"ctx 999999999 is above ctx16k.gguf's trained context {LONG_CTX}")):
            out = vm.command(f"/set ctx {value}")
            assert reason in out, f"/set ctx {value}: {out!r}"
            print(f"  /set ctx {value}: {out.splitlines()[-1]}")
        out = vm.command("/set")
        assert f"ctx auto ({LONG_CTX} loaded)" in out, f"/set after refusals: {out!r}"
        set_all(vm, temp=0, steps=8300)
        # About 40 s here; the limit is for a hang, not a speed bound (CI once needed over 240 s).
        _, stats = answer(vm, "Once upon a time", timeout=600)
        print(f"  {stats.group(0)}")
        assert int(stats.group(1)) > 8192 and stats.group(5) == "steps", stats.group(0)
        # A shorter context asked for: loaded again with it, and the answer stops at its end.
        out = vm.command("/set ctx 300", timeout=60)
        assert "context 300)" in out and "ctx 300 (300 loaded)" in out, f"/set ctx 300: {out!r}"
        set_all(vm, steps=0)
        _, stats = answer(vm, "Once upon a time", timeout=120)
        assert stats.group(5) == "context", stats.group(0)


def long_checkpoint(ctx):
    """A stories260K-shaped v1 checkpoint trained for 262144 positions: its
    run state (~340 MiB) does not fit in 256 MiB."""
    return tool_output(ctx, "long-context.bin", ["gen_model", "--shape", "tiny", "--version", "1", "--dim", "64",
                                                 "--hidden", "172", "--layers", "5", "--heads", "8", "--kv-heads", "4",
                                                 "--vocab", "512", "--seq", "262144"])


def deep_checkpoint(ctx):
    """256 layers of dim 64 (a 30 MB file): its 4096 positions of KV cache
    take 512 MiB."""
    return tool_output(ctx, "deep-256-layers.bin", ["gen_model", "--shape", "tiny", "--version", "1", "--dim", "64",
                                                    "--hidden", "64", "--layers", "256", "--heads", "4", "--kv-heads",
                                                    "4", "--vocab", "512", "--seq", "4096"])


LOWERED = re.compile(r"context: lowered from (\d+) to (\d+) positions \(trained (\d+)\): the KV cache of \d+ needs "
                     r"([0-9.]+) MiB, the run state ([0-9.]+) MiB; free RAM ([0-9.]+) MiB")


def test_context_fitted_to_ram(ctx):
    files = [ctx.model("stories260K.bin"), ctx.model("tok512.bin"), long_checkpoint(ctx), deep_checkpoint(ctx)]
    img = ctx.image("ctx-256m", files, "model=long-context.bin\ntokenizer=tok512.bin\nctx=262144\n")
    with ctx.boot(image=img, memory="256M") as vm:
        boot = vm.expect(READY, timeout=120)
        vm.wait_prompt(timeout=20)
        m = LOWERED.search(boot)
        assert m, f"boot log in 256M: {boot[-800:]!r}"
        print("  " + m.group(0))
        asked, chosen, trained, kv, state, free = (float(x) for x in m.groups())
        assert asked == trained == 262144 and 2048 <= chosen < asked and state > free > kv * chosen / asked, m.group(0)
        assert "model: long-context.bin" in boot and f"context {int(chosen)})" in boot, boot[-800:]
        out = vm.command("/ls")
        assert re.search(r"deep-256-layers\.bin  \(model, run state [0-9.]+ MiB: does not fit in free RAM\)", out) \
            and "1 model too large" in out, f"/ls: {out!r}"
        # Too deep for 256 MiB at any useful context: refused with the numbers, long-context still answers.
        out = vm.command("/load deep-256-layers.bin", timeout=60)
        m = re.search(r"load: deep-256-layers\.bin does not fit: at context (\d+) it needs ([0-9.]+) MiB of run "
                      r"state \(KV cache ([0-9.]+) MiB\), free RAM ([0-9.]+) MiB", out)
        assert m and float(m.group(2)) > float(m.group(4)) and "still using long-context.bin" in out, out
        # boot.cfg's ctx=262144 is the context asked for: this model's trained 4096 instead, said so.
        assert m.group(1) == "4096" and "trained context 4096; using 4096" in out, out
        print("  " + m.group(0))
        # An explicit context that does not fit is refused too, the model unchanged.
        out = vm.command("/set ctx 262144", timeout=60)
        assert "load: long-context.bin does not fit: at context 262144" in out and "ctx stays as it was" in out, out
        set_all(vm, temp=0, steps=20)
        answer(vm, "Once upon a time")
        # Back to the model's own context: lowered to what is free beside the
        # loaded copy, which stays until the new one has loaded.
        out = vm.command("/set ctx auto", timeout=60)
        m = LOWERED.search(out)
        assert m and "ctx auto (" in out, f"/set ctx auto: {out!r}"
        print("  " + m.group(0))
        # With its own context the deep model is lowered, but not below 2048 positions: refused.
        out = vm.command("/load deep-256-layers.bin", timeout=60)
        assert "load: deep-256-layers.bin does not fit: at context 2048" in out and \
            "never lowered below 2048 positions" in out and "still using long-context.bin" in out, out
        answer(vm, "Once upon a time")
        out = vm.command("/load stories260K.bin", timeout=60)
        assert "model: stories260K.bin" in out and "context 512)" in out, out
        text, _ = answer(vm, "Once upon a time")
        assert text.startswith("Once upon a time, there was a little girl named Lily"), text


def test_context_bad_boot_cfg(ctx):
    files = [ctx.model("stories260K.bin"), ctx.model("tok512.bin")]
    bad = {"0": "boot.cfg: ctx=0 is not a context length", "abc": "boot.cfg: ctx=abc is not a context length",
           "999999999": "context 999999999 is above stories260K.bin's trained context 512; using 512"}
    for value, reason in bad.items():
        img = ctx.image(f"ctx-bad-{value}", files, f"model=stories260K.bin\ntokenizer=tok512.bin\nctx={value}\n")
        with ctx.boot(image=img) as vm:
            boot = vm.expect(READY, timeout=60)
            vm.wait_prompt(timeout=20)
            assert reason in boot and "model: stories260K.bin" in boot and "context 512)" in boot, \
                f"ctx={value}: {boot[-800:]!r}"
            print(f"  ctx={value}: " + next(line for line in boot.splitlines() if reason in line).strip())
            set_all(vm, temp=0, steps=30)
            text, _ = answer(vm, "Once upon a time")
            assert text.startswith("Once upon a time, there was a little girl named Lily"), text


CASES = [
    test_context_past_8192,
    test_context_bad_boot_cfg,
    test_context_fitted_to_ram,
]
