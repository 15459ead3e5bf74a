"""cases_smp.py - QEMU cases for SMP: every processor of -smp N comes online,
the worker pool computes a checked parallel sum on all of them, and a fault
on an application processor gives the full dump and halts every CPU.
The boot.cfg hooks smp_test=1 / smp_fault=KIND (kernel/main.c) drive them.
No case may show a CPU that missed a TLB shootdown."""
import re

from checks import assert_halted, assert_no_missed_shootdown, assert_tlb_flushed, expect_fault_dump

BASE_CFG = "ramdisk=ramdisk.tar\nmodel=stories260K.bin\ntokenizer=tok512.bin\n"
REPORT = re.compile(rb"smp test: (\S+): (\d+) workers, .*round trip (\d+) ns")
PAY_OFF = re.compile(r"smp: (\d+) of (\d+) workers pay off \(([0-9.]+)x the throughput of one")
SMP_CMD = re.compile(r"workers: (\d+), (\d+) of them in use")


def smp_image(ctx, name, extra):
    return ctx.image(name, [ctx.model("stories260K.bin"), ctx.model("tok512.bin")], BASE_CFG + extra)


def check_workers(ctx, smp):
    img = smp_image(ctx, "smp-test", "smp_test=1\n")
    with ctx.boot(img, smp=smp) as vm:
        out = vm.expect(REPORT, timeout=120)
        if smp > 1:
            assert re.search(rf"smp: {smp} of {smp} processors online", out), \
                f"-smp {smp}: not all processors online:\n{out[-2000:]}"
            assert "did not start" not in out, f"-smp {smp}: an AP did not start:\n{out[-2000:]}"
        m = REPORT.search(out.encode())
        assert m.group(1) == b"ok", f"-smp {smp}: worker self-test failed: {m.group(0)!r}"
        assert int(m.group(2)) == smp, f"-smp {smp}: {m.group(2)} workers"
        print(f"  -smp {smp}: workers_run round trip {int(m.group(3))} ns")
        if smp > 1:
            # How many pay off depends on the host's free cores; the count and
            # its measured gain must be sane, and /smp must report the same pool.
            pay = PAY_OFF.search(out)
            assert pay, f"-smp {smp}: no 'workers pay off' line:\n{out[-2000:]}"
            useful, total, gain = int(pay.group(1)), int(pay.group(2)), float(pay.group(3))
            assert total == smp and 1 <= useful <= smp, f"-smp {smp}: {pay.group(0)}"
            assert (useful == 1) == (gain == 1.0) and gain <= useful * 1.2, f"-smp {smp}: {pay.group(0)}"
            print(f"  -smp {smp}: {pay.group(0)}")
        vm.wait_prompt(timeout=60)
        if smp > 1:
            out = vm.command("/smp")
            shown = SMP_CMD.search(out)
            assert shown and int(shown.group(1)) == smp and 1 <= int(shown.group(2)) <= smp, \
                f"/smp: {shown.group(0) if shown else 'no workers line'}"
            print(f"  -smp {smp}: {assert_no_missed_shootdown(out, f'-smp {smp}')} TLB shootdowns, none missed")
        out = vm.command("/echo still alive")
        assert "still alive" in out, f"shell dead after the worker test: {out!r}"
        assert_tlb_flushed(vm.text(), f"-smp {smp}")


def test_smp1_workers(ctx):
    check_workers(ctx, 1)


def test_smp2_workers(ctx):
    check_workers(ctx, 2)


def test_smp4_workers(ctx):
    check_workers(ctx, 4)


def test_smp_fault_on_ap_halts_all(ctx):
    img = smp_image(ctx, "smp-fault", "smp_fault=pf\n")
    with ctx.boot(img, smp=2) as vm:
        expect_fault_dump(vm, [r"Page Fault", r"debug_fault", r"workers_ap_loop", r"ap_main"], "the AP fault",
                          timeout=120, settle=1)
        assert_halted(vm, "the AP fault")
        assert_tlb_flushed(vm.text(), "the AP fault")
        regs = vm.monitor_command("info registers -a")
        halted = re.findall(r"HLT=(\d)", regs)
        assert halted == ["1", "1"], f"not every CPU halted after the AP fault: HLT={halted}"


def test_smp_faults_on_all_cpus_one_dump(ctx):
    """Every CPU faults at once: one CPU prints its dump, the others halt
    without a word (fatal_depth is atomic), and every CPU ends halted."""
    img = smp_image(ctx, "smp-fault-all", "smp_fault_all=ud\n")
    with ctx.boot(img, smp=4) as vm:
        expect_fault_dump(vm, [r"Invalid Opcode", r"debug_fault"], "the simultaneous faults", timeout=120, settle=2)
        assert_halted(vm, "the simultaneous faults")
        out = vm.text()
        assert_tlb_flushed(out, "the simultaneous faults")
        dumps, panics = out.count("*** EXCEPTION"), out.count("KERNEL PANIC: system halted")
        assert dumps == 1 and panics == 1 and "nested" not in out, \
            f"{dumps} dumps and {panics} panic lines (want one of each):\n{out[-3000:]}"
        regs = vm.monitor_command("info registers -a")
        halted = re.findall(r"HLT=(\d)", regs)
        assert halted == ["1"] * 4, f"not every CPU halted: HLT={halted}"


CASES = [
    test_smp1_workers,
    test_smp2_workers,
    test_smp4_workers,
    test_smp_fault_on_ap_halts_all,
    test_smp_faults_on_all_cpus_one_dump,
]
