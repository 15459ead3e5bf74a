/* fbcon.c - text console on the GOP framebuffer: the painting half.
 *
 * Text lives in a grid of cells (fbcon_text.c fills it from the bytes
 * written); a second grid remembers what is on screen. Writes mark rows
 * dirty; the flush at the end of each write redraws only cells that changed.
 * The framebuffer is never read (VRAM reads are slow).
 *
 * The last screen row is the status line (kernel/console/status.c): drawn in
 * inverse colours, outside the text grid, so text scrolls above it.
 * Pixels are written as whole 64-bit pieces of a glyph row from a table of
 * pre-coloured nibbles: under emulation every guest instruction counts. */
#include <stdint.h>
#include "kernel/drivers/fbcon.h"
#include "kernel/drivers/fbcon_internal.h"
#include "kernel/console/console.h"
#include "kernel/drivers/font8x16.h"
#include "kernel/drivers/font_unicode.h"
#include "kernel/mm/memory.h"
#include "kernel/console/status.h"
#include "lib/string.h"
#include "lib/utf8.h"

struct fbcon_state fbc;

/* The classic 16-colour palette (VGA-like), as RGB. */
static const uint8_t palette_rgb[16][3] = {
    {0, 0, 0},     {170, 0, 0},     {0, 170, 0},    {170, 85, 0},    {0, 0, 170},   {170, 0, 170},
    {0, 170, 170}, {192, 192, 192}, {85, 85, 85},   {255, 85, 85},   {85, 255, 85}, {255, 255, 85},
    {85, 85, 255}, {255, 85, 255},  {85, 255, 255}, {255, 255, 255},
};

static int lowest_set_bit(uint32_t mask) {
    int shift = 0;
    while (shift < 32 && !(mask & (1u << shift))) shift++;
    return shift;
}

/* Places an 8-bit colour channel into the bits of `mask`. */
static uint32_t channel_to_mask(uint8_t value, uint32_t mask) {
    if (!mask) return 0;
    int shift = lowest_set_bit(mask);
    int bits = 0;
    while (shift + bits < 32 && (mask & (1u << (shift + bits)))) bits++;
    if (bits > 24) bits = 24;         /* keeps the product below in 32 bits */
    uint32_t full = (1u << bits) - 1; /* 255 is full scale: a 10-bit white is 1023 */
    uint32_t v = (value * full + 127) / 255u;
    return (v << shift) & mask;
}

static uint32_t make_pixel(const struct boot_framebuffer *fb, const uint8_t rgb[3]) {
    switch (fb->format) {
    case BOOT_PIXEL_RGBX:
        return rgb[0] | (uint32_t)rgb[1] << 8 | (uint32_t)rgb[2] << 16;
    case BOOT_PIXEL_BGRX:
        return rgb[2] | (uint32_t)rgb[1] << 8 | (uint32_t)rgb[0] << 16;
    default:
        return channel_to_mask(rgb[0], fb->red_mask) | channel_to_mask(rgb[1], fb->green_mask) |
               channel_to_mask(rgb[2], fb->blue_mask);
    }
}

static void prepare_painter(uint8_t fg, uint8_t bg) {
    if (fbc.painter_fg == fg && fbc.painter_bg == bg) return;
    fbc.painter_fg = fg;
    fbc.painter_bg = bg;
    uint32_t fg_px = fbc.palette[fg & 15], bg_px = fbc.palette[bg & 15];
    for (int n = 0; n < 16; n++)
        for (int x = 0; x < 4 * fbc.scale; x++)
            fbc.nibble_pixels[n][x] = (n & (8 >> (x / fbc.scale))) ? fg_px : bg_px;
}

/* One cell at a fixed scale: each glyph row is two table lookups and
 * 4*scale 64-bit stores per scan line. `scale` is a constant at each call
 * site below, so the loops unroll. */
static inline __attribute__((always_inline)) void paint_cell(uint8_t *line, const uint8_t *glyph,
                                                             int cursor_from, const int scale) {
    for (int y = 0; y < FONT_HEIGHT; y++) {
        unsigned bits = y >= cursor_from ? 0xff : glyph[y];
        const pixel_pair *left = (const pixel_pair *)fbc.nibble_pixels[bits >> 4];
        const pixel_pair *right = (const pixel_pair *)fbc.nibble_pixels[bits & 15];
        for (int repeat = 0; repeat < scale; repeat++, line += fbc.pitch) {
            pixel_pair *px = (pixel_pair *)line;
            for (int i = 0; i < 2 * scale; i++) px[i] = left[i];
            for (int i = 0; i < 2 * scale; i++) px[2 * scale + i] = right[i];
        }
    }
}

