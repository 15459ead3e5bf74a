#!/usr/bin/env python3
"""gen_keymap_tables.py - the console's keyboard layouts, computed at build
time by libxkbcommon (the X/Wayland keymap compiler, through ctypes) from the
xkb-data layout definitions, so no layout is typed in by hand.

For every layout, every physical key (USB HID usage 0x04-0x67, which both
keyboard drivers translate to) and every combination of Shift, AltGr, Caps
Lock and Num Lock, libxkbcommon says which keysym the key gives; that becomes
a code point, a dead key (an index into the combining marks below) or one of
the console's special keys. What a dead key does to the next character comes
from libxkbcommon's Compose support with X's en_US.UTF-8 Compose table
(libx11-data), the table X and Wayland desktops use.

usage: gen_keymap_tables.py OUT_C
"""
import ctypes
import sys

# (console name, xkb layout, xkb variant, description)
LAYOUTS = [
    ("us", "us", "", "English (US)"),
    ("us-intl", "us", "intl", "English (US, international, dead keys)"),
    ("uk", "gb", "", "English (UK)"),
    ("de", "de", "", "German"),
    ("fr", "fr", "", "French (AZERTY)"),
    ("es", "es", "", "Spanish"),
    ("it", "it", "", "Italian"),
    ("pt", "pt", "", "Portuguese"),
    ("se", "se", "", "Swedish"),
    ("fi", "fi", "", "Finnish"),
    ("no", "no", "", "Norwegian"),
    ("dk", "dk", "", "Danish"),
    ("ch", "ch", "", "Swiss German"),
]

# HID usage -> Linux evdev key code (xkb keycode = evdev + 8), the standard
# mapping of the HID Usage Tables' keyboard page (0 = no key). Usage 0x32
# (non-US #) is the same physical key as 0x31 on ISO boards.
USAGE_TO_EVDEV = {
    0x04: 30, 0x05: 48, 0x06: 46, 0x07: 32, 0x08: 18, 0x09: 33, 0x0A: 34, 0x0B: 35,
    0x0C: 23, 0x0D: 36, 0x0E: 37, 0x0F: 38, 0x10: 50, 0x11: 49, 0x12: 24, 0x13: 25,
    0x14: 16, 0x15: 19, 0x16: 31, 0x17: 20, 0x18: 22, 0x19: 47, 0x1A: 17, 0x1B: 45,
    0x1C: 21, 0x1D: 44, 0x1E: 2, 0x1F: 3, 0x20: 4, 0x21: 5, 0x22: 6, 0x23: 7,
    0x24: 8, 0x25: 9, 0x26: 10, 0x27: 11, 0x28: 28, 0x29: 1, 0x2A: 14, 0x2B: 15,
    0x2C: 57, 0x2D: 12, 0x2E: 13, 0x2F: 26, 0x30: 27, 0x31: 43, 0x32: 43, 0x33: 39,
    0x34: 40, 0x35: 41, 0x36: 51, 0x37: 52, 0x38: 53,
    0x49: 110, 0x4A: 102, 0x4B: 104, 0x4C: 111, 0x4D: 107, 0x4E: 109, 0x4F: 106,
    0x50: 105, 0x51: 108, 0x52: 103, 0x54: 98, 0x55: 55, 0x56: 74, 0x57: 78,
    0x58: 96, 0x59: 79, 0x5A: 80, 0x5B: 81, 0x5C: 75, 0x5D: 76, 0x5E: 77, 0x5F: 71,
    0x60: 72, 0x61: 73, 0x62: 82, 0x63: 83, 0x64: 86, 0x67: 117,
}
USAGE_COUNT = 0x68
EVDEV_LSHIFT, EVDEV_RALT, EVDEV_CAPS, EVDEV_NUMLOCK = 42, 100, 58, 69

