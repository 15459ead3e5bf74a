"""cases_hardware.py - QEMU cases for the firmware and CPU variations real
machines have: no HPET (the TSC calibrated against the ACPI PM timer), the
x2APIC forced by boot.cfg, no serial port (the prompt read off the screen)
and the i440fx machine (no ECAM, no HPET in its tables... legacy PCI). Each
boot answers the golden greedy prompt where that is what the case proves."""
import re

from cases_boot import READY, check_uptime
from cases_llm import answer, golden, first_difference, set_all

TSC_LINE = re.compile(r"TSC (\d+) MHz \(([^)]*)\)")


def boot_ready(ctx, image=None, **kw):
    vm = ctx.boot(image, **kw)
    vm.expect(READY, timeout=60)
    vm.wait_prompt(timeout=30)
    return vm


def tsc_source(vm):
    m = TSC_LINE.search(vm.text())
    assert m, f"no TSC line in the boot log:\n{vm.tail()}"
    return int(m.group(1)), m.group(2)


def assert_golden_answer(ctx, vm, what):
    set_all(vm, temp=0, steps=200)
    text, _ = answer(vm, "Once upon a time")
    want = golden(ctx, "stories260K__once_upon_a_time.txt")
    assert text == want, f"{what}: {first_difference(text, want)}"


def test_hw_timer_without_hpet(ctx):
    """q35 with hpet=off: the TSC is calibrated against the ACPI PM timer,
    the log says so, and the clock agrees with the host's."""
    with boot_ready(ctx, extra_args=["-machine", "q35,hpet=off"]) as vm:
        mhz, source = tsc_source(vm)
        assert source.startswith("ACPI PM timer"), f"hpet=off: TSC source {source!r}"
        assert "HPET" not in source
        print(f"  TSC {mhz} MHz ({source})")
        check_uptime(vm)


CASES = [
    test_hw_timer_without_hpet,
]
