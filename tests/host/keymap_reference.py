#!/usr/bin/env python3
"""keymap_reference.py - what each console keyboard layout must type,
read straight from the xkb-data symbols files and X's Compose table, with
a parser of its own (the kernel's tables come from libxkbcommon instead).

Prints one check a line for tests/host/test_keymap.c:
    LAYOUT USAGE/MODS [USAGE/MODS...] = UTF8HEX
(usages and HID modifier bytes in hex; 39/00 is Caps Lock; an empty
UTF8HEX means the keys type nothing yet, as a dead key alone does).
Checked: every level of every key the layout's own section defines (the
keys that differ from the layout it includes), Caps Lock on its letters,
and each dead key followed by space and by the letters Compose composes.
Exits 2 when xkb-data or the Compose table is missing.

usage: keymap_reference.py [XKB_SYMBOLS_DIR [COMPOSE_FILE]]
"""
import os
import re
import sys

SYMBOLS = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/X11/xkb/symbols"
COMPOSE = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/X11/locale/en_US.UTF-8/Compose"

# console name -> (symbols file, section; None: the file's default section)
LAYOUTS = {
    "us": ("us", None), "us-intl": ("us", "intl"), "uk": ("gb", None), "de": ("de", None),
    "fr": ("fr", None), "es": ("es", None), "it": ("it", None), "pt": ("pt", None),
    "se": ("se", None), "fi": ("fi", None), "no": ("no", None), "dk": ("dk", None),
    "ch": ("ch", None), "nordic": ("se", None),
}

# xkb key names of the main block -> USB HID usages (HID Usage Tables,
# keyboard page), row by row as printed on a US keyboard.
KEY_USAGE = {"TLDE": 0x35, "BKSL": 0x31, "LSGT": 0x64, "SPCE": 0x2C}
for i, u in enumerate([0x1E, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2D, 0x2E]):
    KEY_USAGE[f"AE{i + 1:02d}"] = u
for i, u in enumerate([0x14, 0x1A, 0x08, 0x15, 0x17, 0x1C, 0x18, 0x0C, 0x12, 0x13, 0x2F, 0x30]):
    KEY_USAGE[f"AD{i + 1:02d}"] = u
for i, u in enumerate([0x04, 0x16, 0x07, 0x09, 0x0A, 0x0B, 0x0D, 0x0E, 0x0F, 0x33, 0x34]):
    KEY_USAGE[f"AC{i + 1:02d}"] = u
for i, u in enumerate([0x1D, 0x1B, 0x06, 0x19, 0x05, 0x11, 0x10, 0x36, 0x37, 0x38]):
    KEY_USAGE[f"AB{i + 1:02d}"] = u

SHIFT, ALTGR = 0x02, 0x40  # HID modifier bits: left Shift, right Alt
LEVEL_MODS = [0, SHIFT, ALTGR, SHIFT | ALTGR]
CAPS = "39/00"


def read_sections(name, cache={}):
    """{section: (body, is_default)} of one symbols file."""
    if name not in cache:
        with open(os.path.join(SYMBOLS, name), encoding="utf-8") as f:
            text = re.sub(r"//[^\n]*", "", f.read())
        sections = {}
        for m in re.finditer(r"((?:\w+\s+)*)xkb_symbols\s+\"([^\"]+)\"\s*\{", text):
            depth, i = 1, m.end()
            while depth:
                depth += {"{": 1, "}": -1}.get(text[i], 0)
                i += 1
            sections[m.group(2)] = (text[m.end():i - 1], "default" in m.group(1).split())
        cache[name] = sections
    return cache[name]


def section(name, part):
    sections = read_sections(name)
    if part is None:
        part = next((s for s, (_, default) in sections.items() if default), next(iter(sections)))
    return sections[part][0]


def statements(body):
    """('include', "file(section)") and ('key', name, [keysyms], type) in order."""
    out = []
    pattern = r"include\s+\"([^\"]+)\"|key\s+<(\w+)>\s*\{(.*?)\}\s*;"
    for m in re.finditer(pattern, body, re.S):
        if m.group(1):
            out.append(("include", m.group(1)))
            continue
        lists = [x for x in re.findall(r"\[([^\]]*)\]", m.group(3)) if not re.fullmatch(r"\s*[Gg]roup\d\s*", x)]
        kind = re.search(r"type(?:\[[Gg]roup1\])?\s*=\s*\"(\w+)\"", m.group(3))
        if lists:
            syms = [s.strip() for s in lists[0].split(",")]
            out.append(("key", m.group(2), syms, kind.group(1) if kind else ""))
    return out


