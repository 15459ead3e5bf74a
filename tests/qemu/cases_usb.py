"""cases_usb.py - QEMU cases for PCI enumeration, the xHCI driver and the USB
HID boot keyboard: keys typed with the monitor's sendkey reach the shell
through a keyboard on the root port, behind a hub, next to the USB stick
the image boots from, and plugged in (or unplugged and replugged, or behind
a hub added later, and that hub removed and put back) after boot with the
monitor's device_add/device_del. i8042=off removes the PS/2 controller so a
key can only arrive over USB. With boot.cfg debug_alloc=high, DMA pages stay
below 4 GiB on a 32-bit controller and go above it on a 64-bit one."""
import re
import time

READY = re.compile(rb"kernel: ready in ([0-9.]+) ms")
KEYBOARD_READY = re.compile(rb"usb: keyboard ready")
NO_PS2 = ["-machine", "q35,i8042=off"]
KBD_ROOT = ["-device", "qemu-xhci,id=xhci", "-device", "usb-kbd,bus=xhci.0"]
KBD_HUB = ["-device", "qemu-xhci,id=xhci", "-device", "usb-hub,bus=xhci.0,port=1",
           "-device", "usb-kbd,bus=xhci.0,port=1.1"]


def boot_with_keyboard(ctx, extra, image=None, **kw):
    vm = ctx.boot(image, extra_args=NO_PS2 + extra, **kw)
    out = vm.expect(READY, timeout=60)
    ms = float(READY.search(out.encode()).group(1))
    vm.wait_prompt(timeout=20)
    vm.expect(KEYBOARD_READY, timeout=30)
    return vm, ms


def type_keys(vm, text):
    names = {" ": "spc", "/": "slash", "\n": "ret", "-": "minus", ".": "dot"}
    for ch in text:
        if ch.isupper():
            vm.monitor_command(f"sendkey shift-{ch.lower()}")
        else:
            vm.monitor_command(f"sendkey {names.get(ch, ch)}")


def typed_echo_answers(vm, word):
    type_keys(vm, f"/echo {word}\n")
    vm.expect(f"\n{word}", timeout=20)
    vm.wait_prompt(timeout=20)


def test_pci_lists_devices(ctx):
    with ctx.boot(extra_args=["-device", "qemu-xhci,id=xhci"]) as vm:
        vm.expect(READY, timeout=60)
        vm.wait_prompt(timeout=20)
        out = vm.command("/pci")
        assert re.search(r"8086:29c0 class 06\.00\.00", out), f"/pci misses the q35 host bridge: {out!r}"
        assert re.search(r"1b36:000d class 0c\.03\.30", out), f"/pci misses qemu-xhci: {out!r}"
        assert "ECAM" in out, f"/pci does not use ECAM on q35: {out!r}"


def test_usb_keyboard_root_port(ctx):
    vm, ms = boot_with_keyboard(ctx, KBD_ROOT)
    with vm:
        print(f"  kernel entry to prompt {ms:.1f} ms with xHCI + keyboard")
        typed_echo_answers(vm, "usb")
        # Shift, Ctrl-U (kills the line) and Backspace through the HID decoder.
        type_keys(vm, "/echo junk")
        vm.monitor_command("sendkey ctrl-u")
        type_keys(vm, "/echo Abx")
        vm.monitor_command("sendkey backspace")
        type_keys(vm, "c\n")
        out = vm.expect(re.compile(rb"\nAbc\r?\n"), timeout=20)
        assert "\nAbc" in out.replace("\r", ""), f"shift/Ctrl-U/backspace over USB: {out!r}"


def test_usb_keyboard_repeat(ctx):
    vm, _ = boot_with_keyboard(ctx, KBD_ROOT)
    with vm:
        type_keys(vm, "/echo ")
        vm.monitor_command("sendkey x 1000")    # held for 1 s: repeats after 500 ms
        type_keys(vm, "\n")
        out = vm.expect(re.compile(rb"\nx+\r?\n"), timeout=20)
        count = out.strip().split("\n")[-1].count("x")
        assert 3 <= count <= 40, f"{count} x from a 1 s key hold: {out!r}"
        print(f"  1 s hold gave {count} characters")


