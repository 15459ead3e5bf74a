"""cases_boot.py - QEMU cases for the boot foundation: prompt, shell
commands, line editing, memory sizes, SMP, USB stick, faults, PS/2, screen,
power off, and bad boot input."""
import os
import re
import time

from checks import assert_alive, expect_halting_fault
from vm import number
import screen

READY = re.compile(rb"kernel: ready in ([0-9.]+) ms")


def boot_to_prompt(ctx, **kw):
    vm = ctx.boot(**kw)
    vm.expect(READY, timeout=60)
    vm.wait_prompt(timeout=20)
    return vm


def test_boot_to_prompt(ctx):
    with ctx.boot() as vm:
        out = vm.expect(READY, timeout=60)
        ms = float(READY.search(out.encode()).group(1))
        vm.wait_prompt(timeout=20)
        launch = vm.time_of(vm.cursor - 1) - vm.start_time
        print(f"  launch to prompt {launch:.2f} s, kernel entry to prompt {ms:.1f} ms")
        assert 0 < ms < 5000, f"implausible boot time {ms} ms"
        out = vm.command("/echo hello there")
        assert "hello there" in out.split("\n", 1)[-1], f"/echo did not answer: {out!r}"


def test_shell_commands(ctx):
    with boot_to_prompt(ctx) as vm:
        out = vm.command("/help")
        for cmd in ("/help", "/mem", "/ls", "/cpu", "/uptime", "/reboot", "/poweroff"):
            assert cmd in out, f"/help does not list {cmd}: {out!r}"
        out = vm.command("/mem")
        total = number(r"total\D*([0-9.]+)", out, "total memory")
        free = number(r"free\D*([0-9.]+)", out, "free memory")
        assert 900 <= total <= 1024, f"/mem total {total} MiB with -m 1G: {out!r}"
        assert 0 < free < total, f"/mem free {free} of {total}: {out!r}"
        out = vm.command("/ls")
        assert re.search(r"1056540\s+stories260K\.bin", out), f"/ls: {out!r}"
        assert re.search(r"6227\s+tok512\.bin", out), f"/ls: {out!r}"
        out = vm.command("/cpu")
        assert re.search(r"GenuineIntel|AuthenticAMD|TCGTCGTCGTCG", out), f"/cpu vendor: {out!r}"
        for feature in ("sse2", "avx2"):
            assert feature in out, f"/cpu does not show {feature} under -cpu max: {out!r}"
        assert re.search(r"cores?\D*1\b", out), f"/cpu core count: {out!r}"
        check_uptime(vm)
        out = vm.command("/nosuchcommand")
        assert "unknown command" in out, f"unknown command: {out!r}"


UPTIME = re.compile(r"uptime: (\d+) ms \((\d+)\.(\d{3}) s\)")


def uptime_seconds(vm):
    """/uptime in seconds, with the host's monotonic times just before the
    command was sent and just after its answer arrived."""
    sent = time.monotonic()
    out = vm.command("/uptime")
    answered = time.monotonic()
    m = UPTIME.search(out)
    assert m, f"/uptime: {out!r}"
    ms = int(m.group(1))
    assert ms == int(m.group(2)) * 1000 + int(m.group(3)), f"/uptime ms and s disagree: {out!r}"
    return ms / 1000, sent, answered


def check_uptime(vm):
    """The kernel booted after QEMU started, so its uptime is positive and at
    most the host time since the launch; a second reading a second later has
    moved on by no more than the host time between the two commands, and by
    at least half the pause (the clock runs; TCG may lag the host). The upper
    bound allows 2% for the TSC rate, which is measured in 50 ms against a
    timer and so jitters under TCG, and 2 ms for the printed resolution."""
    first, sent1, answered1 = uptime_seconds(vm)
    assert 0 < first <= answered1 - vm.start_time, \
        f"/uptime {first:.3f} s, but QEMU started {answered1 - vm.start_time:.3f} s ago"
    time.sleep(1.0)
    second, sent2, answered2 = uptime_seconds(vm)
    assert 0.5 * (sent2 - answered1) <= second - first <= 1.02 * (answered2 - sent1) + 0.002, \
        f"/uptime went from {first:.3f} s to {second:.3f} s in {answered2 - sent1:.3f} s of host time"


