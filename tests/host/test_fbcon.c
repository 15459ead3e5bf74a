/* test_fbcon.c - the framebuffer console on the host: the text scale chosen
 * per resolution, and text, scrolling and the status line read back from a
 * fake framebuffer in memory by matching cells against the font; UTF-8 text
 * into cells (wide characters, wrapping, invalid bytes) and the generated
 * Unifont glyphs checked against unifont.hex itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/drivers/fbcon.c"
#include "kernel/drivers/fbcon_text.c"
#include "kernel/drivers/font8x16.c"
#include "kernel/drivers/font_unicode.c"
#include "tests/host/check.h"

/* ---- the few kernel services fbcon.c uses ---- */
void *kmalloc(size_t size) {
    return malloc(size ? size : 1);
}
void kfree(void *p) {
    free(p);
}
int kprintf(const char *fmt, ...) {
    return 0;
}
void console_register_output(void (*write)(const char *s, size_t len)) {
    (void)write;
}
static int status_refreshes;
void status_refresh(void) {
    status_refreshes++;
}

/* ---- a fake screen ---- */
static struct {
    uint32_t *pixels;
    uint32_t width, height, pitch; /* pitch in bytes */
} screen;

static void console_close(void);

static void screen_open_format(uint32_t width, uint32_t height, uint32_t pad_bytes, uint32_t format,
                               const uint32_t masks[4]) {
    console_close();
    free(screen.pixels);
    screen.width = width;
    screen.height = height;
    screen.pitch = width * 4 + pad_bytes;
    size_t size = (size_t)screen.pitch * height;
    screen.pixels = malloc(size);
    memset(screen.pixels, 0x5a, size); /* the firmware's picture */
    struct boot_framebuffer fb = {0};
    fb.base = (uint64_t)(uintptr_t)screen.pixels - DIRECT_MAP_BASE;
    fb.size = size;
    fb.width = width;
    fb.height = height;
    fb.pitch = screen.pitch;
    fb.format = format;
    if (masks)
        fb.red_mask = masks[0], fb.green_mask = masks[1], fb.blue_mask = masks[2],
        fb.reserved_mask = masks[3];
    fbcon_init(&fb);
}

static void screen_open(uint32_t width, uint32_t height, uint32_t pad_bytes) {
    screen_open_format(width, height, pad_bytes, BOOT_PIXEL_BGRX, NULL);
}

static uint32_t pixel(uint32_t x, uint32_t y);

static void console_close(void) {
    free(fbc.cells);
    free(fbc.shown);
    free(fbc.status);
    free(fbc.status_shown);
    free(fbc.dirty);
    memset(&fbc, 0, sizeof fbc);
}

/* Palette colour 1 is (170, 0, 0) and 15 is white, laid out by hand for
 * each GOP pixel format; the pixels right of the text grid show the
 * background, colour 0. */
