"""cases_robust.py - QEMU robustness cases: console abuse (random bytes, NUL,
escape sequences, 64 KiB lines, typing and Ctrl-C storms while answers
stream), a soak of 300 answers with model switches and exact /mem checks,
deliberate faults (each kind dumps, names the function and halts), and low
memory (128 MiB boots; models whose run state does not fit are named by /ls
and refused by /load with a message)."""
import os
import random
import re
import statistics
import subprocess
import time

from cases_boot import boot_to_prompt
from cases_llm import STATS, answer, set_all
from checks import assert_alive, assert_halted, expect_halting_fault
from vm import PANIC_MARKER, VMError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STATS_RAW = re.compile(rb"\[\d+ tokens, prefill [0-9.]+ tok/s, decode [0-9.]+ tok/s, [0-9.]+ ms/token, stop: \w+\]")
CLEAR_LINE = b"\x15\x15"   # Ctrl-U twice: the first may only end a cut-off escape sequence


def resync(vm, tag, attempts=8, wait=5):
    """Gets back to a clean prompt whatever was typed before: kills the
    current line, runs /echo and waits for its output. Retries, because a
    line sent while a stray prompt's answer streams is dropped by design."""
    for i in range(attempts):
        marker = f"sync-{tag}-{i}"
        vm.send(CLEAR_LINE + f"/echo {marker}\r".encode())
        try:
            vm.expect(f"\n{marker}", timeout=wait)
            vm.wait_prompt(timeout=wait)
            return
        except VMError as e:
            if "timeout" not in str(e):
                raise
    raise AssertionError(f"no prompt back after {tag}: {vm.tail(600)!r}")


def three_model_image(ctx):
    files = [ctx.model(n) for n in ("stories260K.bin", "stories260K_v1.bin", "stories260K_q80.bin", "tok512.bin")]
    return ctx.image("three-models", files, "model=stories260K.bin\ntokenizer=tok512.bin\n")


# ---------------------------------------------------------------- console abuse

def test_console_random_bytes(ctx):
    rng = random.Random(20240611)
    with boot_to_prompt(ctx) as vm:
        set_all(vm, steps=8)          # random lines become prompts: keep their answers short
        for round_ in range(4):
            blob = bytes(rng.randrange(256) for _ in range(4096))
            for i in range(0, len(blob), 512):
                vm.send(blob[i:i + 512])
                time.sleep(0.02)
            resync(vm, f"random-{round_}")
        assert_alive(vm, "random bytes")


def test_console_nul_and_controls(ctx):
    with boot_to_prompt(ctx) as vm:
        vm.send(b"\x00" * 2000 + b"\r")
        vm.send(bytes(range(1, 32)).replace(b"\x03", b"").replace(b"\r", b"").replace(b"\n", b"") * 20)
        vm.send(b"\x00/echo \x00nul\x00s\r")
        resync(vm, "nul")
        out = vm.command("/echo a\x00b")
        assert out.rstrip().endswith("ab") or out.rstrip().endswith("a"), f"NUL inside a line: {out!r}"
        assert_alive(vm, "NUL and control bytes")


def test_console_escape_sequences(ctx):
    sequences = [
        b"\x1b[A", b"\x1b[B", b"\x1b[C", b"\x1b[D", b"\x1b[H", b"\x1b[F", b"\x1bOA", b"\x1bOH",
        b"\x1b[1~", b"\x1b[3~", b"\x1b[4~", b"\x1b[5~", b"\x1b[6~", b"\x1b[7~", b"\x1b[8~",
        b"\x1b[1;5C", b"\x1b[1;2D", b"\x1b[200~", b"\x1b[201~",             # modifiers, bracketed paste
        b"\x1b[99~", b"\x1b[Z", b"\x1b[999999999999999999~", b"\x1b[;;;;;;;;;;;;;;;;m",
        b"\x1b[ !\"#$%&'()*+,-./A", b"\x1b[\x01", b"\x1b[\x7f", b"\x1bX", b"\x1bO\xff", b"\x1b]0;title\x07",
        b"\x1bP1$r\x1b\\", b"\x1b\x1b\x1b[", b"\x1b[\xc3\xa9", b"\x1b[12", b"\x1bO", b"\x1b",
    ]
    rng = random.Random(7)
    with boot_to_prompt(ctx) as vm:
        for round_ in range(3):
            seq = list(sequences)
            rng.shuffle(seq)
            vm.send(b"/echo x" + b"".join(seq))
            time.sleep(0.1)                 # lets a truncated sequence time out
            vm.send(b"\r")
            resync(vm, f"esc-{round_}")
        for s in sequences:                 # each one alone, cut off before Enter
            vm.send(s)
            time.sleep(0.05)
            out = vm.command("\x15\x15/echo ok")
            assert out.rstrip().endswith("ok"), f"after {s!r}: {out[-200:]!r}"
        # Editing still works after all that.
        out = vm.command("/echo ac\x1b[Db")
        assert out.rstrip().endswith("abc"), f"left arrow after escape abuse: {out!r}"
        assert_alive(vm, "escape sequences")