def test_usb_keyboard_behind_hub(ctx):
    vm, _ = boot_with_keyboard(ctx, KBD_HUB)
    with vm:
        out = vm.text()
        assert "usb: hub with" in out, f"no hub found: {out[-1500:]!r}"
        typed_echo_answers(vm, "hub")


def test_usb_keyboard_with_usb_stick_boot(ctx):
    vm, _ = boot_with_keyboard(ctx, ["-device", "usb-kbd,bus=xhci.0"], usb_stick=True)
    with vm:
        typed_echo_answers(vm, "stick")
        out = vm.command("/ls")
        assert "stories260K.bin" in out, f"/ls after USB boot: {out!r}"


XHCI_ONLY = ["-device", "qemu-xhci,id=xhci"]
KEYBOARD_GONE = re.compile(rb"usb: keyboard on slot \d+ removed")


def boot_without_keyboard(ctx, extra=(), image=None):
    vm = ctx.boot(image, extra_args=NO_PS2 + XHCI_ONLY + list(extra))
    vm.expect(READY, timeout=60)
    vm.wait_prompt(timeout=20)
    vm.expect("usb: enumeration done", timeout=30)
    return vm


def monitor_ok(vm, command):
    out = vm.monitor_command(command)
    assert "Error" not in out and "error" not in out, f"monitor {command!r}: {out!r}"


def plug_keyboard(vm, device_args, word):
    """device_add a keyboard, wait for the kernel to bind it, type on it."""
    monitor_ok(vm, f"device_add usb-kbd,bus=xhci.0,{device_args}")
    vm.expect(KEYBOARD_READY, timeout=30)
    typed_echo_answers(vm, word)


def unplug_keyboard(vm, device_id):
    monitor_ok(vm, f"device_del {device_id}")
    vm.expect(KEYBOARD_GONE, timeout=30)


def test_usb_keyboard_hotplug_after_boot(ctx):
    """No keyboard at boot; one added with device_add works, is removed with
    device_del, and works again when added back."""
    with boot_without_keyboard(ctx) as vm:
        assert "usb: keyboard ready" not in vm.text(), "a keyboard was found before one was plugged in"
        plug_keyboard(vm, "id=kbd1", "plugged")
        unplug_keyboard(vm, "kbd1")
        plug_keyboard(vm, "id=kbd1", "replugged")


HUB_GONE = re.compile(rb"usb: device on port \d+ \(slot \d+\) unplugged")  # a root port: the hub


def test_usb_keyboard_hotplug_behind_hub(ctx):
    """A hub added after boot, then a keyboard plugged into its port 1, then
    the keyboard moved to port 3 of the same hub; then the hub itself removed
    with the keyboard behind it (both detached, the shell still answers), and
    a hub and keyboard plugged back and typed on."""
    with boot_without_keyboard(ctx) as vm:
        monitor_ok(vm, "device_add usb-hub,bus=xhci.0,port=2,id=hub1")
        vm.expect("usb: hub with", timeout=30)
        plug_keyboard(vm, "port=2.1,id=kbd1", "hubbed")
        unplug_keyboard(vm, "kbd1")
        plug_keyboard(vm, "port=2.3,id=kbd2", "moved")
        monitor_ok(vm, "device_del hub1")
        vm.expect(HUB_GONE, timeout=30)
        vm.expect(KEYBOARD_GONE, timeout=10)  # printed as the hub's children are detached
        out = vm.command("/echo alive")
        assert "alive" in out, f"the shell after the hub went away: {out!r}"
        monitor_ok(vm, "device_add usb-hub,bus=xhci.0,port=2,id=hub2")
        vm.expect("usb: hub with", timeout=30)
        plug_keyboard(vm, "port=2.1,id=kbd3", "back")


DMA_HIGHEST = re.compile(r"usb: enumeration done at uptime \d+ ms, DMA pages up to 0x([0-9a-f]+)")
XHCI_DMA_HIGHEST = re.compile(r"usb: xHCI \S+ running, .*DMA pages up to 0x([0-9a-f]+)")