static void test_pixel_formats(void) {
    static const uint32_t ten_bit[4] = {0x3FF00000u, 0x000FFC00u, 0x000003FFu, 0xC0000000u};
    static const uint32_t rgb[4] = {0x000000FFu, 0x0000FF00u, 0x00FF0000u, 0xFF000000u};
    struct {
        const char *name;
        uint32_t format;
        const uint32_t *masks;
        uint32_t red, white;
    } cases[] = {
        {"RGBX pixels", BOOT_PIXEL_RGBX, NULL, 0x000000AAu, 0x00FFFFFFu},
        {"BGRX pixels", BOOT_PIXEL_BGRX, NULL, 0x00AA0000u, 0x00FFFFFFu},
        {"bit-mask pixels laid out as RGBX", BOOT_PIXEL_MASK, rgb, 0x000000AAu, 0x00FFFFFFu},
        {"10-bit bit-mask pixels", BOOT_PIXEL_MASK, ten_bit, 0x2AA00000u, 0x3FFFFFFFu},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        screen_open_format(1024, 768, 36, cases[i].format, cases[i].masks); /* stride not a multiple of 8 */
        check(fbc.active && fbc.palette[1] == cases[i].red && fbc.palette[15] == cases[i].white &&
                  pixel(1023, 0) == (uint32_t)fbc.palette[0],
              cases[i].name, "active %d red 0x%08x white 0x%08x", fbc.active, fbc.palette[1],
              fbc.palette[15]);
    }
    struct boot_framebuffer fb = {.base = 0x80000000u,
                                  .width = 800,
                                  .height = 600,
                                  .pitch = 800 * 4,
                                  .size = 800 * 4 * 600,
                                  .format = BOOT_PIXEL_BGRX};
    check(fbcon_unusable_reason(&fb) == NULL, "800x600 BGRX at stride 3200 is usable", "refused");
    fb.pitch = 799 * 4;
    const char *why = fbcon_unusable_reason(&fb);
    check(why && strstr(why, "stride"), "stride smaller than the width is refused", "%s",
          why ? why : "accepted");
    fb.pitch = 800 * 4;
    fb.size = 800 * 4 * 599;
    check(fbcon_unusable_reason(&fb) != NULL, "framebuffer larger than its memory is refused", "accepted");
    fb.size = 800 * 4 * 600;
    fb.format = BOOT_PIXEL_MASK;
    fb.red_mask = 0xF800, fb.green_mask = 0x07E0, fb.blue_mask = 0x001F; /* RGB565 */
    why = fbcon_unusable_reason(&fb);
    check(why && strstr(why, "32 bits"), "16-bit pixels are refused", "%s", why ? why : "accepted");
    fb.red_mask = 0xFF0000, fb.green_mask = 0xFF0000, fb.blue_mask = 0xFF;
    check(fbcon_unusable_reason(&fb) != NULL, "overlapping masks are refused", "accepted");
    fb.format = 7;
    check(fbcon_unusable_reason(&fb) != NULL, "unknown pixel format is refused", "accepted");
    fb.format = BOOT_PIXEL_BGRX;
    fb.height = 0xFFFFFFFFu, fb.pitch = 0xFFFFFFFFu; /* pitch x height overflows 32 bits */
    check(fbcon_unusable_reason(&fb) != NULL, "huge stride x height is refused", "accepted");
    screen_open_format(640, 480, 0, BOOT_PIXEL_BGRX, NULL);
    console_close();
    struct boot_framebuffer narrow = {.base = (uint64_t)(uintptr_t)screen.pixels - DIRECT_MAP_BASE,
                                      .width = 640,
                                      .height = 480,
                                      .pitch = 639 * 4,
                                      .size = 640 * 4 * 480,
                                      .format = BOOT_PIXEL_BGRX};
    fbcon_init(&narrow);
    check(!fbc.active, "console stays off on a stride smaller than the width", "came up");
}

static uint32_t pixel(uint32_t x, uint32_t y) {
    return *(uint32_t *)((uint8_t *)screen.pixels + (size_t)y * screen.pitch + (size_t)x * 4);
}

/* The character in a cell (screen row; the status row is fbc.rows), '?'
 * when the cell matches no glyph; inverse cells are read too. */
static char read_cell(int col, int row) {
    uint8_t bits[FONT_HEIGHT];
    uint32_t bg = pixel((uint32_t)(col * fbc.cell_w), (uint32_t)(row * fbc.cell_h));
    for (int y = 0; y < FONT_HEIGHT; y++) {
        bits[y] = 0;
        for (int x = 0; x < FONT_WIDTH; x++) {
            for (int sy = 0; sy < fbc.scale; sy++)
                for (int sx = 0; sx < fbc.scale; sx++) {
                    uint32_t px = pixel((uint32_t)((col * FONT_WIDTH + x) * fbc.scale + sx),
                                        (uint32_t)((row * FONT_HEIGHT + y) * fbc.scale + sy));
                    int lit = px != bg;
                    int first = (bits[y] >> (7 - x)) & 1;
                    if (sy == 0 && sx == 0)
                        bits[y] |= (uint8_t)(lit << (7 - x));
                    else if (lit != first)
                        return '?'; /* not a clean scaled pixel */
                }
        }
    }
    for (int ch = FONT_FIRST; ch <= FONT_LAST; ch++)
        if (memcmp(font_glyph((uint8_t)ch), bits, FONT_HEIGHT) == 0) return (char)ch;
    /* A space cell whose background is the cursor-less default. */
    return '?';
}

static void read_row(int row, char *out, int max) {
    int n = fbc.cols < max - 1 ? fbc.cols : max - 1;
    for (int col = 0; col < n; col++) out[col] = read_cell(col, row);
    while (n > 0 && out[n - 1] == ' ') n--;
    out[n] = '\0';
}

static void write_str(const char *s) {
    fbcon_write(s, strlen(s));
}