# Keysyms that are console special keys (kernel/console/console.h names).
SPECIAL_KEYSYMS = {
    0xFF50: "KEY_HOME", 0xFF51: "KEY_LEFT", 0xFF52: "KEY_UP", 0xFF53: "KEY_RIGHT",
    0xFF54: "KEY_DOWN", 0xFF55: "KEY_PAGE_UP", 0xFF56: "KEY_PAGE_DOWN", 0xFF57: "KEY_END",
    0xFF95: "KEY_HOME", 0xFF96: "KEY_LEFT", 0xFF97: "KEY_UP", 0xFF98: "KEY_RIGHT",
    0xFF99: "KEY_DOWN", 0xFF9A: "KEY_PAGE_UP", 0xFF9B: "KEY_PAGE_DOWN", 0xFF9C: "KEY_END",
    0xFF9F: "KEY_DELETE", 0xFFFF: "KEY_DELETE",
}

class RuleNames(ctypes.Structure):
    _fields_ = [(n, ctypes.c_char_p) for n in ("rules", "model", "layout", "variant", "options")]


def load_xkb():
    try:
        xkb = ctypes.CDLL("libxkbcommon.so.0")
    except OSError:
        sys.exit("gen_keymap_tables: libxkbcommon.so.0 not found (sh tools/install-deps.sh: libxkbcommon0, xkb-data)")
    xkb.xkb_context_new.restype = ctypes.c_void_p
    xkb.xkb_keymap_new_from_names.restype = ctypes.c_void_p
    xkb.xkb_keymap_new_from_names.argtypes = [ctypes.c_void_p, ctypes.POINTER(RuleNames), ctypes.c_int]
    xkb.xkb_state_new.restype = ctypes.c_void_p
    xkb.xkb_state_new.argtypes = [ctypes.c_void_p]
    xkb.xkb_state_unref.argtypes = [ctypes.c_void_p]
    xkb.xkb_state_update_key.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int]
    xkb.xkb_state_key_get_one_sym.restype = ctypes.c_uint32
    xkb.xkb_state_key_get_one_sym.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    xkb.xkb_keysym_to_utf32.restype = ctypes.c_uint32
    xkb.xkb_keysym_to_utf32.argtypes = [ctypes.c_uint32]
    xkb.xkb_keysym_get_name.argtypes = [ctypes.c_uint32, ctypes.c_char_p, ctypes.c_size_t]
    xkb.xkb_utf32_to_keysym.restype = ctypes.c_uint32
    xkb.xkb_utf32_to_keysym.argtypes = [ctypes.c_uint32]
    xkb.xkb_compose_table_new_from_locale.restype = ctypes.c_void_p
    xkb.xkb_compose_table_new_from_locale.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    xkb.xkb_compose_state_new.restype = ctypes.c_void_p
    xkb.xkb_compose_state_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    xkb.xkb_compose_state_feed.argtypes = [ctypes.c_void_p, ctypes.c_uint32]
    xkb.xkb_compose_state_reset.argtypes = [ctypes.c_void_p]
    xkb.xkb_compose_state_get_status.argtypes = [ctypes.c_void_p]
    xkb.xkb_compose_state_get_utf8.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    return xkb


def keysym_name(xkb, sym):
    buf = ctypes.create_string_buffer(64)
    xkb.xkb_keysym_get_name(sym, buf, 64)
    return buf.value.decode()


def state_for(xkb, keymap, shift, altgr, caps, num):
    """A fresh state with the modifier keys held and the locks toggled on."""
    state = xkb.xkb_state_new(keymap)
    down, up = 1, 0
    for lock, code in ((caps, EVDEV_CAPS), (num, EVDEV_NUMLOCK)):
        if lock:
            xkb.xkb_state_update_key(state, code + 8, down)
            xkb.xkb_state_update_key(state, code + 8, up)
    if shift:
        xkb.xkb_state_update_key(state, EVDEV_LSHIFT + 8, down)
    if altgr:
        xkb.xkb_state_update_key(state, EVDEV_RALT + 8, down)
    return state


def entry_for(xkb, sym, dead_keys):
    """The C initialiser of one table entry for keysym `sym`; dead keys are
    numbered in dead_keys (keysym -> index) as they are met."""
    if sym == 0:
        return "0"
    if sym in SPECIAL_KEYSYMS:
        return f"KEYMAP_SPECIAL | {SPECIAL_KEYSYMS[sym]}"
    name = keysym_name(xkb, sym)
    if name.startswith("dead_"):
        index = dead_keys.setdefault(sym, len(dead_keys))
        return f"KEYMAP_DEAD | {index}"
    cp = xkb.xkb_keysym_to_utf32(sym)
    if cp == 0x0D:
        cp = 0x0A  # Return and KP_Enter: the console's Enter is '\n'
    return f"0x{cp:x}" if cp else "0"