def test_console_64k_lines(ctx):
    with boot_to_prompt(ctx) as vm:
        # The editor warns and redraws its prompt mid-line, so wait for the
        # output itself, not for the next prompt.
        vm.send("/echo " + "y" * 65536 + "\r")
        out = vm.expect(re.compile(rb"\n(y+)(?=\r?\n)"), timeout=120)
        assert "line too long" in out, f"64 KiB command line: no message: {out[-300:]!r}"
        printed = re.search(r"\n(y+)$", out).group(1)
        assert len(printed) == 4096 - len("/echo "), f"64 KiB /echo printed {len(printed)} bytes"
        vm.wait_prompt()
        vm.send("once upon a time " * 4000 + "\r")    # a 68 KiB prompt
        out = vm.expect(re.compile(rb"prompt is \d+ tokens, the context is 512|" + STATS_RAW.pattern), timeout=120)
        assert "line too long" in out, f"64 KiB prompt: no message: {out[-300:]!r}"
        vm.wait_prompt()
        vm.send(b"\x01" * 100 + b"z" * 65536)     # Home storm, then a long line never ended...
        resync(vm, "64k")                          # ... and killed with Ctrl-U
        assert_alive(vm, "64 KiB lines")


def test_typing_while_answer_streams(ctx):
    rng = random.Random(99)
    with boot_to_prompt(ctx) as vm:
        set_all(vm, temp=1, seed=11, steps=0)     # to the end of the context: ~1 s of streaming
        for round_ in range(3):
            vm.send("Once upon a time\r")
            vm.expect("Once upon a time", timeout=30)   # the echo
            vm.expect("Once upon a time", timeout=60)   # the answer begins
            typed = "".join(rng.choice("abcdefghij klmnop/\x7f\x1b[A") for _ in range(3000))
            for i in range(0, len(typed), 300):
                vm.send(typed[i:i + 300] + "\r")       # Enter too: dropped during the answer
                time.sleep(0.02)
            out = vm.wait_prompt(timeout=120).replace("\r", "")
            m = STATS.search(out)
            assert m, f"answer with typing did not finish with figures: {out[-400:]!r}"
            assert m.group(5) in ("steps", "context", "eos", "length", "bos"), f"stop reason {m.group(0)}"
            resync(vm, f"typing-{round_}")
        assert_alive(vm, "typing during answers")


def test_ctrl_c_storms(ctx):
    with boot_to_prompt(ctx) as vm:
        vm.send(b"\x03" * 500)                     # between answers: each cancels an empty line
        resync(vm, "idle-storm")
        set_all(vm, temp=1, seed=5, steps=0)
        stopped = 0
        for round_ in range(5):
            vm.send("Once upon a time\r")
            vm.expect("Once upon a time", timeout=30)
            vm.expect("Once upon a time", timeout=60)
            for _ in range(40):
                vm.send(b"\x03")
                time.sleep(0.005)
            vm.expect(STATS_RAW, timeout=60)
            out = vm.text(max(0, vm.cursor - 200), vm.cursor)
            stopped += "stop: user" in out
            resync(vm, f"storm-{round_}")
        assert stopped >= 4, f"Ctrl-C storms stopped only {stopped} of 5 answers"
        vm.send(b"\x03a\x03b\x03" * 200 + b"\r")   # interleaved with typing at the prompt
        resync(vm, "mixed-storm")
        text, stats = answer(vm, "The little dog")
        assert stats.group(5) != "user", "an answer after the storms was stopped by a stale Ctrl-C"
        assert_alive(vm, "Ctrl-C storms")



# ---------------------------------------------------------------- soak

