/* fbcon.c - text console on the GOP framebuffer.
 *
 * Text lives in a grid of cells (a ring of rows, so scrolling moves no
 * memory); a second grid remembers what is on screen. Writes update the
 * grid and mark rows dirty; the flush at the end of each write redraws only
 * cells that changed. The framebuffer is never read (VRAM reads are slow).
 *
 * The cursor column may equal `cols`: the "pending wrap" state terminals
 * use after writing the last column. Cursor moves are linear over the
 * screen (left at column 0 goes to the end of the previous row), which
 * keeps the line editor's redraws right when a line wraps.
 *
 * The last screen row is the status line (kernel/console/status.c): drawn in
 * inverse colours, outside the text grid, so text scrolls above it.
 * Pixels are written as whole 64-bit pieces of a glyph row from a table of
 * pre-coloured nibbles: under emulation every guest instruction counts. */
#include <stdint.h>
#include "kernel/drivers/fbcon.h"
#include "kernel/console/console.h"
#include "kernel/drivers/font8x16.h"
#include "kernel/mm/memory.h"
#include "kernel/console/status.h"
#include "lib/string.h"

struct fb_cell {
    uint8_t ch;
    uint8_t fg, bg;   /* palette indices */
    uint8_t stale;    /* only in the on-screen grid: must be redrawn */
};

enum ansi_state { ANSI_NORMAL, ANSI_ESCAPE, ANSI_CSI };

#define ANSI_MAX_PARAMS 8
#define DEFAULT_FG 7
#define DEFAULT_BG 0
#define TAB_WIDTH 8
#define STATUS_FG 0
#define STATUS_BG 7
#define MAX_SCALE 4
#define TARGET_MAX_COLS 160

/* Two pixels; the framebuffer pitch need not keep them 8-byte aligned. */
typedef uint64_t pixel_pair __attribute__((aligned(1), may_alias));

static struct {
    int active;
    uint8_t *vram;
    uint32_t pitch;            /* bytes per scan line */
    int scale, cell_w, cell_h;
    int cols, rows;            /* the text grid (the status row is below it) */
    int has_status;
    struct fb_cell *status, *status_shown;   /* cols cells each */
    struct fb_cell *cells;     /* text, rows in a ring starting at top_row */
    struct fb_cell *shown;     /* what the screen shows, screen order */
    uint8_t *dirty;            /* per screen row */
    int top_row;
    int cx, cy;                /* cursor; cx == cols means pending wrap */
    int cursor_visible;
    int cursor_drawn, cursor_x, cursor_y;
    uint8_t fg, bg;
    int bold, reverse;
    uint32_t palette[16];
    enum ansi_state ansi;
    int params[ANSI_MAX_PARAMS];
    int param_count, private_marker;
    int utf8_skip;             /* continuation bytes still to swallow */
    /* nibble_pixels[n]: the 4 glyph bits of n, scaled, in painter_fg/bg. */
    uint32_t nibble_pixels[16][4 * MAX_SCALE];
    int painter_fg, painter_bg;
} fbc;

/* The classic 16-colour palette (VGA-like), as RGB. */
static const uint8_t palette_rgb[16][3] = {
    {0, 0, 0},       {170, 0, 0},     {0, 170, 0},     {170, 85, 0},
    {0, 0, 170},     {170, 0, 170},   {0, 170, 170},   {192, 192, 192},
    {85, 85, 85},    {255, 85, 85},   {85, 255, 85},   {255, 255, 85},
    {85, 85, 255},   {255, 85, 255},  {85, 255, 255},  {255, 255, 255},
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
    uint32_t v = bits >= 8 ? (uint32_t)value << (bits - 8) : (uint32_t)value >> (8 - bits);
    return (v << shift) & mask;
}

static uint32_t make_pixel(const struct boot_framebuffer *fb, const uint8_t rgb[3]) {
    switch (fb->format) {
    case BOOT_PIXEL_RGBX: return rgb[0] | (uint32_t)rgb[1] << 8 | (uint32_t)rgb[2] << 16;
    case BOOT_PIXEL_BGRX: return rgb[2] | (uint32_t)rgb[1] << 8 | (uint32_t)rgb[0] << 16;
    default:
        return channel_to_mask(rgb[0], fb->red_mask) | channel_to_mask(rgb[1], fb->green_mask) |
               channel_to_mask(rgb[2], fb->blue_mask);
    }
}