static void test_scales(void) {
    static const struct {
        uint32_t w, h;
        int scale;
    } want[] = {
        {640, 480, 1},   {800, 600, 1},   {1024, 768, 1},  {1280, 800, 1},  {1366, 768, 1},
        {1440, 900, 1},  {1600, 900, 2},  {1920, 1080, 2}, {1920, 1200, 2}, {2560, 1440, 2},
        {2560, 1600, 2}, {2880, 1800, 3}, {3200, 1800, 3}, {3840, 2160, 3}, {4096, 2160, 4},
        {5120, 2880, 4}, {7680, 4320, 4}, {3840, 400, 1},  {1920, 600, 1},
    };
    char name[80], why[120];
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        int got = fbcon_choose_scale(want[i].w, want[i].h);
        snprintf(name, sizeof name, "scale for %ux%u is %d", want[i].w, want[i].h, want[i].scale);
        snprintf(why, sizeof why, "got %d", got);
        check_plain(got == want[i].scale, name, why);
    }
    int all_readable = 1;
    for (uint32_t w = 1600; w <= 5120; w += 8) {
        int cols = (int)(w / (8u * (uint32_t)fbcon_choose_scale(w, 2160)));
        if (cols < 100 || cols > 160) all_readable = 0;
    }
    check(all_readable, "100-160 columns from 1600 to 5120 pixels wide", "a width is outside");
}

static void test_text_and_status(uint32_t width, uint32_t height, uint32_t pad) {
    char name[120], why[300], row_text[512];
    screen_open(width, height, pad);
    snprintf(name, sizeof name, "%ux%u: console active with a status row", width, height);
    int cols = 0, rows = 0;
    fbcon_size(&cols, &rows);
    snprintf(why, sizeof why, "active %d, %dx%d, scale %d", fbc.active, cols, rows, fbc.scale);
    check_plain(fbc.active && rows == (int)(height / (16u * (uint32_t)fbc.scale)) - 1 &&
                    cols == (int)(width / (8u * (uint32_t)fbc.scale)) && status_refreshes > 0,
                name, why);

    write_str("\x1b[?25lHello, world!\n");
    read_row(0, row_text, sizeof row_text);
    snprintf(name, sizeof name, "%ux%u: text reads back", width, height);
    snprintf(why, sizeof why, "row 0 reads %.80s", row_text);
    check_plain(strcmp(row_text, "Hello, world!") == 0, name, why);

    fbcon_set_status_line(" model: stories260K.bin | 123.4 tok/s");
    read_row(fbc.rows, row_text, sizeof row_text);
    uint32_t status_bg = pixel(0, (uint32_t)(fbc.rows * fbc.cell_h));
    snprintf(name, sizeof name, "%ux%u: status line in inverse colours", width, height);
    snprintf(why, sizeof why, "status row reads %.80s, background 0x%x", row_text, status_bg);
    check_plain(strcmp(row_text, " model: stories260K.bin | 123.4 tok/s") == 0 &&
                    status_bg == fbc.palette[STATUS_BG],
                name, why);

    /* Scroll well past a screenful: the status row stays, the text's last
     * lines sit just above it. */
    for (int i = 0; i < 3 * fbc.rows; i++) {
        char line[64];
        snprintf(line, sizeof line, "line %d of the long answer\n", i);
        write_str(line);
    }
    write_str("last words");
    char expect_above[64];
    snprintf(expect_above, sizeof expect_above, "line %d of the long answer", 3 * fbc.rows - 1);
    read_row(fbc.rows - 2, row_text, sizeof row_text);
    int above_ok = strcmp(row_text, expect_above) == 0;
    read_row(fbc.rows - 1, row_text, sizeof row_text);
    int last_ok = strcmp(row_text, "last words") == 0;
    char status_text[512];
    read_row(fbc.rows, status_text, sizeof status_text);
    snprintf(name, sizeof name, "%ux%u: scrolling keeps the status line", width, height);
    snprintf(why, sizeof why, "last rows %d %d, status %.60s", above_ok, last_ok, status_text);
    check_plain(above_ok && last_ok && strcmp(status_text, " model: stories260K.bin | 123.4 tok/s") == 0,
                name, why);

    /* Clearing the screen leaves the status line alone. */
    write_str("\x1b[2J\x1b[H");
    read_row(fbc.rows, status_text, sizeof status_text);
    read_row(0, row_text, sizeof row_text);
    snprintf(name, sizeof name, "%ux%u: clear screen spares the status line", width, height);
    check_plain(row_text[0] == '\0' && strncmp(status_text, " model:", 7) == 0, name, status_text);

    /* A status text longer than the screen is cut, never wrapped. */
    char long_status[1200];
    memset(long_status, 'x', sizeof long_status - 1);
    long_status[sizeof long_status - 1] = '\0';
    fbcon_set_status_line(long_status);
    read_row(fbc.rows, status_text, sizeof status_text);
    read_row(0, row_text, sizeof row_text);
    snprintf(name, sizeof name, "%ux%u: long status cut at the screen's width", width, height);
    check((int)strlen(status_text) == (fbc.cols < 511 ? fbc.cols : 511) && row_text[0] == '\0', name,
          "status row or text row wrong");

    /* Nothing outside the grid and status row is left from the firmware. */
    int leftovers = 0;
    for (uint32_t y = 0; y < height; y += 7)
        for (uint32_t x = 0; x < width; x += 5)
            if (pixel(x, y) == 0x5a5a5a5au) leftovers++;
    snprintf(name, sizeof name, "%ux%u: firmware picture fully replaced", width, height);
    snprintf(why, sizeof why, "%d sampled pixels still hold the old picture", leftovers);
    check_plain(leftovers == 0, name, why);
}