/* The 8x16 bitmap a non-ASCII cell shows: its Unifont glyph, one half of
 * a 16-wide one (made in `half`), or the box when the font has none. */
static const uint8_t *unicode_cell_glyph(const struct fb_cell *c, uint8_t half[FONT_HEIGHT]) {
    int wide = 0;
    const uint8_t *glyph = unicode_glyph(c->ch, &wide);
    if (!glyph) return font_glyph(0);
    if (c->half == CELL_NARROW) {
        if (!wide) return glyph;
        /* A one-cell character Unifont draws 16 wide (①, ☂...): each pair
         * of pixels squeezed into one. */
        for (int y = 0; y < FONT_HEIGHT; y++) {
            unsigned row = (unsigned)glyph[2 * y] << 8 | glyph[2 * y + 1], bits = 0;
            for (int x = 0; x < 8; x++)
                if (row & (0xc000u >> (2 * x))) bits |= 0x80u >> x;
            half[y] = (uint8_t)bits;
        }
        return half;
    }
    if (!wide) { /* a wide cell with a narrow glyph: glyph left, blank right */
        if (c->half == CELL_WIDE_LEFT) return glyph;
        memset(half, 0, FONT_HEIGHT);
        return half;
    }
    int right = c->half == CELL_WIDE_RIGHT;
    for (int y = 0; y < FONT_HEIGHT; y++) half[y] = glyph[2 * y + right];
    return half;
}

/* Pixel rows changed since the last present (y0 >= y1: none), for a screen
 * that shows the framebuffer only when told (virtio-gpu). */
static fbcon_present_fn present;
static uint32_t damage_y0 = UINT32_MAX, damage_y1;

static void damage(uint32_t y0, uint32_t y1) {
    if (y0 < damage_y0) damage_y0 = y0;
    if (y1 > damage_y1) damage_y1 = y1;
}

static void present_damage(void) {
    if (present && damage_y0 < damage_y1) present(damage_y0, damage_y1 - damage_y0);
    damage_y0 = UINT32_MAX;
    damage_y1 = 0;
}

void fbcon_set_present(fbcon_present_fn fn) {
    present = fn;
}

/* `row` is a screen row (the status line is row fbc.rows). */
static void draw_cell(int col, int row, const struct fb_cell *c, int with_cursor) {
    damage((uint32_t)(row * fbc.cell_h), (uint32_t)((row + 1) * fbc.cell_h));
    prepare_painter(c->fg, c->bg);
    uint8_t *line = fbc.vram + (size_t)row * fbc.cell_h * fbc.pitch + (size_t)col * fbc.cell_w * 4;
    uint8_t half[FONT_HEIGHT];
    const uint8_t *glyph = c->ch < 0x80 ? font_glyph((uint8_t)c->ch) : unicode_cell_glyph(c, half);
    int cursor_from = with_cursor ? FONT_HEIGHT - 2 : FONT_HEIGHT;
    switch (fbc.scale) {
    case 1:
        paint_cell(line, glyph, cursor_from, 1);
        break;
    case 2:
        paint_cell(line, glyph, cursor_from, 2);
        break;
    case 3:
        paint_cell(line, glyph, cursor_from, 3);
        break;
    default:
        paint_cell(line, glyph, cursor_from, 4);
        break;
    }
}

static int same_cell(const struct fb_cell *a, const struct fb_cell *b) {
    return a->ch == b->ch && a->fg == b->fg && a->bg == b->bg && a->half == b->half;
}

static void flush_status(void) {
    if (!fbc.has_status) return;
    for (int col = 0; col < fbc.cols; col++) {
        struct fb_cell *want = &fbc.status[col], *have = &fbc.status_shown[col];
        if (!have->stale && same_cell(have, want)) continue;
        draw_cell(col, fbc.rows, want, 0);
        *have = *want;
    }
}