static struct fb_cell *cell_at(int col, int row) {
    int ring_row = (fbc.top_row + row) % fbc.rows;
    return &fbc.cells[ring_row * fbc.cols + col];
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

/* `row` is a screen row (the status line is row fbc.rows). */
static void draw_cell(int col, int row, const struct fb_cell *c, int with_cursor) {
    prepare_painter(c->fg, c->bg);
    uint8_t *line = fbc.vram + (size_t)row * fbc.cell_h * fbc.pitch + (size_t)col * fbc.cell_w * 4;
    const uint8_t *glyph = font_glyph(c->ch);
    int cursor_from = with_cursor ? FONT_HEIGHT - 2 : FONT_HEIGHT;
    switch (fbc.scale) {
    case 1: paint_cell(line, glyph, cursor_from, 1); break;
    case 2: paint_cell(line, glyph, cursor_from, 2); break;
    case 3: paint_cell(line, glyph, cursor_from, 3); break;
    default: paint_cell(line, glyph, cursor_from, 4); break;
    }
}

static int same_cell(const struct fb_cell *a, const struct fb_cell *b) {
    return a->ch == b->ch && a->fg == b->fg && a->bg == b->bg;
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
            have->stale = is_cursor;   /* the cursor cell is redrawn once it moves */
        }
    }
    if (fbc.cursor_visible) {
        fbc.cursor_drawn = 1;
        fbc.cursor_x = cur_x;
        fbc.cursor_y = cur_y;
    }
}

static struct fb_cell blank_cell(void) {
    struct fb_cell c = {' ', fbc.fg, fbc.bg, 0};
    if (fbc.reverse) c.bg = fbc.fg, c.fg = fbc.bg;
    return c;
}

static void clear_cells(int row, int from_col, int to_col) {
    struct fb_cell blank = blank_cell();
    for (int col = from_col; col < to_col; col++) *cell_at(col, row) = blank;
    fbc.dirty[row] = 1;
}

static void scroll_up(void) {
    fbc.top_row = (fbc.top_row + 1) % fbc.rows;
    clear_cells(fbc.rows - 1, 0, fbc.cols);
    memset(fbc.dirty, 1, (size_t)fbc.rows);
}

static void line_feed(void) {
    if (++fbc.cy >= fbc.rows) {
        fbc.cy = fbc.rows - 1;
        scroll_up();
    }
}

static void put_glyph(uint8_t ch) {
    if (fbc.cx >= fbc.cols) {
        fbc.cx = 0;
        line_feed();
    }
    struct fb_cell c = {ch, fbc.fg, fbc.bg, 0};
    if (fbc.bold && c.fg < 8) c.fg += 8;
    if (fbc.reverse) {
        uint8_t t = c.fg;
        c.fg = c.bg;
        c.bg = t;
    }
    *cell_at(fbc.cx, fbc.cy) = c;
    fbc.dirty[fbc.cy] = 1;
    fbc.cx++;
}

/* Moves the cursor by `delta` cells in reading order, clamped to the screen. */
static void move_linear(long delta) {
    long limit = (long)fbc.rows * fbc.cols;
    long pos = (long)fbc.cy * fbc.cols + fbc.cx + delta;
    if (pos < 0) pos = 0;
    if (pos > limit) pos = limit;
    fbc.cy = (int)(pos / fbc.cols);
    fbc.cx = (int)(pos % fbc.cols);
    if (fbc.cy >= fbc.rows) {
        fbc.cy = fbc.rows - 1;
        fbc.cx = fbc.cols;
    }
}

static int clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