def test_line_editing(ctx):
    with boot_to_prompt(ctx) as vm:
        out = vm.command("/echo abx\x7fc")          # DEL from a terminal is backspace
        assert out.rstrip().endswith("abc"), f"backspace: {out!r}"
        out = vm.command("/echo junk\x15/echo fresh")  # Ctrl-U kills the line
        assert out.rstrip().endswith("fresh") and "junk" not in out.split("\n")[-1], f"Ctrl-U: {out!r}"
        out = vm.command("/echo ac\x1b[Db")          # left arrow, insert in the middle
        assert out.rstrip().endswith("abc"), f"left arrow: {out!r}"
        out = vm.command("/echo 12\x1b[D\x1b[D\x1b[C\x1b[3~x")  # right arrow, delete
        assert out.rstrip().endswith("1x"), f"right arrow / delete: {out!r}"
        vm.command("/echo first")
        vm.command("/echo second")
        out = vm.command("\x1b[A\x1b[A")            # history: two up
        assert out.rstrip().endswith("first"), f"history up: {out!r}"


def sync(vm, tag):
    """Waits until everything sent so far has been answered: prompts printed
    in between (a message and a redraw) cannot confuse the next command."""
    vm.send(f"/echo sync-{tag}\r")
    vm.expect(f"\nsync-{tag}")
    vm.wait_prompt()


def test_bad_console_input(ctx):
    with boot_to_prompt(ctx) as vm:
        vm.send("/echo " + "x" * 6000 + "\r")
        sync(vm, 1)
        assert "too long" in vm.text(), f"over-long line gave no message: {vm.tail(300)!r}"
        vm.send(b"\xff\xfe\x80\x00\x01\x02\r")          # invalid UTF-8, NUL, control characters
        vm.send(b"\x1b[99~\x1b[Z\x1bO\x1b\x1b[")           # stray and truncated escape sequences
        time.sleep(0.3)
        sync(vm, 2)
        assert_alive(vm, "garbage on the console")


def test_poweroff_exit_status(ctx):
    with boot_to_prompt(ctx) as vm:
        vm.send("/poweroff\r")
        status = vm.wait_exit(30)
        assert status == 0, f"/poweroff: QEMU exit status {status}, expected 0"


def test_usb_stick_boot(ctx):
    with boot_to_prompt(ctx, usb_stick=True) as vm:
        out = vm.command("/ls")
        assert "stories260K.bin" in out, f"/ls after USB boot: {out!r}"


def test_memory_256M(ctx):
    with boot_to_prompt(ctx, memory="256M") as vm:
        out = vm.command("/mem")
        total = number(r"total\D*([0-9.]+)", out, "total memory")
        assert 180 <= total <= 256, f"/mem total {total} MiB with -m 256M: {out!r}"


def test_memory_8G_above_4G(ctx):
    with boot_to_prompt(ctx, memory="8G") as vm:
        out = vm.command("/mem")
        total = number(r"total\D*([0-9.]+)", out, "total memory")
        assert 7600 <= total <= 8192, f"/mem total {total} MiB with -m 8G: {out!r}"
        out = vm.command("/mem test 64", timeout=120)
        m = re.search(r"0x([0-9a-fA-F]+)", out)
        assert m and int(m.group(1), 16) >= 1 << 32, f"/mem test did not touch memory above 4 GiB: {out!r}"
        assert re.search(r"\b(ok|passed)\b", out, re.I) and not re.search(r"fail", out, re.I), \
            f"/mem test: {out!r}"


def test_smp4_boots(ctx):
    with boot_to_prompt(ctx, smp=4) as vm:
        out = vm.command("/cpu")
        assert re.search(r"cores?\D*4\b", out), f"/cpu with -smp 4: {out!r}"


# The stack trace names functions: the fault helper and the shell above it.
TRACE_TO_SHELL = [r"debug_fault", r"shell"]


def test_fault_page_fault(ctx):
    with boot_to_prompt(ctx) as vm:
        expect_halting_fault(vm, "/fault pf", [r"[Pp]age [Ff]ault", r"CR2\W+(0x)?0*\b"] + TRACE_TO_SHELL)


def test_fault_invalid_opcode(ctx):
    with boot_to_prompt(ctx) as vm:
        expect_halting_fault(vm, "/fault ud", [r"[Ii]nvalid [Oo]pcode"] + TRACE_TO_SHELL)


def test_ps2_keyboard_sendkey(ctx):
    with boot_to_prompt(ctx) as vm:
        keys = ["slash", "e", "c", "h", "o", "spc", "p", "s", "2", "spc", "shift-k", "e", "y", "s", "ret"]
        for k in keys:
            vm.monitor_command(f"sendkey {k}")
            time.sleep(0.05)
        out = vm.wait_prompt(timeout=20)
        assert "ps2 Keys" in out, f"keys sent through the PS/2 path did not reach the shell: {out!r}"


def test_screen_shows_prompt(ctx):
    with boot_to_prompt(ctx) as vm:
        vm.command("/echo SCREEN TEST 42")
        path = os.path.join(vm.dir, "screen.ppm")
        vm.monitor_command(f"screendump {path}")
        time.sleep(0.5)
        lines = screen.read_text(path)
        joined = "\n".join(lines)
        assert "SCREEN TEST 42" in joined, f"screen text:\n{joined}"
        assert any(line.startswith("> ") or line == ">" for line in lines), f"no prompt on screen:\n{joined}"


