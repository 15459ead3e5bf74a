"""matrix_checks.py - one row of make test-matrix, booted and checked: the
prompt, the framebuffer size, the CPU's features and the kernel set chosen,
the processors and memory seen, an answer from stories260K equal to
llama.cpp's greedy continuation (node-llama-cpp on the same weights,
stories260K.gguf; or the model refused when RAM is too small), the prompt read off the screen when there is
one, no missed TLB shootdown, then /poweroff ends QEMU with status 0 (ACPI S5;
the 0xF4 debug-exit fallback would exit 1)."""
import os
import re
import shutil
import subprocess
import time

from cases_boot import READY
from cases_screen import screen_text
from cases_usb import type_keys
from cases_llm import answer as split_answer
from checks import assert_no_missed_shootdown, assert_tlb_flushed
from reference import check_answer, greedy
from matrix_rows import AVX2_CPUS

OVMF_DIR = "/usr/share/OVMF"
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CPU_LINE = re.compile(r"^cpu: (sse2[^\n]*)$", re.M)
FBCON = re.compile(r"fbcon: (\d+)x(\d+),")
KERNELS = re.compile(r"kernels:\s+(\w+)")
PROBE = re.compile(r"llm: matmul probe: sse2 (\d+) ns(?:, avx2 (\d+) ns)?(?:, avx512 (\d+) ns)?")
MIB_PER = {"M": 1, "G": 1024}
SCREEN_STATS = re.compile(r"\[(\d+) tokens, ")  # the screen may wrap the rest of the line
PROMPT = "Once upon a time"
# llama.cpp's answer comes from the GGUF conversion of the same weights (SOURCES.md).
REFERENCE_MODEL = "stories260K.gguf"


def firmware_args(ctx, row, workdir):
    if row.firmware == "OVMF.fd":
        return ["-bios", ctx.ovmf]
    code = os.path.join(OVMF_DIR, row.firmware)
    vars_template = os.path.join(OVMF_DIR, row.firmware.replace("CODE", "VARS"))
    for need in (code, vars_template):
        if not os.path.exists(need):
            raise AssertionError(f"firmware file missing on this machine: {need} (apt install ovmf)")
    vars_copy = os.path.join(workdir, f"vars-{os.getpid()}.fd")
    shutil.copyfile(vars_template, vars_copy)
    return ["-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={code}",
            "-drive", f"if=pflash,format=raw,unit=1,file={vars_copy}"]


def big_model_image(ctx):
    """A 42M-shape model (~160 MB), more than -m 128M can hold."""
    path = os.path.join(ctx.image_dir, "matrix42M.bin")
    if not os.path.exists(path):
        subprocess.run([os.path.join(ROOT, "build", "host", "gen_model"), "--shape", "42M", "--out", path,
                        "--seed", "5"], check=True, stdout=subprocess.DEVNULL)
    return ctx.image("matrix-big", [path, ctx.model("tokenizer.bin")],
                     "model=matrix42M.bin\ntokenizer=tokenizer.bin\n")


def check_kernel_set(row, log, kernels):
    """The CPU features the kernel saw fit the CPU model, and the set it
    chose is one the CPU has: SSE2 without AVX2, else the faster in the probe."""
    m = CPU_LINE.search(log)
    assert m, "no 'cpu:' feature line in the boot log"
    features = m.group(1).split()
    has_avx2 = "avx2" in features and "fma" in features
    want_avx2 = row.cpu in AVX2_CPUS
    assert has_avx2 == want_avx2, f"-cpu {row.cpu}: kernel saw features {features}"
    probe = PROBE.search(log)
    if not want_avx2:
        assert kernels == "sse2", f"-cpu {row.cpu} (no AVX2): kernel set {kernels}, must be sse2"
        assert not probe or probe.group(2) is None, f"-cpu {row.cpu}: AVX2 was probed: {probe.group(0)}"
        return f"{kernels} ({' '.join(features)})"
    assert probe, f"-cpu {row.cpu}: no matmul probe line in the log"
    times = {"sse2": int(probe.group(1)), "avx2": int(probe.group(2))}
    if probe.group(3):
        times["avx512"] = int(probe.group(3))
    fastest = min(times, key=times.get)
    assert kernels == fastest, f"-cpu {row.cpu}: kernel set {kernels}, but the probe says {fastest}: {times}"
    return f"{kernels} of {times}"


