"""screen.py - read the text on a QEMU screendump (PPM) by matching every
8x16 cell against the kernel's own font.

The font is kernel/drivers/font8x16.c: 8x16 pixel art per character from 0x20, one
8-character string ('#' lit, '.' not) per pixel row, 16 rows per glyph. The
glyphs are rebuilt here from that art. The kernel scales cells 1x-4x
(kernel/drivers/fbcon.c); inverse cells (the status line) and the cursor (last two
pixel rows lit) are read too.

Other characters are matched against the kernel's Unifont glyphs, read from the
table the build generates (build/gen/unifont_glyphs.c, tools/gen_unifont_glyphs.py):
8-wide glyphs fill one cell, 16-wide ones two (left half, then right half).
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FONT_SOURCE = os.path.join(ROOT, "kernel", "drivers", "font8x16.c")
FONT_FIRST_CHAR = 0x20
ART = re.compile(r'\{\s*((?:"[.#]{8}"\s*,?\s*){16})\}')
CURSOR_ROWS = 2  # the cursor lights the cell's last two pixel rows
UNIFONT_TABLE = os.path.join(ROOT, "build", "gen", "unifont_glyphs.c")
GLYPH_RUN = re.compile(r"\{0x([0-9A-F]+), (\d+), ([01]), (\d+)\},")


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


_unicode_glyphs = None


def load_unicode_glyphs(path=UNIFONT_TABLE):
    """narrow: 16-byte cell bitmap -> char; wide: the bitmaps of a wide
    glyph's left and right cells, joined -> char; lefts: the left halves.
    Where glyphs look alike (Latin, Greek and Cyrillic capitals) the lowest
    code point wins."""
    global _unicode_glyphs
    if _unicode_glyphs is not None and path == UNIFONT_TABLE:
        return _unicode_glyphs
    narrow, wide_glyphs, lefts = {}, {}, set()
    if os.path.exists(path):
        with open(path, encoding="ascii") as f:
            source = f.read()
        runs = [(int(a, 16), int(n), int(w), int(o)) for a, n, w, o in GLYPH_RUN.findall(source)]
        data = bytes(int(v) for v in re.findall(r"\d+", source[source.index("unifont_bitmaps["):])[1:])
        for first, count, wide, offset in runs:
            size = 32 if wide else 16
            for i in range(count):
                glyph = data[offset + i * size:offset + (i + 1) * size]
                ch = chr(first + i)
                if wide:
                    wide_glyphs.setdefault(glyph[0::2] + glyph[1::2], ch)
                    lefts.add(glyph[0::2])
                else:
                    narrow.setdefault(glyph, ch)
    _unicode_glyphs = (narrow, wide_glyphs, lefts)
    return _unicode_glyphs


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

    narrow, wide_glyphs, lefts = load_unicode_glyphs()
    best = []
    for scale in (1, 2, 3, 4):
        cw, ch = 8 * scale, 16 * scale

        def cell_bits(col, row):
            bits = bytearray(16)
            for gy in range(16):
                b = 0
                for gx in range(8):
                    if lit(col * cw + gx * scale, row * ch + gy * scale):
                        b |= 0x80 >> gx
                bits[gy] = b
            return bytes(bits)

        lines = []
        for row in range(h // ch):
            chars, cols, col = [], w // cw, 0
            while col < cols:
                key = cell_bits(col, row)
                inverted = bytes(x ^ 0xFF for x in key)
                under_cursor = tops.get(key[:-CURSOR_ROWS]) if key[-CURSOR_ROWS:] == b"\xff" * CURSOR_ROWS else None
                if (key in lefts or inverted in lefts) and col + 1 < cols:
                    pair = key + cell_bits(col + 1, row)
                    wide = wide_glyphs.get(pair) or wide_glyphs.get(bytes(x ^ 0xFF for x in pair))
                    if wide:
                        chars.append(wide)
                        col += 2
                        continue
                found = glyphs.get(key) or glyphs.get(inverted) or under_cursor or narrow.get(key) or narrow.get(inverted)
                chars.append(found or ("?" if any(key) else " "))
                col += 1
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