/* ---- Unicode ---- */
#define UNIFONT_HEX "/usr/share/unifont/unifont.hex"

/* The glyph for cp as unifont.hex has it (16 or 32 bytes); 0 if absent. */
static size_t unifont_hex_glyph(uint32_t cp, uint8_t out[32]) {
    FILE *f = fopen(UNIFONT_HEX, "r");
    if (!f) return 0;
    char line[160];
    size_t n = 0;
    while (!n && fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon || strtoul(line, NULL, 16) != cp) continue;
        for (char *p = colon + 1; n < 32 && p[0] && p[1] && p[0] != '\n'; p += 2) {
            char byte[3] = {p[0], p[1], 0};
            out[n++] = (uint8_t)strtoul(byte, NULL, 16);
        }
    }
    fclose(f);
    return n;
}

static const uint32_t sample_code_points[] = {
    0x00E9, 0x0416, 0x03A9, 0x2192, 0x2500, 0x3001, 0x3042, 0x30AB, 0x4E2D, 0x6587, 0xAC00, 0xFF21, 0xFFFD,
};
#define SAMPLES (sizeof sample_code_points / sizeof sample_code_points[0])

static void test_glyph_table_matches_unifont(void) {
    char name[80];
    uint8_t want[32];
    if (!unifont_hex_glyph(0x4E2D, want)) {
        check_skipped("generated glyphs equal unifont.hex", UNIFONT_HEX " not installed");
        return;
    }
    for (size_t i = 0; i < SAMPLES; i++) {
        uint32_t cp = sample_code_points[i];
        size_t n = unifont_hex_glyph(cp, want);
        int wide = -1;
        const uint8_t *got = unicode_glyph(cp, &wide);
        snprintf(name, sizeof name, "glyph of U+%04X equals its unifont.hex line", cp);
        check(n && got && (size_t)(wide ? 32 : 16) == n && memcmp(got, want, n) == 0, name,
              "hex %zu bytes, table %s (wide %d)", n, got ? "has it" : "lacks it", wide);
        snprintf(name, sizeof name, "U+%04X: glyph width agrees with the cell width", cp);
        check(n == (size_t)(unicode_cell_width(cp) == 2 ? 32 : 16), name, "%zu bytes", n);
    }
    int missing_wide = 0;
    check(unicode_glyph(0x0041, &missing_wide) == NULL && unicode_glyph(0x10FFFF, &missing_wide) == NULL,
          "ASCII and unlisted code points are not in the table", "found");
}

static int cell_is(int col, int row, uint32_t ch, int half) {
    const struct fb_cell *c = cell_at(col, row);
    return c->ch == ch && c->half == half;
}

/* Pixels of cells (col, row) .. (col + width - 1, row) at scale 1, as glyph rows. */
static int cells_show_glyph(int col, int row, const uint8_t *glyph, int width) {
    for (int y = 0; y < FONT_HEIGHT; y++)
        for (int x = 0; x < 8 * width; x++) {
            int lit = pixel((uint32_t)(col * 8 + x), (uint32_t)(row * 16 + y)) == fbc.palette[DEFAULT_FG];
            int want = (glyph[y * width + x / 8] >> (7 - x % 8)) & 1;
            if (lit != want) return 0;
        }
    return 1;
}