def dma_highest(vm):
    """Highest DMA byte of the controller's own pages (at start) and of every
    page after the boot-time enumeration (device contexts, rings, buffers)."""
    deadline = time.monotonic() + 30  # the line may come before or after "keyboard ready"
    while not DMA_HIGHEST.search(text := vm.text()) and time.monotonic() < deadline:
        time.sleep(0.2)
    start, enumerated = XHCI_DMA_HIGHEST.search(text), DMA_HIGHEST.search(text)
    assert start and enumerated, f"no DMA figures in the log: {text[-2000:]!r}"
    print(f"  highest DMA byte: 0x{start.group(1)} at controller start, 0x{enumerated.group(1)} after enumeration")
    return int(start.group(1), 16), int(enumerated.group(1), 16)


def boot_dma(ctx, name, cfg_extra):
    """A keyboard on the root port, 6 GiB of RAM (4 above 4 GiB), and
    boot.cfg debug_alloc=high: pages above 4 GiB are handed out first."""
    img = ctx.image(name, [ctx.model("stories260K.bin"), ctx.model("tok512.bin")],
                    "model=stories260K.bin\ntokenizer=tok512.bin\ndebug_alloc=high\n" + cfg_extra)
    return boot_with_keyboard(ctx, KBD_ROOT, image=img, memory="6G")[0]


def test_usb_keyboard_dma_below_4g(ctx):
    """boot.cfg xhci_dma32=1 treats the controller as AC64 = 0; with
    debug_alloc=high the allocator would hand out pages above 4 GiB first,
    yet every ring, context and buffer lies below 4 GiB, and the keyboard
    works."""
    with boot_dma(ctx, "usb-dma32", "xhci_dma32=1\n") as vm:
        text = vm.text()
        assert "xhci: 32-bit DMA only (forced by boot.cfg)" in text, text[-2000:]
        assert "page_alloc: debug: pages from 0x100000000 up are used first" in text, text[-2000:]
        typed_echo_answers(vm, "low")
        for highest in dma_highest(vm):
            assert highest < 1 << 32, f"a DMA page at 0x{highest:x}, above 4 GiB, on a 32-bit controller"


def test_usb_dma_above_4g_when_ac64(ctx):
    """The control for the case above: the same boot without xhci_dma32 (the
    controller has AC64) puts its pages above 4 GiB, so debug_alloc=high
    really moves them there, and the keyboard works from such pages."""
    with boot_dma(ctx, "usb-dma64", "") as vm:
        typed_echo_answers(vm, "high")
        for highest in dma_highest(vm):
            assert highest >= 1 << 32, f"DMA pages only up to 0x{highest:x} with debug_alloc=high and AC64"


def test_usb_ctrl_c_stops_a_prefill(ctx):
    # Ctrl-C from the USB keyboard (no PS/2 controller) stops a prompt's
    # prefill within 0.5 s, like the serial one (cases_llm.py).
    from cases_llm import set_all, stop_inside_prefill
    vm, _ = boot_with_keyboard(ctx, KBD_ROOT)
    with vm:
        set_all(vm, temp=0, steps=0)
        latency, _, m = stop_inside_prefill(vm, lambda: vm.monitor_command("sendkey ctrl-c"))
        print(f"  USB: Ctrl-C stopped the prefill in {latency * 1000:.0f} ms ({m.group(0)})")
        assert m.group(5) == "user" and m.group(1) == "0", f"USB Ctrl-C: {m.group(0)}"
        assert latency < 0.5, f"USB Ctrl-C took {latency:.2f} s to stop the prefill"


CASES = [
    test_pci_lists_devices,
    test_usb_keyboard_root_port,
    test_usb_ctrl_c_stops_a_prefill,
    test_usb_keyboard_repeat,
    test_usb_keyboard_behind_hub,
    test_usb_keyboard_with_usb_stick_boot,
    test_usb_keyboard_hotplug_after_boot,
    test_usb_keyboard_hotplug_behind_hub,
    test_usb_keyboard_dma_below_4g,
    test_usb_dma_above_4g_when_ac64,
]
