/* font_unicode.h - glyphs beyond ASCII for the framebuffer console: GNU
 * Unifont's bitmaps for Latin, Greek, Cyrillic, CJK, kana, Hangul and common
 * symbols, turned into a table at build time (tools/gen_unifont_glyphs.py
 * writes build/gen/unifont_glyphs.c). */
#ifndef KERNEL_FONT_UNICODE_H
#define KERNEL_FONT_UNICODE_H

#include <stdint.h>

/* `count` consecutive code points from `first`, all 8 (wide = 0) or 16
 * (wide = 1) pixels wide; their bitmaps follow each other from `offset` in
 * unifont_bitmaps: 16 bytes each, or 32 (left byte, right byte per row). */
struct glyph_run {
    uint32_t first;
    uint16_t count;
    uint8_t wide;
    uint32_t offset;
};

/* The generated table, sorted by code point, runs never overlapping. */
extern const struct glyph_run unifont_runs[];
extern const unsigned unifont_run_count;
extern const uint8_t unifont_bitmaps[];

/* The bitmap of code point cp (NULL when the table has none); *wide tells
 * its layout as above. */
const uint8_t *unicode_glyph(uint32_t cp, int *wide);

#endif