def test_no_boot_cfg(ctx):
    img = ctx.image("nocfg", [ctx.model("stories260K.bin"), ctx.model("tok512.bin")], cfg=None)
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/ls")
        assert "tok512.bin" in out, f"/ls without boot.cfg: {out!r}"


def test_missing_ramdisk_named_in_cfg(ctx):
    img = ctx.image("missing-ramdisk", [ctx.model("tok512.bin")], cfg="ramdisk=nothere.tar\n")
    with ctx.boot(image=img) as vm:
        out = vm.expect(re.compile(rb"nothere\.tar[^\n]*\n"), timeout=60)
        time.sleep(2)
        assert vm.proc.poll() is None, "loader did not halt (QEMU exited)"
        assert "> " not in vm.text(), f"kernel ran without its ramdisk: {out!r}"


def test_missing_kernel(ctx):
    img = ctx.image("missing-kernel", [ctx.model("tok512.bin")], cfg="ramdisk=ramdisk.tar\n")
    os.system(f"mdel -i {img}@@1M ::/kernel.elf")
    with ctx.boot(image=img) as vm:
        vm.expect(re.compile(rb"kernel\.elf[^\n]*\n"), timeout=60)
        time.sleep(2)
        assert vm.proc.poll() is None, "loader did not halt (QEMU exited)"
        assert "kernel: started" not in vm.text()


def test_garbage_boot_cfg(ctx):
    """boot.cfg of random bytes, an over-long line and a bad key: the kernel
    still boots (defaults) and the shell works."""
    junk = os.urandom(3000).replace(b"\n", b" ").decode("latin-1")
    cfg = f"{junk}\nmodel={'x' * 2000}\n=novalue\nseed=notanumber\n"
    img = ctx.image("garbage-cfg", [ctx.model("stories260K.bin"), ctx.model("tok512.bin")], cfg=cfg)
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/echo alive")
        assert out.rstrip().endswith("alive"), f"after a garbage boot.cfg: {out!r}"


def test_corrupt_ramdisk(ctx):
    """A tar whose last entry runs past the end of the archive: the kernel
    reports it and still reaches the prompt with the good entries."""
    img = ctx.image("corrupt-ramdisk", [ctx.model("tok512.bin"), ctx.model("stories260K.bin")],
                    cfg="ramdisk=ramdisk.tar\n")
    work = os.path.join(ctx.image_dir, "corrupt-ramdisk")
    tar = os.path.join(work, "ramdisk.tar")
    data = open(tar, "rb").read()
    cut = data[: len(data) // 2]          # stories260K.bin (sorted first) is cut short
    bad = os.path.join(work, "bad.tar")
    open(bad, "wb").write(cut)
    os.system(f"mcopy -o -i {img}@@1M {bad} ::/ramdisk.tar")
    with ctx.boot(image=img) as vm:
        vm.expect(READY, timeout=60)
        vm.wait_prompt()
        boot_log = vm.text()
        assert re.search(r"stories260K\.bin[^\n]*(past|truncat|beyond|exceed)", boot_log, re.I), \
            f"no message about the truncated entry:\n{boot_log[-1500:]}"
        out = vm.command("/echo alive")
        assert "alive" in out


def test_garbage_ramdisk(ctx):
    img = ctx.image("garbage-ramdisk", [ctx.model("tok512.bin")], cfg="ramdisk=ramdisk.tar\n")
    work = os.path.join(ctx.image_dir, "garbage-ramdisk")
    bad = os.path.join(work, "garbage.tar")
    open(bad, "wb").write(os.urandom(4096))
    os.system(f"mcopy -o -i {img}@@1M {bad} ::/ramdisk.tar")
    with boot_to_prompt(ctx, image=img) as vm:
        assert re.search(r"ramdisk", vm.text(), re.I)
        out = vm.command("/ls")
        assert "tok512" not in out


CASES = [
    test_boot_to_prompt,
    test_shell_commands,
    test_line_editing,
    test_bad_console_input,
    test_poweroff_exit_status,
    test_usb_stick_boot,
    test_memory_256M,
    test_memory_8G_above_4G,
    test_smp4_boots,
    test_fault_page_fault,
    test_fault_invalid_opcode,
    test_ps2_keyboard_sendkey,
    test_screen_shows_prompt,
    test_no_boot_cfg,
    test_missing_ramdisk_named_in_cfg,
    test_missing_kernel,
    test_garbage_boot_cfg,
    test_corrupt_ramdisk,
    test_garbage_ramdisk,
]