static void apply_sgr(void) {
    if (fbc.param_count == 0) fbc.params[fbc.param_count++] = 0;
    for (int i = 0; i < fbc.param_count; i++) {
        int p = fbc.params[i];
        if (p == 0) fbc.fg = DEFAULT_FG, fbc.bg = DEFAULT_BG, fbc.bold = 0, fbc.reverse = 0;
        else if (p == 1) fbc.bold = 1;
        else if (p == 22) fbc.bold = 0;
        else if (p == 7) fbc.reverse = 1;
        else if (p == 27) fbc.reverse = 0;
        else if (p >= 30 && p <= 37) fbc.fg = (uint8_t)(p - 30);
        else if (p == 39) fbc.fg = DEFAULT_FG;
        else if (p >= 40 && p <= 47) fbc.bg = (uint8_t)(p - 40);
        else if (p == 49) fbc.bg = DEFAULT_BG;
        else if (p >= 90 && p <= 97) fbc.fg = (uint8_t)(p - 90 + 8);
        else if (p >= 100 && p <= 107) fbc.bg = (uint8_t)(p - 100 + 8);
        /* 256-colour and RGB forms carry extra parameters: skip them. */
        else if ((p == 38 || p == 48) && i + 1 < fbc.param_count) i += fbc.params[i + 1] == 5 ? 2 : 4;
    }
}

static void erase_display(int mode) {
    if (mode == 2 || mode == 3) {
        for (int row = 0; row < fbc.rows; row++) clear_cells(row, 0, fbc.cols);
        return;
    }
    int cx = fbc.cx < fbc.cols ? fbc.cx : fbc.cols - 1;
    if (mode == 0) {
        clear_cells(fbc.cy, cx, fbc.cols);
        for (int row = fbc.cy + 1; row < fbc.rows; row++) clear_cells(row, 0, fbc.cols);
    } else if (mode == 1) {
        for (int row = 0; row < fbc.cy; row++) clear_cells(row, 0, fbc.cols);
        clear_cells(fbc.cy, 0, cx + 1);
    }
}

static void run_csi(uint8_t final) {
    int p0 = fbc.param_count > 0 ? fbc.params[0] : 0;
    int n = p0 > 0 ? p0 : 1;
    if (fbc.private_marker) {
        if (p0 == 25 && (final == 'h' || final == 'l')) fbc.cursor_visible = final == 'h';
        return;
    }
    switch (final) {
    case 'A': fbc.cy = clamp(fbc.cy - n, 0, fbc.rows - 1); break;
    case 'B': fbc.cy = clamp(fbc.cy + n, 0, fbc.rows - 1); break;
    case 'C': move_linear(n); break;
    case 'D': move_linear(-(long)n); break;
    case 'G': fbc.cx = clamp(n - 1, 0, fbc.cols - 1); break;
    case 'H':
    case 'f':
        fbc.cy = clamp(n - 1, 0, fbc.rows - 1);
        fbc.cx = clamp((fbc.param_count > 1 && fbc.params[1] > 0 ? fbc.params[1] : 1) - 1, 0, fbc.cols - 1);
        break;
    case 'J': erase_display(p0); break;
    case 'K': {
        int cx = fbc.cx < fbc.cols ? fbc.cx : fbc.cols;
        if (p0 == 0) clear_cells(fbc.cy, cx, fbc.cols);
        else if (p0 == 1) clear_cells(fbc.cy, 0, cx < fbc.cols ? cx + 1 : fbc.cols);
        else clear_cells(fbc.cy, 0, fbc.cols);
        break;
    }
    case 'm': apply_sgr(); break;
    default: break;   /* unsupported: ignored */
    }
}

static void feed_escape(uint8_t b) {
    if (fbc.ansi == ANSI_ESCAPE) {
        if (b == '[') {
            fbc.ansi = ANSI_CSI;
            fbc.param_count = 0;
            fbc.private_marker = 0;
            memset(fbc.params, 0, sizeof fbc.params);
        } else {
            fbc.ansi = ANSI_NORMAL;   /* two-byte escapes: ignored */
        }
        return;
    }
    if (b >= '0' && b <= '9') {
        if (fbc.param_count == 0) fbc.param_count = 1;
        int *p = &fbc.params[fbc.param_count - 1];
        if (*p < 10000) *p = *p * 10 + (b - '0');
    } else if (b == ';') {
        if (fbc.param_count == 0) fbc.param_count = 1;
        if (fbc.param_count < ANSI_MAX_PARAMS) fbc.params[fbc.param_count++] = 0;
    } else if (b == '?' || b == '>' || b == '=') {
        fbc.private_marker = 1;
    } else if (b >= 0x40 && b <= 0x7e) {
        fbc.ansi = ANSI_NORMAL;
        run_csi(b);
    } else if (b < 0x20 || b > 0x7e) {
        fbc.ansi = ANSI_NORMAL;   /* broken sequence: drop it */
    }
}

