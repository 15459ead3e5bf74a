"""cases_keymap.py - keyboard layouts in QEMU: for each layout, keys sent
with the monitor's sendkey (QEMU names the physical US-position keys) type
that layout's own characters at the prompt, over PS/2 and over a USB
keyboard alike, and the model is given the same UTF-8 bytes (/bytes shows
them). The expected characters are the layouts' published charts (what a
German, French... keyboard prints on each key), written here by hand, so
they are independent of the tables the kernel generates from xkb-data.
One boot per keyboard kind; the PS/2 one starts in de from boot.cfg."""
import os
import re
import time

import screen
from cases_usb import NO_PS2, KBD_ROOT, KEYBOARD_READY, READY

BACKSPACE = ("backspace", None)  # deletes the last character typed

# layout -> [(sendkey names, one per key press, the text they type)]
LAYOUT_KEYS = {
    "us": [("shift-2", "@"), ("shift-6", "^"), ("bracket_left", "["), ("apostrophe", "'"),
           ("shift-grave_accent", "~")],
    "us-intl": [("alt_r-q", "ä"), ("apostrophe e", "é"), ("shift-6 e", "ê"), ("grave_accent a", "à"),
                ("alt_r-5", "€"), ("shift-apostrophe u", "ü"), ("apostrophe spc", "'"), ("shift-6 shift-o", "Ô")],
    "uk": [("shift-2", '"'), ("shift-3", "£"), ("shift-apostrophe", "@"), ("backslash", "#"),
           ("less", "\\"), ("alt_r-4", "€")],
    "de": [("y z", "zy"), ("semicolon", "ö"), ("apostrophe", "ä"), ("bracket_left", "ü"), ("minus", "ß"),
           ("alt_r-q", "@"), ("alt_r-e", "€"), ("grave_accent e", "ê"), ("grave_accent o", "ô"), BACKSPACE,
           ("equal e", "é"), ("shift-equal a", "à"), ("less", "<"), ("shift-3", "§"),
           ("caps_lock apostrophe caps_lock", "Ä"), ("shift-2", '"')],
    "fr": [("q a w z", "aqzw"), ("semicolon", "m"), ("2", "é"), ("7", "è"), ("9", "ç"), ("0", "à"),
           ("shift-1", "1"), ("alt_r-0", "@"), ("alt_r-e", "€"), ("bracket_left e", "ê"),
           ("shift-bracket_left e", "ë"), ("apostrophe", "ù")],
    "es": [("semicolon", "ñ"), ("shift-semicolon", "Ñ"), ("alt_r-2", "@"), ("alt_r-e", "€"),
           ("apostrophe a", "á"), ("bracket_left e", "è"), ("shift-apostrophe u", "ü"), ("equal", "¡"),
           ("minus", "'"), ("shift-minus", "?"), ("backslash", "ç")],
    "it": [("bracket_left", "è"), ("shift-bracket_left", "é"), ("semicolon", "ò"), ("apostrophe", "à"),
           ("backslash", "ù"), ("equal", "ì"), ("alt_r-semicolon", "@"), ("alt_r-e", "€"), ("shift-3", "£")],
    "pt": [("semicolon", "ç"), ("equal", "«"), ("bracket_right a", "á"), ("shift-bracket_right a", "à"),
           ("backslash a", "ã"), ("shift-backslash o", "ô"), ("alt_r-2", "@"), ("alt_r-e", "€")],
    "se": [("bracket_left", "å"), ("semicolon", "ö"), ("apostrophe", "ä"), ("alt_r-2", "@"), ("alt_r-e", "€"),
           ("equal e", "é"), ("bracket_right u", "ü"), ("shift-bracket_right o", "ô")],
    "fi": [("bracket_left", "å"), ("semicolon", "ö"), ("apostrophe", "ä"), ("alt_r-2", "@"), ("alt_r-e", "€")],
    "no": [("semicolon", "ø"), ("apostrophe", "æ"), ("bracket_left", "å"), ("alt_r-2", "@"), ("alt_r-e", "€"),
           ("bracket_right e", "ë")],
    "dk": [("semicolon", "æ"), ("apostrophe", "ø"), ("bracket_left", "å"), ("alt_r-2", "@"), ("alt_r-e", "€"),
           ("equal e", "é")],
    "ch": [("y z", "zy"), ("semicolon", "ö"), ("apostrophe", "ä"), ("bracket_left", "ü"), ("alt_r-2", "@"),
           ("alt_r-e", "€"), ("equal e", "ê"), ("minus", "'"), ("bracket_right u", "ü")],
    "nordic": [("bracket_left", "å"), ("semicolon", "ö")],
}