def layout_table(xkb, context, layout, variant, dead_keys, chars):
    names = RuleNames(b"evdev", b"pc105", layout.encode(), variant.encode(), b"")
    keymap = xkb.xkb_keymap_new_from_names(context, ctypes.byref(names), 0)
    if not keymap:
        sys.exit(f"gen_keymap_tables: libxkbcommon cannot compile layout {layout}({variant})")
    rows = []
    for usage in range(USAGE_COUNT):
        evdev = USAGE_TO_EVDEV.get(usage)
        cells = []
        for mods in range(16):
            if not evdev:
                cells.append("0")
                continue
            state = state_for(xkb, keymap, mods & 1, mods & 2, mods & 4, mods & 8)
            sym = xkb.xkb_state_key_get_one_sym(state, evdev + 8)
            cells.append(entry_for(xkb, sym, dead_keys))
            if xkb.xkb_keysym_to_utf32(sym) >= 0x20:
                chars.add(xkb.xkb_keysym_to_utf32(sym))
            xkb.xkb_state_unref(state)
        rows.append("        {" + ", ".join(cells) + "},")
    return rows


def compose(xkb, compose_state, dead, cp):
    """The one character Compose makes of dead key `dead` then character
    `cp`, or 0."""
    xkb.xkb_compose_state_reset(compose_state)
    xkb.xkb_compose_state_feed(compose_state, dead)
    xkb.xkb_compose_state_feed(compose_state, xkb.xkb_utf32_to_keysym(cp))
    if xkb.xkb_compose_state_get_status(compose_state) != 2:  # XKB_COMPOSE_COMPOSED
        return 0
    buf = ctypes.create_string_buffer(64)
    xkb.xkb_compose_state_get_utf8(compose_state, buf, 64)
    text = buf.value.decode("utf-8")
    return ord(text) if len(text) == 1 and ord(text) <= 0xFFFF else 0


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen_keymap_tables.py OUT_C")
    xkb = load_xkb()
    context = xkb.xkb_context_new(0)
    lines = [
        "/* Generated by tools/gen_keymap_tables.py from xkb-data through libxkbcommon: do not edit. */",
        '#include "kernel/console/keymap_tables.h"',
        '#include "kernel/console/console.h"',
        "",
        "const struct keymap_layout keymap_layouts[] = {",
    ]
    dead_keys, chars = {}, set()
    for name, layout, variant, description in LAYOUTS:
        lines.append(f'    {{"{name}", "{description}", {{')
        lines += layout_table(xkb, context, layout, variant, dead_keys, chars)
        lines.append("    }},")
    lines += ["};", f"const int keymap_layout_count = {len(LAYOUTS)};", ""]
    table = xkb.xkb_compose_table_new_from_locale(context, b"en_US.UTF-8", 0)
    if not table:
        sys.exit("gen_keymap_tables: no Compose table for en_US.UTF-8 (install libx11-data)")
    compose_state = xkb.xkb_compose_state_new(table, 0)
    # A dead key before a space gives its accent alone.
    lines.append("const struct keymap_dead keymap_dead_keys[] = {")
    for sym in dead_keys:
        spacing = compose(xkb, compose_state, sym, 0x20)
        lines.append(f'    {{"{keysym_name(xkb, sym)[5:]}", 0x{spacing:x}}},')
    lines += ["};", f"const int keymap_dead_key_count = {len(dead_keys)};", ""]
    # Every dead key before every character some layout types (sorted).
    comps = [(i, c, compose(xkb, compose_state, sym, c)) for sym, i in dead_keys.items() for c in sorted(chars)]
    comps = [c for c in comps if c[2] and c[1] <= 0xFFFF]
    lines.append("const struct keymap_composition keymap_compositions[] = {")
    lines += [f"    {{{i}, 0x{base:x}, 0x{composed:x}}}," for i, base, composed in comps]
    lines += ["};", f"const int keymap_composition_count = {len(comps)};", ""]
    with open(sys.argv[1], "w") as f:
        f.write("\n".join(lines))


if __name__ == "__main__":
    main()