MEM_USED = re.compile(r"used\s+[0-9.]+ MiB \((\d+) bytes\)")
MEM_HEAP = re.compile(r"heap in use\s+[0-9.]+ MiB \((\d+) bytes\)")
SOAK_PROMPTS = 300
SOAK_MODELS = ("stories260K.bin", "stories260K_v1.bin", "stories260K_q80.bin")
SOAK_STARTS = ("Once upon a time", "The little dog", "There was a big", "Lily", "One day, a boy",
               "The sun", "Tom and Sue", "A cat")
SOAK_FIGURES = {}   # filled for the report: prompts, memory deltas, tok/s


def mem_figures(vm):
    out = vm.command("/mem")
    used, heap = MEM_USED.search(out), MEM_HEAP.search(out)
    assert used and heap, f"/mem without exact byte counts: {out!r}"
    return int(used.group(1)), int(heap.group(1))


def test_soak_300_answers(ctx):
    rng = random.Random(300)
    img = three_model_image(ctx)
    with boot_to_prompt(ctx, image=img) as vm:
        t0 = time.monotonic()
        probe_text, probe_first = fixed_probe(vm)
        model = "stories260K.bin"
        baseline = {}            # model -> (used, heap) after its first answer
        decode = {m: [] for m in SOAK_MODELS}
        stops = {}
        for i in range(SOAK_PROMPTS):
            if i and i % 25 == 0:                       # a model switch every 25 answers
                model = SOAK_MODELS[(i // 25) % len(SOAK_MODELS)]
                out = vm.command(f"/load {model}")
                assert "error" not in out.lower() and model in out, f"/load {model}: {out!r}"
            set_all(vm, temp=rng.choice(["0", "0.5", "0.8", "1.0", "1.3"]),
                    topp=rng.choice(["0.5", "0.9", "0.95", "1.0"]),
                    topk=rng.choice([0, 0, 1, 5, 40]), minp=rng.choice(["0", "0.05", "0.1"]),
                    penalty=rng.choice(["1.0", "1.0", "1.1", "1.3"]), seed=rng.randrange(1, 1 << 32),
                    steps=rng.randrange(10, 41))
            _, stats = answer(vm, rng.choice(SOAK_STARTS), timeout=60)
            stops[stats.group(5)] = stops.get(stats.group(5), 0) + 1
            if int(stats.group(1)) >= 5:          # very short answers time too little to count
                decode[model].append(float(stats.group(3)))
            figures = mem_figures(vm)
            if model not in baseline:
                baseline[model] = figures
            assert figures == baseline[model], \
                f"answer {i + 1} ({model}): /mem used/heap {figures} != {baseline[model]} after its first answer"
        out = vm.command("/load stories260K.bin")
        assert "error" not in out.lower(), f"/load stories260K.bin: {out!r}"
        # The host (2 cores, shared with builds) makes TCG timings noisy: a
        # slow probe is repeated, a real drift stays slow every time.
        probes_last = []
        for _ in range(3):
            text, speed = fixed_probe(vm)
            assert text == probe_text, "the same seed and settings gave a different answer after the soak"
            probes_last.append(speed)
            if speed >= 0.7 * probe_first:
                break
        probe_last = max(probes_last)
        elapsed = time.monotonic() - t0
        first = decode["stories260K.bin"][:50]
        last = decode["stories260K.bin"][-50:]
        mean_first, mean_last = statistics.mean(first), statistics.mean(last)
        print(f"  soak: {SOAK_PROMPTS} answers in {elapsed:.0f} s, /mem (used, heap) per model {baseline}, "
              f"stories260K.bin decode mean first 50 {mean_first:.1f} tok/s, last 50 {mean_last:.1f} tok/s "
              f"(random settings); fixed probe {probe_first:.1f} -> {[round(p, 1) for p in probes_last]} tok/s; stops {stops}")
        SOAK_FIGURES.update(prompts=SOAK_PROMPTS + 13 * (1 + len(probes_last)), seconds=round(elapsed),
                            memory=baseline, first50=mean_first, last50=mean_last, probe_first=probe_first,
                            probes_last=probes_last)
        assert probe_last >= 0.7 * probe_first, \
            f"fixed probe slowed down: {probe_first:.1f} -> {probes_last} tok/s (3 tries)"
        # Random settings cost differently per answer and the host is noisy:
        # only a collapse of the whole-soak figures fails here.
        assert mean_last >= 0.4 * mean_first, f"decode collapsed: {mean_first:.1f} -> {mean_last:.1f} tok/s"
        # The same model reloaded gives exactly the same memory as its first load.
        assert mem_figures(vm) == baseline["stories260K.bin"], "memory differs after reloading the first model"


def fixed_probe(vm, runs=10):
    """Ten answers with one seed and fixed settings: the same work each
    time, so their median decode speed before and after the soak compares."""
    set_all(vm, temp="1.0", topp="0.9", topk=0, minp=0, penalty="1.0", seed=4242, steps=40)
    texts, speeds = set(), []
    for i in range(runs + 3):   # the first answers also pay for QEMU translating the code: not timed
        text, stats = answer(vm, "Once upon a time", timeout=60)
        texts.add(text)
        if i >= 3:
            speeds.append(float(stats.group(3)))
    assert len(texts) == 1, f"one seed gave {len(texts)} different answers"
    return texts.pop(), statistics.median(speeds)


# ---------------------------------------------------------------- memory protection

def check_fault(ctx, kind, expect, function=r"debug_fault|recurse_forever", command="/fault", smp=None):
    options = {"smp": smp} if smp else {}
    with boot_to_prompt(ctx, **options) as vm:
        expect_halting_fault(vm, f"{command} {kind}", list(expect) + [function])


def test_fault_stack_overflow_guard_page(ctx):
    check_fault(ctx, "stack", [r"Page Fault", r"guard page", r"stack overflow"], r"recurse_forever")


def test_fault_stack_overflow_on_ap(ctx):
    # The last worker is an AP: its stack lives in the guarded stack region
    # and the dump names whose guard page was hit.
    check_fault(ctx, "stack", [r"Page Fault", r"guard page below CPU 1's stack: kernel stack overflow"],
                r"recurse_forever", command="/smp fault", smp=2)


def test_fault_write_to_rodata(ctx):
    check_fault(ctx, "ro", [r"Page Fault", r"protection violation, write"])


def test_fault_execute_data_nx(ctx):
    # The fetch faults at the data itself (CR2 == RIP); the return address
    # at [RSP] names debug_fault, and the trace goes on to its caller.
    check_fault(ctx, "nx", [r"Page Fault", r"protection violation, instruction fetch",
                            r"RIP (0x[0-9a-f]+)[^\n]*\n\s+CR2 \1",
                            r"called from debug_fault\+0x[0-9a-f]+ \(return address"], r"shell_cmd_fault")


def test_fault_general_protection(ctx):
    check_fault(ctx, "gp", [r"General Protection"])


def test_fault_divide_error(ctx):
    check_fault(ctx, "de", [r"Divide Error"])


def test_fault_unexpected_vector_continues(ctx):
    with boot_to_prompt(ctx) as vm:
        out = vm.command("/fault int", timeout=30)
        assert "returned from vector 0xf0" in out, f"/fault int: {out!r}"
        out = vm.command("/fault nosuchkind")
        assert "unknown kind" in out, f"/fault nosuchkind: {out!r}"
        assert_alive(vm, "/fault int")


# ---------------------------------------------------------------- low memory

def generated_model(ctx, name, seq):
    """A stories260K-shaped v1 checkpoint (1 MiB file) with a long context."""
    path = os.path.join(ctx.image_dir, name)
    if not os.path.exists(path):
        tool = os.path.join(ROOT, "build", "host", "gen_model")
        subprocess.run([tool, "--shape", "tiny", "--out", path, "--version", "1", "--dim", "64", "--hidden", "172",
                        "--layers", "5", "--heads", "8", "--kv-heads", "4", "--vocab", "512", "--seq", str(seq)],
                       check=True, stdout=subprocess.DEVNULL)
    return path


def test_low_memory_128M(ctx):
    with boot_to_prompt(ctx, memory="128M") as vm:
        out = vm.command("/mem")
        total = float(re.search(r"total\s+([0-9.]+)", out).group(1))
        assert 60 <= total <= 128, f"/mem total {total} MiB with -m 128M: {out!r}"
        set_all(vm, temp=0, steps=30)
        text, _ = answer(vm, "Once upon a time")
        assert text.startswith("Once upon a time, there was a little girl named Lily"), text


def test_models_too_large_for_ram(ctx):
    long_ctx = generated_model(ctx, "long-context.bin", 1 << 18)    # run state ~340 MiB
    huge_ctx = generated_model(ctx, "huge-context.bin", 1 << 20)    # run state ~1.3 GiB
    cut = os.path.join(ctx.image_dir, "cut-short.bin")
    with open(ctx.model("stories260K.bin"), "rb") as src, open(cut, "wb") as dst:
        dst.write(src.read(100000))
    img = ctx.image("too-large", [ctx.model("stories260K.bin"), ctx.model("tok512.bin"), long_ctx, huge_ctx, cut],
                    "model=stories260K.bin\ntokenizer=tok512.bin\n")
    with boot_to_prompt(ctx, image=img, memory="256M") as vm:
        out = vm.command("/ls")
        # Too large at their trained contexts, so loaded with fewer positions (said by /ls).
        for name, trained in (("huge-context.bin", 1 << 20), ("long-context.bin", 1 << 18)):
            assert re.search(rf"{name}[^\n]*at its trained context {trained}: loads with \d+ positions\)", out), \
                f"/ls in 256M: {out!r}"
        assert re.search(r"stories260K\.bin  \(model, run state [0-9.]+ MiB\)\n", out), f"/ls: {out!r}"
        assert "too large" not in out, f"/ls summary: {out!r}"
        assert re.search(r"cut-short\.bin  \(not a loadable checkpoint: [^\n]*truncated", out), f"/ls: {out!r}"
        print("  " + out.replace("\n", "\n  "))
        # Their own contexts are lowered to what fits (cases_context.py has the refusals).
        for name, trained in (("huge-context.bin", 1 << 20), ("long-context.bin", 1 << 18)):
            out = vm.command(f"/load {name}", timeout=60)
            assert re.search(rf"context: lowered from {trained} to \d+ positions", out) and \
                f"model: {name}" in out, f"/load {name} in 256M: {out!r}"
            print("  " + out.replace("\n", "\n  "))
        out = vm.command("/load stories260K.bin", timeout=60)
        assert "model: stories260K.bin" in out, out
        set_all(vm, temp=0, steps=30)
        text, _ = answer(vm, "Once upon a time")
        assert text.startswith("Once upon a time, there was a little girl named Lily"), text
        out = vm.command("/mem test 1")   # no RAM above 4 GiB: a message, not a fault
        assert "no RAM above 4 GiB" in out, f"/mem test in 256M: {out!r}"
    with boot_to_prompt(ctx, image=img, memory="1G") as vm:
        out = vm.command("/ls")
        assert re.search(r"long-context\.bin  \(model, run state [0-9.]+ MiB\)\n", out), f"/ls in 1G: {out!r}"
        assert re.search(r"huge-context\.bin[^\n]*loads with \d+ positions", out), f"/ls in 1G: {out!r}"
        out = vm.command("/load long-context.bin", timeout=120)
        assert "model: long-context.bin" in out and "context 262144" in out, f"/load long-context in 1G: {out!r}"
        set_all(vm, temp=0, steps=10)
        answer(vm, "Once upon a time")


def test_hung_worker_is_reported(ctx):
    # /smp fault hang: the last worker (CPU 1) spins inside its job without
    # faulting. The BSP's wait is bounded (5 s plus 100 times its own share,
    # kernel/arch/workers.c): it names the CPU and the job, then halts
    # instead of spinning forever.
    with boot_to_prompt(ctx, smp=2) as vm:
        sent = time.monotonic()
        vm.send("/smp fault hang\r")
        vm.expect(PANIC_MARKER, timeout=60, allow_panic=True)
        waited = time.monotonic() - sent
        time.sleep(0.5)
        dump = vm.text()
        assert re.search(r"workers: CPU 1 \(worker 1, APIC id \d+\) did not finish job fault_on_last "
                         r"\(round \d+\) within \d+ ms", dump), f"no hung-worker report:\n{dump[-2000:]}"
        assert 4 < waited < 40, f"reported after {waited:.1f} s, the bound is 5 s"
        assert_halted(vm, "a hung worker")


CASES = [
    test_console_random_bytes,
    test_console_nul_and_controls,
    test_console_escape_sequences,
    test_console_64k_lines,
    test_typing_while_answer_streams,
    test_ctrl_c_storms,
    test_soak_300_answers,
    test_fault_stack_overflow_guard_page,
    test_fault_stack_overflow_on_ap,
    test_hung_worker_is_reported,
    test_fault_write_to_rodata,
    test_fault_execute_data_nx,
    test_fault_general_protection,
    test_fault_divide_error,
    test_fault_unexpected_vector_continues,
    test_low_memory_128M,
    test_models_too_large_for_ram,
]

