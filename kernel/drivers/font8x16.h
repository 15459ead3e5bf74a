/* font8x16.h - the built-in 8x16 console font (printable ASCII plus a box). */
#ifndef KERNEL_FONT8X16_H
#define KERNEL_FONT8X16_H

#include <stdint.h>

#define FONT_WIDTH 8
#define FONT_HEIGHT 16
#define FONT_FIRST 0x20
#define FONT_LAST 0x7e
#define FONT_BOX_INDEX (FONT_LAST - FONT_FIRST + 1)
#define FONT_GLYPH_COUNT (FONT_BOX_INDEX + 1)

/* 16 rows of 8 pixels, bit 7 = leftmost. Bytes outside 0x20-0x7E give a box. */
const uint8_t *font_glyph(uint8_t ch);

#endif