def type_layout(vm, keys):
    """Sends the keys, each group once the previous one's echo arrived (a
    busy host must not overflow QEMU's 16-event keyboard queue); returns the
    text they should have typed."""
    text = ""
    for names, typed in keys:
        for name in names.split():
            reply = vm.monitor_command(f"sendkey {name}")
            assert "nvalid" not in reply and "nknown" not in reply, f"sendkey {name}: {reply!r}"
        vm.expect("\x1b[K" if typed is None else typed, timeout=20)
        text = text[:-1] if typed is None else text + typed
    vm.monitor_command("sendkey ret")
    return text


def screen_line(echo):
    """What a terminal shows for the echoed bytes: the line editor moves
    back with \b and erases with a space and ESC[K."""
    cells, col = [], 0
    for part in re.split(r"(\x1b\[K|\x08)", echo.rstrip("\r\n")):
        if part == "\x08":
            col -= 1
        elif part == "\x1b[K":
            del cells[col:]
        else:
            for ch in part:
                cells[col:col + 1] = [ch]
                col += 1
    return "".join(cells).rstrip(" ")


def check_screen(vm, layout, text):
    """The framebuffer console draws the typed line (Unifont glyphs)."""
    path = os.path.join(vm.dir, f"keymap-{layout}.ppm")
    vm.monitor_command(f"screendump {path}")
    time.sleep(0.5)
    lines = screen.read_text(path)
    assert f"> {text}" in lines, f"{layout}: the screen does not show '> {text}':\n" + "\n".join(lines)


def check_layout(vm, layout, set_it=True, on_screen=False):
    if set_it:
        out = vm.command(f"/set keymap {layout}")
        assert f"set: keymap {layout if layout != 'nordic' else 'se'}" in out, f"/set keymap {layout}: {out!r}"
    start = vm.cursor
    text = type_layout(vm, LAYOUT_KEYS[layout])
    # The echoed line, exactly: "> " + the text + newline (then the answer).
    vm.expect(re.compile(rb"\n"), timeout=20)
    echoed = vm.text(start, vm.cursor)
    assert screen_line(echoed) == text, f"{layout}: the prompt shows {echoed!r}, the layout types {text!r}"
    vm.wait_prompt(timeout=60)
    out = vm.command("/bytes")
    want = text.encode("utf-8")
    m = re.search(r"last prompt: (\d+) bytes:([0-9a-f ]*)", out)
    assert m, f"{layout}: /bytes printed {out!r}"
    got = bytes.fromhex(m.group(2).replace(" ", ""))
    assert got == want, f"{layout}: the model was given {got!r}, the screen showed {want!r}"
    if on_screen:
        check_screen(vm, layout, text)
    print(f"  {layout}: {text}")


def keymap_image(ctx, keymap):
    cfg = "model=stories260K.bin\ntokenizer=tok512.bin\n" + (f"keymap={keymap}\n" if keymap else "")
    return ctx.image(f"keymap-{keymap or 'none'}", [ctx.model("stories260K.bin"), ctx.model("tok512.bin")], cfg)


def run_layouts(vm, boot_layout=None):
    """Every layout in turn; boot_layout (set by boot.cfg) first, without /set."""
    vm.command("/set steps 1")  # the answers only have to end
    order = ([boot_layout] if boot_layout else []) + [k for k in LAYOUT_KEYS if k != boot_layout]
    for i, layout in enumerate(order):
        check_layout(vm, layout, set_it=layout != boot_layout, on_screen=i == 0 and boot_layout is not None)
    out = vm.command("/set keymap xx")
    assert "no keyboard layout 'xx'" in out, f"/set keymap xx: {out!r}"
    out = vm.command("/help")
    for layout in LAYOUT_KEYS:
        assert re.search(rf"\n  {re.escape(layout)} ", out), f"/help does not list {layout}: {out!r}"


def test_keymap_ps2(ctx):
    # boot.cfg keymap=de: the first layout is typed without /set keymap.
    with ctx.boot(keymap_image(ctx, "de")) as vm:
        vm.expect("keyboard: layout de", timeout=60)
        vm.wait_prompt(timeout=20)
        run_layouts(vm, "de")


def test_keymap_usb(ctx):
    with ctx.boot(keymap_image(ctx, None), extra_args=NO_PS2 + KBD_ROOT) as vm:
        vm.expect(READY, timeout=60)
        vm.wait_prompt(timeout=20)
        vm.expect(KEYBOARD_READY, timeout=30)
        run_layouts(vm)


CASES = [
    test_keymap_ps2,
    test_keymap_usb,
]