static void test_utf8_cells(void) {
    screen_open(800, 600, 0);
    write_str("\x1b[?25l\xe4\xb8\xad\xd0\x96x\n"); /* 中Жx */
    check(cell_is(0, 0, 0x4E2D, CELL_WIDE_LEFT) && cell_is(1, 0, 0x4E2D, CELL_WIDE_RIGHT) &&
              cell_is(2, 0, 0x0416, CELL_NARROW) && cell_is(3, 0, 'x', CELL_NARROW),
          "UTF-8 text gives code points; a CJK character takes two cells", "cells wrong");
    uint8_t cjk[32], cyrillic[32];
    if (unifont_hex_glyph(0x4E2D, cjk) == 32 && unifont_hex_glyph(0x0416, cyrillic) == 16)
        check(cells_show_glyph(0, 0, cjk, 2) && cells_show_glyph(2, 0, cyrillic, 1),
              "the screen shows both halves of the wide glyph and the Cyrillic one", "pixels differ");
    else
        check_skipped("the screen shows the Unifont glyphs", UNIFONT_HEX " not installed");

    char move[32];
    snprintf(move, sizeof move, "\x1b[%dGab\xe3\x81\x82", fbc.cols - 2); /* あ at the last column */
    write_str(move);
    check(cell_is(fbc.cols - 3, 1, 'a', CELL_NARROW) && cell_is(fbc.cols - 2, 1, 'b', CELL_NARROW) &&
              cell_is(fbc.cols - 1, 1, ' ', CELL_NARROW) && cell_is(0, 2, 0x3042, CELL_WIDE_LEFT) &&
              cell_is(1, 2, 0x3042, CELL_WIDE_RIGHT) && fbc.cx == 2 && fbc.cy == 2,
          "a wide character that does not fit at the line's end wraps", "cells or cursor wrong");

    write_str("\n\xff|\xc0\xaf|\xe4\xb8|\xed\xa0\x80|\x80|\xf4\x90\x80\x80|\xc3\xa9");
    static const uint32_t expect[] = {0xFFFD, '|', 0xFFFD, 0xFFFD, '|',    0xFFFD, '|',
                                      0xFFFD, '|', 0xFFFD, '|',    0xFFFD, '|',    0xE9};
    int same = 1;
    for (int i = 0; i < (int)(sizeof expect / sizeof expect[0]); i++)
        same &= cell_is(i, 3, expect[i], CELL_NARROW);
    check(same, "invalid UTF-8 shows U+FFFD (stray, overlong, truncated, surrogate, too large)",
          "cells wrong");

    write_str("\r\xe4\xb8\xad\xe6\x96\x87\r\xe2\x80\xa6"); /* 中文, then … over the first half */
    check(cell_is(0, 3, 0x2026, CELL_NARROW) && cell_is(1, 3, ' ', CELL_NARROW) &&
              cell_is(2, 3, 0x6587, CELL_WIDE_LEFT),
          "overwriting half a wide character blanks its other half", "cells wrong");

    write_str("\r\xe2\x91\xa0"); /* ①: one cell, a 16-wide Unifont glyph squeezed into it */
    uint8_t circled[32], squeezed[16];
    if (unifont_hex_glyph(0x2460, circled) == 32) {
        for (int y = 0; y < 16; y++) {
            squeezed[y] = 0;
            for (int x = 0; x < 16; x++)
                if ((circled[2 * y + x / 8] >> (7 - x % 8)) & 1) squeezed[y] |= (uint8_t)(0x80 >> (x / 2));
        }
        check(cell_is(0, 3, 0x2460, CELL_NARROW) && cells_show_glyph(0, 3, squeezed, 1),
              "a narrow character with a 16-wide glyph is squeezed into its cell", "pixels differ");
    } else {
        check_skipped("a 16-wide glyph squeezed into one cell", UNIFONT_HEX " not installed");
    }

    fbcon_set_status_line(" \xe6\xa8\xa1\xe5\x9e\x8b: \xd0\xbc\xd0\xb8\xd1\x80"); /* 模型: мир */
    check(fbc.status[1].ch == 0x6A21 && fbc.status[1].half == CELL_WIDE_LEFT &&
              fbc.status[2].half == CELL_WIDE_RIGHT && fbc.status[3].ch == 0x578B &&
              fbc.status[5].ch == ':' && fbc.status[7].ch == 0x043C && fbc.status[9].ch == 0x0440,
          "the status line holds wide and Cyrillic characters", "status cells wrong");
}

int main(void) {
    test_scales();
    test_text_and_status(800, 600, 0);
    test_text_and_status(1920, 1080, 64);
    test_text_and_status(1366, 768, 4); /* pitch not a multiple of 8 bytes */
    test_text_and_status(3840, 2160, 0);
    test_glyph_table_matches_unifont();
    test_utf8_cells();
    test_pixel_formats();
    screen_open(32, 32, 0);
    check(!fbc.active, "tiny framebuffer refused", "console came up on 32x32");
    free(screen.pixels);
    free(fbc.dirty);
    return failures ? 1 : 0;
}
