"""screen.py - read the text on a QEMU screendump (PPM) by matching every
8x16 cell against the kernel's own font.

The font is kernel/drivers/font8x16.c: 8x16 pixel art per character from 0x20, one
8-character string ('#' lit, '.' not) per pixel row, 16 rows per glyph. The
glyphs are rebuilt here from that art. The kernel scales cells 1x-4x
(kernel/drivers/fbcon.c); inverse cells (the status line) and the cursor (last two
pixel rows lit) are read too.
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FONT_SOURCE = os.path.join(ROOT, "kernel", "drivers", "font8x16.c")
FONT_FIRST_CHAR = 0x20
ART = re.compile(r'\{\s*((?:"[.#]{8}"\s*,?\s*){16})\}')
CURSOR_ROWS = 2  # the cursor lights the cell's last two pixel rows


def load_font():
    """Two maps: full 16-row bitmap -> char, and the top 14 rows -> char
    (for the cell under the cursor)."""
    with open(FONT_SOURCE, encoding="utf-8") as f:
        source = f.read()
    glyphs, tops = {}, {}
    for index, m in enumerate(ART.finditer(source)):
        rows = re.findall(r'"([.#]{8})"', m.group(1))
        bitmap = bytes(sum(0x80 >> x for x, ch in enumerate(art) if ch == "#") for art in rows)
        glyphs.setdefault(bitmap, chr(FONT_FIRST_CHAR + index))
        tops.setdefault(bitmap[:16 - CURSOR_ROWS], chr(FONT_FIRST_CHAR + index))
    assert len(glyphs) > 90, f"font art not found in {FONT_SOURCE}"
    return glyphs, tops


def read_ppm(path):
    data = open(path, "rb").read()
    fields, pos = [], 0
    while len(fields) < 4:  # magic, width, height, maxval (comments not used by QEMU)
        while data[pos:pos + 1].isspace():
            pos += 1
        start = pos
        while not data[pos:pos + 1].isspace():
            pos += 1
        fields.append(data[start:pos])
    assert fields[0] == b"P6", "not a binary PPM"
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[pos + 1:]


def read_text(path):
    """The screen as a list of text lines (trailing spaces stripped)."""
    glyphs, tops = load_font()
    w, h, pix = read_ppm(path)

    def lit(x, y):
        i = (y * w + x) * 3
        return pix[i] + pix[i + 1] + pix[i + 2] > 3 * 96

    best = []
    for scale in (1, 2, 3, 4):
        cw, ch = 8 * scale, 16 * scale
        lines = []
        for row in range(h // ch):
            chars = []
            for col in range(w // cw):
                bits = bytearray(16)
                for gy in range(16):
                    b = 0
                    for gx in range(8):
                        if lit(col * cw + gx * scale, row * ch + gy * scale):
                            b |= 0x80 >> gx
                    bits[gy] = b
                key = bytes(bits)
                inverted = bytes(x ^ 0xFF for x in key)
                under_cursor = tops.get(key[:-CURSOR_ROWS]) if key[-CURSOR_ROWS:] == b"\xff" * CURSOR_ROWS else None
                chars.append(glyphs.get(key) or glyphs.get(inverted) or under_cursor
                             or ("?" if any(key) else " "))
            lines.append("".join(chars).rstrip())
        while lines and not lines[-1]:
            lines.pop()
        score = sum(c.isalnum() for line in lines for c in line)
        if score > sum(c.isalnum() for line in best for c in line):
            best = lines
    return best


if __name__ == "__main__":
    import sys
    print("\n".join(read_text(sys.argv[1])))