static void flush(void) {
    if (fbc.cursor_drawn) {
        fbc.shown[fbc.cursor_y * fbc.cols + fbc.cursor_x].stale = 1;
        fbc.dirty[fbc.cursor_y] = 1;
        fbc.cursor_drawn = 0;
    }
    int cur_x = fbc.cx < fbc.cols ? fbc.cx : fbc.cols - 1, cur_y = fbc.cy;
    if (fbc.cursor_visible) fbc.dirty[cur_y] = 1;
    for (int row = 0; row < fbc.rows; row++) {
        if (!fbc.dirty[row]) continue;
        fbc.dirty[row] = 0;
        for (int col = 0; col < fbc.cols; col++) {
            struct fb_cell *want = cell_at(col, row), *have = &fbc.shown[row * fbc.cols + col];
            int is_cursor = fbc.cursor_visible && row == cur_y && col == cur_x;
            if (!is_cursor && !have->stale && same_cell(have, want)) continue;
            draw_cell(col, row, want, is_cursor);
            *have = *want;
            have->stale = is_cursor; /* the cursor cell is redrawn once it moves */
        }
    }
    if (fbc.cursor_visible) {
        fbc.cursor_drawn = 1;
        fbc.cursor_x = cur_x;
        fbc.cursor_y = cur_y;
    }
}

void fbcon_write(const char *s, size_t len) {
    if (!fbc.active) return;
    for (size_t i = 0; i < len; i++) fbcon_feed_byte((uint8_t)s[i]);
    flush();
    present_damage();
}

int fbcon_size(int *cols, int *rows) {
    if (cols) *cols = fbc.active ? fbc.cols : 0;
    if (rows) *rows = fbc.active ? fbc.rows : 0;
    return fbc.active;
}

int fbcon_choose_scale(uint32_t width, uint32_t height) {
    int scale = 1;
    if (width >= 1600) {
        /* The smallest scale that keeps the text within TARGET_MAX_COLS. */
        uint32_t cell_px = FONT_WIDTH * TARGET_MAX_COLS;
        scale = (int)((width + cell_px - 1) / cell_px);
        if (scale < 2) scale = 2;
        if (scale > MAX_SCALE) scale = MAX_SCALE;
    }
    /* Wide but short screens: keep at least 24 rows if a smaller scale can. */
    while (scale > 1 && height / (uint32_t)(FONT_HEIGHT * scale) < 24) scale--;
    return scale;
}

static void fill_pixels(uint32_t x0, uint32_t y0, uint32_t x1, uint32_t y1, uint32_t colour) {
    damage(y0, y1);
    for (uint32_t y = y0; y < y1; y++) {
        uint32_t *line = (uint32_t *)(fbc.vram + (size_t)y * fbc.pitch);
        for (uint32_t x = x0; x < x1; x++) line[x] = colour;
    }
}

static void *alloc_cells(size_t count) {
    return kmalloc(count * sizeof(struct fb_cell));
}

static int highest_set_bit(uint32_t mask) {
    int top = -1;
    for (int bit = 0; bit < 32; bit++)
        if (mask & (1u << bit)) top = bit;
    return top;
}

const char *fbcon_unusable_reason(const struct boot_framebuffer *fb) {
    if (!fb || fb->format == BOOT_PIXEL_NONE || fb->base == 0) return "no framebuffer";
    if (fb->width < 64 || fb->height < 64) return "smaller than 64x64 pixels";
    if (fb->format > BOOT_PIXEL_MASK) return "unknown pixel format";
    if (fb->format == BOOT_PIXEL_MASK) {
        uint32_t r = fb->red_mask, g = fb->green_mask, b = fb->blue_mask;
        if (!r || !g || !b || (r & g) || (r & b) || (g & b)) return "pixel bit masks missing or overlapping";
        if (highest_set_bit(r | g | b | fb->reserved_mask) < 24) return "pixels narrower than 32 bits";
    }
    if (fb->pitch < fb->width * 4ull) return "scan line (stride) shorter than the width";
    if ((uint64_t)fb->pitch * fb->height > fb->size) return "larger than its memory";
    return 0;
}