def check_memory(row, out):
    total = float(re.search(r"total\D*([0-9.]+)", out).group(1))
    want = int(row.memory[:-1]) * MIB_PER[row.memory[-1]]
    # Firmware, the PCI hole and reserved ranges take some; the rest must be seen.
    assert want * 0.6 <= total <= want, f"-m {row.memory}: /mem total {total} MiB"
    return total


def run_serial_row(ctx, vm, row):
    out = vm.expect(READY, timeout=row.timeout)
    vm.wait_prompt(timeout=60)
    log = vm.text()
    facts = []
    if row.smp > 1:
        assert f"smp: {row.smp} of {row.smp} processors online" in log, \
            f"-smp {row.smp}: not every processor came online:\n{log[-2500:]}"
        sent = assert_no_missed_shootdown(vm.command("/smp"), row.name)
        facts.append(f"{sent} TLB shootdowns, none missed")
    if row.log:
        assert row.log in log, f"the boot log has no line with {row.log!r}:\n{log[-2500:]}"
        facts.append(next(line for line in log.splitlines() if row.log in line).strip())
    fb = FBCON.search(log)
    if row.size is None:
        assert not fb and "fb 0x0" in log, f"expected no linear framebuffer:\n{log[-2500:]}"
        facts.append("no framebuffer (serial only)")
    else:
        assert fb, f"no framebuffer console:\n{log[-2500:]}"
        size = (int(fb.group(1)), int(fb.group(2)))
        assert size == row.size, f"framebuffer {size[0]}x{size[1]}, expected {row.size[0]}x{row.size[1]}"
        facts.append(f"fb {size[0]}x{size[1]}")
    facts.append(f"mem {check_memory(row, vm.command('/mem')):.0f} MiB")
    if not row.model_fits:
        assert "model: none in the ramdisk" in log or "load: " in log, \
            f"-m {row.memory}: the model was not refused:\n{log[-2500:]}"
        assert "shell alive" in vm.command("/echo shell alive"), "no shell after the model was refused"
        facts.append("model refused, shell reached")
        if row.size:
            facts.append(check_prompt_on_screen(vm, row, r"^shell alive", "the /echo answer"))
        return out, facts
    kernels = KERNELS.search(vm.command("/model"))
    assert kernels, "/model names no kernel set"
    facts.append(check_kernel_set(row, log, kernels.group(1)))
    vm.command("/set temp 0")
    vm.command("/set steps 24")
    text, stats = split_answer(vm, PROMPT)
    facts.append(f"answer [{stats.group(0)[1:60]}...]")
    ref = greedy(ctx, ctx.model(REFERENCE_MODEL), 32, PROMPT)
    facts.append(check_answer(row.name, text, PROMPT, ref, int(stats.group(1))))
    if row.size:
        facts.append(check_prompt_on_screen(vm, row, r"stop:[^\n]*\]", "the answer's [stats] line"))
    return out, facts


def check_prompt_on_screen(vm, row, last_output, what):
    """The screen, read from a screendump, ends with last_output's line, then
    the prompt, then the status line (the bottom row)."""
    lines = wait_screen(vm, last_output, 60, what)
    shown = [line for line in lines if line.strip()]
    assert len(shown) >= 3 and re.search(last_output, shown[-3]) and shown[-2].startswith(">"), \
        f"the prompt is not under {what} on the screen:\n" + "\n".join(shown[-6:])
    return f"prompt on the {row.size[0]}x{row.size[1]} screen"


def wait_screen(vm, pattern, timeout, what):
    deadline = time.monotonic() + timeout
    lines = []
    while time.monotonic() < deadline:
        if vm.proc.poll() is not None:
            raise AssertionError(f"QEMU exited ({vm.proc.returncode}) while waiting for {what}")
        lines = screen_text(vm)
        if re.search(pattern, "\n".join(lines), re.M):
            return lines
        time.sleep(2)
    raise AssertionError(f"{what} not on screen after {timeout}s:\n" + "\n".join(lines))


def early_log_on_screen(row):
    """The PS/2 probe's line is on the screen, unless the screen is virtio-gpu's
    scanout: the kernel sets that up after the probe (kernel/main.c)."""
    return not any(arg.startswith("virtio-gpu-pci") for arg in row.display)