static void feed_byte(uint8_t b) {
    if (fbc.ansi != ANSI_NORMAL) {
        feed_escape(b);
        return;
    }
    if (fbc.utf8_skip > 0) {
        if ((b & 0xc0) == 0x80) {
            fbc.utf8_skip--;
            return;
        }
        fbc.utf8_skip = 0;   /* truncated sequence: this byte starts anew */
    }
    switch (b) {
    case 0x1b: fbc.ansi = ANSI_ESCAPE; return;
    case '\n': fbc.cx = 0; line_feed(); return;
    case '\r': fbc.cx = 0; return;
    case '\b': move_linear(-1); return;
    case '\t': {
        if (fbc.cx >= fbc.cols) {
            fbc.cx = 0;
            line_feed();
        }
        int next = (fbc.cx / TAB_WIDTH + 1) * TAB_WIDTH;
        fbc.cx = next < fbc.cols ? next : fbc.cols;
        return;
    }
    default: break;
    }
    if (b < 0x20 || b == 0x7f) return;   /* other control bytes (bell...) */
    if (b >= 0xc2 && b <= 0xf4) fbc.utf8_skip = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : 1;
    put_glyph(b);   /* bytes >= 0x80 draw the box */
}

void fbcon_write(const char *s, size_t len) {
    if (!fbc.active) return;
    for (size_t i = 0; i < len; i++) feed_byte((uint8_t)s[i]);
    flush();
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
    for (uint32_t y = y0; y < y1; y++) {
        uint32_t *line = (uint32_t *)(fbc.vram + (size_t)y * fbc.pitch);
        for (uint32_t x = x0; x < x1; x++) line[x] = colour;
    }
}

static void *alloc_cells(size_t count) { return kmalloc(count * sizeof(struct fb_cell)); }

void fbcon_init(const struct boot_framebuffer *fb) {
    if (!fb || fb->format == BOOT_PIXEL_NONE || fb->base == 0 || fb->width < 64 || fb->height < 64)
        return;
    if (fb->format > BOOT_PIXEL_MASK || fb->pitch < fb->width * 4ull ||
        (uint64_t)fb->pitch * fb->height > fb->size) {
        kprintf("fbcon: unusable framebuffer (%ux%u pitch %u format %u), serial only\n", fb->width,
                fb->height, fb->pitch, fb->format);
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
        fbc.cells[i] = blank_cell();
        fbc.shown[i] = fbc.cells[i];
        fbc.shown[i].stale = 1;   /* the firmware left its own picture */
    }
    for (int col = 0; col < fbc.cols; col++) {
        fbc.status[col] = (struct fb_cell){' ', STATUS_FG, STATUS_BG, 0};
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
    console_register_output(fbcon_write);
    kprintf("fbcon: %ux%u, %dx%d text at scale %d\n", fb->width, fb->height, fbc.cols, screen_rows,
            fbc.scale);
    status_refresh();
}

void fbcon_set_status_line(const char *text) {
    if (!fbc.active || !fbc.has_status) return;
    int col = 0;
    for (const char *p = text ? text : ""; *p && col < fbc.cols; p++) {
        uint8_t b = (uint8_t)*p;
        if ((b & 0xc0) == 0x80) continue;   /* UTF-8 continuation: one box per character */
        fbc.status[col++].ch = b < 0x20 ? ' ' : b;
    }
    for (; col < fbc.cols; col++) fbc.status[col].ch = ' ';
    flush_status();
}