void fbcon_init(const struct boot_framebuffer *fb) {
    const char *problem = fbcon_unusable_reason(fb);
    if (problem) {
        if (fb && fb->format != BOOT_PIXEL_NONE && fb->base)
            kprintf("fbcon: unusable framebuffer (%ux%u, stride %u bytes, format %u): %s; serial only\n",
                    fb->width, fb->height, fb->pitch, fb->format, problem);
        return;
    }
    fbc.scale = fbcon_choose_scale(fb->width, fb->height);
    fbc.cell_w = FONT_WIDTH * fbc.scale;
    fbc.cell_h = FONT_HEIGHT * fbc.scale;
    fbc.cols = (int)(fb->width / (uint32_t)fbc.cell_w);
    int screen_rows = (int)(fb->height / (uint32_t)fbc.cell_h);
    fbc.has_status = screen_rows >= 3;
    fbc.rows = screen_rows - fbc.has_status;
    size_t cells = (size_t)fbc.cols * fbc.rows;
    fbc.cells = alloc_cells(cells);
    fbc.shown = alloc_cells(cells);
    fbc.status = alloc_cells((size_t)fbc.cols);
    fbc.status_shown = alloc_cells((size_t)fbc.cols);
    fbc.dirty = kmalloc((size_t)fbc.rows);
    if (!fbc.cells || !fbc.shown || !fbc.status || !fbc.status_shown || !fbc.dirty) {
        kfree(fbc.cells);
        kfree(fbc.shown);
        kfree(fbc.status);
        kfree(fbc.status_shown);
        kfree(fbc.dirty);
        kprintf("fbcon: out of memory, serial only\n");
        return;
    }
    fbc.vram = phys_to_virt(fb->base);
    fbc.pitch = fb->pitch;
    for (int i = 0; i < 16; i++) fbc.palette[i] = make_pixel(fb, palette_rgb[i]);
    fbc.painter_fg = fbc.painter_bg = -1;
    fbc.fg = DEFAULT_FG;
    fbc.bg = DEFAULT_BG;
    fbc.cursor_visible = 1;
    for (size_t i = 0; i < cells; i++) {
        fbc.cells[i] = fbcon_blank_cell();
        fbc.shown[i] = fbc.cells[i];
        fbc.shown[i].stale = 1; /* the firmware left its own picture */
    }
    for (int col = 0; col < fbc.cols; col++) {
        fbc.status[col] = (struct fb_cell){' ', STATUS_FG, STATUS_BG, 0, CELL_NARROW};
        fbc.status_shown[col] = fbc.status[col];
        fbc.status_shown[col].stale = 1;
    }
    memset(fbc.dirty, 1, (size_t)fbc.rows);
    /* Pixels right of / below the cells are never touched by them. */
    uint32_t grid_w = (uint32_t)(fbc.cols * fbc.cell_w), grid_h = (uint32_t)(screen_rows * fbc.cell_h);
    fill_pixels(grid_w, 0, fb->width, grid_h, fbc.palette[DEFAULT_BG]);
    fill_pixels(0, grid_h, fb->width, fb->height, fbc.palette[DEFAULT_BG]);
    fbc.active = 1;
    flush();
    flush_status();
    present_damage();
    console_register_output(fbcon_write);
    kprintf("fbcon: %ux%u, %dx%d text at scale %d\n", fb->width, fb->height, fbc.cols, screen_rows,
            fbc.scale);
    status_refresh();
}

void fbcon_set_status_line(const char *text) {
    if (!fbc.active || !fbc.has_status) return;
    const char *p = text ? text : "";
    size_t left = strlen(p);
    int col = 0;
    while (left > 0 && col < fbc.cols) {
        uint32_t cp;
        int used = utf8_decode(p, left, &cp); /* invalid bytes give U+FFFD */
        p += used;
        left -= (size_t)used;
        if (cp < 0x20) cp = ' ';
        int width = cp < 0x80 ? 1 : unicode_cell_width(cp);
        if (col + width > fbc.cols) break;
        fbc.status[col].ch = cp;
        fbc.status[col++].half = width == 2 ? CELL_WIDE_LEFT : CELL_NARROW;
        if (width == 2) {
            fbc.status[col].ch = cp;
            fbc.status[col++].half = CELL_WIDE_RIGHT;
        }
    }
    for (; col < fbc.cols; col++) fbc.status[col].ch = ' ', fbc.status[col].half = CELL_NARROW;
    flush_status();
    present_damage();
}
