"""checks.py - the checks QEMU cases share about how the kernel ends up:
alive and without a panic, or (after a deliberate fault) a KERNEL PANIC dump
followed by a halt. A halted machine neither answers nor resets: a triple
fault or a reboot resets the CPU, and under -no-reboot QEMU then exits."""
import re
import time

from vm import PANIC_MARKER


def assert_no_panic(vm, what):
    assert PANIC_MARKER not in vm.text().encode(), f"kernel panic after {what}:\n{vm.tail(2000)}"


# kernel/arch/smp.c prints it when an AP never acknowledged a TLB shootdown:
# that CPU may still use a stale mapping.
TLB_TIMEOUT = re.compile(r"smp: CPU \d+ did not flush its TLB[^\n]*")


def assert_tlb_flushed(text, what):
    """No CPU missed a TLB shootdown (every AP acknowledged every flush)."""
    missed = TLB_TIMEOUT.search(text)
    assert not missed, f"{what}: {missed.group(0)}"


TLB_STATS = re.compile(r"tlb shootdowns: (\d+), missed by a CPU: (\d+)")


def assert_no_missed_shootdown(smp_output, what):
    """/smp's counters (they cover the boot lines a screen-only machine
    never shows): none missed; returns how many shootdowns were sent."""
    stats = TLB_STATS.search(smp_output)
    assert stats, f"{what}: /smp shows no TLB shootdown counters: {smp_output[-400:]!r}"
    assert stats.group(2) == "0", f"{what}: {stats.group(0)}"
    return int(stats.group(1))


def assert_alive(vm, what):
    """The shell still answers and nothing panicked."""
    out = vm.command("/echo still alive")
    assert out.rstrip().endswith("still alive"), f"after {what}: /echo gave {out[-200:]!r}"
    assert_no_panic(vm, what)


def assert_halted(vm, what, settle=1.5):
    """After a fault: the shell no longer answers and QEMU still runs."""
    try:
        vm.send("/echo after-the-fault\r")
    except OSError:
        pass  # QEMU has gone: said below
    time.sleep(settle)
    assert vm.proc.poll() is None, \
        f"{what}: QEMU exited (exit status {vm.proc.returncode}: a triple fault or a reboot) instead of halting"
    assert "\nafter-the-fault" not in vm.text(), f"{what}: the shell kept running after the dump"


def expect_fault_dump(vm, words, what, timeout=60, settle=0.5):
    """Waits for the KERNEL PANIC dump; it must match every regex in words
    and show the registers, RIP with its symbol. Returns the whole output."""
    vm.expect(PANIC_MARKER, timeout=timeout, allow_panic=True)
    time.sleep(settle)
    dump = vm.text()
    for word in words:
        assert re.search(word, dump), f"{what}: dump lacks {word!r}:\n{dump[-2500:]}"
    assert re.search(r"RIP 0x[0-9a-f]+ \S+", dump) and "RSP" in dump, f"{what}: no registers:\n{dump[-2500:]}"
    return dump


def expect_halting_fault(vm, command, words, timeout=60):
    """Types command (one that faults), checks the dump, then the halt."""
    vm.send(command + "\r")
    expect_fault_dump(vm, words, command, timeout)
    assert_halted(vm, command)