def resolve(file, part, keys, includes):
    """All keys of a section with its includes (later definitions win):
    key name -> (keysyms, key type, the file that defined it last)."""
    for st in statements(section(file, part)):
        if st[0] == "key":
            old = keys.get(st[1], ([], "", ""))[0]
            new = [s if s != "NoSymbol" else (old[i] if i < len(old) else s) for i, s in enumerate(st[2])]
            keys[st[1]] = (new + old[len(new):], st[3], file)
            continue
        for item in re.split(r"[+|]", st[1]):
            m = re.fullmatch(r"\s*([\w-]+)(?:\(([\w-]+)\))?(?::\d)?\s*", item)
            if m:
                includes.append(item.strip())
                resolve(m.group(1), m.group(2), keys, includes)


def read_compose():
    """Keysym name -> character, and (dead key, next keysym) -> string."""
    names, dead = {}, {}
    line_re = re.compile(r"^((?:<\w+>\s*)+):\s*\"((?:[^\"\\]|\\.)*)\"\s*(\w*)")
    with open(COMPOSE, encoding="utf-8") as f:
        for line in f:
            m = line_re.match(line)
            if not m:
                continue
            keys = re.findall(r"<(\w+)>", m.group(1))
            result = re.sub(r"\\(.)", r"\1", m.group(2))
            if m.group(3) and len(result) == 1:
                names.setdefault(m.group(3), result)
            if len(keys) == 2 and keys[0].startswith("dead_"):
                dead[(keys[0], keys[1])] = result
    return names, dead


def keysym_char(sym, names):
    """The character keysym `sym` types; None when unknown here."""
    if re.fullmatch(r"U[0-9A-Fa-f]{4,6}", sym):
        return chr(int(sym[1:], 16))
    if re.fullmatch(r"0x100[0-9A-Fa-f]{4}", sym):
        return chr(int(sym[5:], 16))
    if len(sym) == 1 and sym.isalnum():
        return sym
    if sym == "space":
        return " "
    return names.get(sym)


def hexs(text):
    return text.encode("utf-8").hex()


def checks_for(layout, names, dead):
    file, part = LAYOUTS[layout]
    keys, includes = {}, []
    resolve(file, part, keys, includes)
    # The layout's own keys: those its file defines, in whichever section.
    own = [(key, syms, kind) for key, (syms, kind, source) in keys.items() if source == file and key in KEY_USAGE]
    level3 = any(i.startswith("level3(ralt") for i in includes)
    out = []
    for key, syms, kind in own:
        usage = KEY_USAGE[key]
        levels = syms[:4 if level3 else 2]
        for level, sym in enumerate(levels):
            press = f"{usage:02x}/{LEVEL_MODS[level]:02x}"
            if sym.startswith("dead_"):
                if (sym, "space") in dead:
                    out.append(f"{layout} {press} =")
                    out.append(f"{layout} {press} 2c/00 = {hexs(dead[(sym, 'space')])}")
                out += dead_letter_checks(layout, press, sym, keys, dead)
                continue
            ch = keysym_char(sym, names)
            if ch is not None and ch.isprintable():
                out.append(f"{layout} {press} = {hexs(ch)}")
        plain, shifted = (keysym_char(s, names) for s in (syms + ["", ""])[:2])
        if plain and shifted and len(plain) == 1 and plain.isalpha() and plain.upper() == shifted:
            if not kind or "ALPHABETIC" in kind:
                out.append(f"{layout} {CAPS} {usage:02x}/00 = {hexs(shifted)}")
                out.append(f"{layout} {CAPS} {usage:02x}/{SHIFT:02x} = {hexs(plain)}")
    return out


def dead_letter_checks(layout, press, sym, keys, dead):
    out = []
    for letter in "aeiouncyzAEIOUNCZ":
        if (sym, letter) not in dead or len(dead[(sym, letter)]) != 1:
            continue
        for key, (syms, _, _) in keys.items():
            if key in KEY_USAGE and syms and syms[0] == letter.lower():
                mods = SHIFT if letter.isupper() else 0
                out.append(f"{layout} {press} {KEY_USAGE[key]:02x}/{mods:02x} = {hexs(dead[(sym, letter)])}")
                break
    return out


def main():
    if not os.path.isdir(SYMBOLS) or not os.path.isfile(COMPOSE):
        print(f"keymap_reference: missing {SYMBOLS} or {COMPOSE}", file=sys.stderr)
        return 2
    names, dead = read_compose()
    for layout in LAYOUTS:
        for line in checks_for(layout, names, dead):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