def run_screen_row(ctx, vm, row):
    """No serial port: everything through the screen and the USB keyboard."""
    lines = wait_screen(vm, r"usb: keyboard ready", row.timeout, "the USB keyboard")
    facts = []
    assert_tlb_flushed("\n".join(lines), row.name + " (the boot log on the screen)")
    if not row.ps2:
        facts.append("i8042=off")
    if not row.ps2 and early_log_on_screen(row):
        assert "ps2: no i8042 controller" in lines, \
            "i8042=off: no 'ps2: no i8042 controller' line on the screen:\n" + "\n".join(lines)
    wait_screen(vm, r"^>( |$)", 60, "the prompt")
    if row.smp > 1:
        type_keys(vm, "/smp\n")
        lines = wait_screen(vm, r"tlb shootdowns: \d+, missed", 60, "the /smp answer")
        sent = assert_no_missed_shootdown("\n".join(lines), row.name)
        facts.append(f"{sent} TLB shootdowns, none missed (screen)")
    type_keys(vm, "/model\n")
    lines = wait_screen(vm, r"kernels:\s+\w+", 60, "the /model answer")
    kernels = KERNELS.search("\n".join(lines)).group(1)
    want = "sse2" if row.cpu not in AVX2_CPUS else kernels
    assert kernels == want, f"-cpu {row.cpu}: kernel set {kernels} on screen"
    type_keys(vm, "/set temp 0\n/set steps 16\n")
    type_keys(vm, PROMPT + "\n")
    lines = wait_screen(vm, r"\[\d+ tokens, .*stop:", 300, "the answer's [stats] line")
    return None, facts + [f"kernels {kernels} (screen)", check_screen_answer(ctx, row, lines)]


def check_screen_answer(ctx, row, lines):
    """The answer's rows, between the typed prompt and the [stats] line, are
    llama.cpp's answer; compared without whitespace, as the screen wraps rows
    (the screen cases compare this way too)."""
    end = max(i for i, line in enumerate(lines) if SCREEN_STATS.match(line))
    start = max(i for i, line in enumerate(lines[:end]) if line.startswith(">") and PROMPT in line)
    text = "".join(lines[start + 1:end])
    ref = greedy(ctx, ctx.model(REFERENCE_MODEL), 32, PROMPT)
    squeezed = {k: re.sub(r"\s+", "", v) for k, v in (("text", text), ("prompt", PROMPT))}
    return check_answer(row.name + " (screen, without whitespace)", squeezed["text"], squeezed["prompt"],
                        {**ref, "texts": [re.sub(r"\s+", "", t) for t in ref["texts"]]},
                        int(SCREEN_STATS.match(lines[end]).group(1)))


def run_row(ctx, row):
    if row.video:
        image = ctx.image("default-video-" + row.video, [ctx.model("stories260K.bin"), ctx.model("tok512.bin")],
                          f"model=stories260K.bin\ntokenizer=tok512.bin\nvideo={row.video}\n")
    elif row.model_fits:
        image = ctx.default_image()
    else:
        image = big_model_image(ctx)
    extra = firmware_args(ctx, row, ctx.image_dir)
    display = list(row.display)
    if not row.serial:
        display += ["-device", "qemu-xhci,id=xhci", "-device", "usb-kbd,bus=xhci.0"]
    machine = row.machine if row.ps2 else row.machine + ",i8042=off"
    vm = ctx.boot(image, memory=row.memory, smp=row.smp, machine=machine, cpu=row.cpu, vga=False,
                  firmware_args=extra, serial=row.serial, extra_args=display)
    with vm:
        t0 = time.monotonic()
        _, facts = (run_serial_row if row.serial else run_screen_row)(ctx, vm, row)
        if row.serial:
            vm.send("/poweroff\r")
        else:
            type_keys(vm, "/poweroff\n")
        status = vm.wait_exit(60)
        assert status == 0, f"/poweroff: QEMU exit status {status}, expected 0 (ACPI S5)"
        if row.serial:
            assert_tlb_flushed(vm.text(), row.name)
        facts.append(f"/poweroff: QEMU exit {status}")
        facts.append(f"{time.monotonic() - t0:.0f}s after launch")
    return ", ".join(facts)
