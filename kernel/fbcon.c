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
 * keeps the line editor's redraws right when a line wraps. */
#include <stdint.h>
#include "kernel/fbcon.h"
#include "kernel/console.h"
#include "kernel/font8x16.h"
#include "kernel/memory.h"
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

static struct {
    int active;
    uint8_t *vram;
    uint32_t pitch;            /* bytes per scan line */
    int scale, cell_w, cell_h;
    int cols, rows;
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

static void draw_cell(int col, int row, const struct fb_cell *c, int with_cursor) {
    const uint8_t *glyph = font_glyph(c->ch);
    uint32_t fg = fbc.palette[c->fg & 15], bg = fbc.palette[c->bg & 15];
    uint8_t *line = fbc.vram + (size_t)row * fbc.cell_h * fbc.pitch + (size_t)col * fbc.cell_w * 4;
    int cursor_from = fbc.cell_h - 2 * fbc.scale;
    for (int y = 0; y < fbc.cell_h; y++, line += fbc.pitch) {
        uint32_t *px = (uint32_t *)line;
        unsigned bits = glyph[y / fbc.scale];
        if (with_cursor && y >= cursor_from) bits = 0xff;
        for (int x = 0; x < fbc.cell_w; x++) px[x] = (bits & (0x80u >> (x / fbc.scale))) ? fg : bg;
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
            if (!is_cursor && !have->stale && have->ch == want->ch && have->fg == want->fg &&
                have->bg == want->bg)
                continue;
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

void fbcon_init(const struct boot_framebuffer *fb) {
    if (!fb || fb->format == BOOT_PIXEL_NONE || fb->base == 0 || fb->width < 64 || fb->height < 64)
        return;
    if (fb->format > BOOT_PIXEL_MASK || fb->pitch < fb->width * 4ull ||
        (uint64_t)fb->pitch * fb->height > fb->size) {
        kprintf("fbcon: unusable framebuffer (%ux%u pitch %u format %u), serial only\n", fb->width,
                fb->height, fb->pitch, fb->format);
        return;
    }
    fbc.scale = fb->width > 1600 ? 2 : 1;
    fbc.cell_w = FONT_WIDTH * fbc.scale;
    fbc.cell_h = FONT_HEIGHT * fbc.scale;
    fbc.cols = (int)(fb->width / (uint32_t)fbc.cell_w);
    fbc.rows = (int)(fb->height / (uint32_t)fbc.cell_h);
    size_t cells = (size_t)fbc.cols * fbc.rows;
    fbc.cells = kmalloc(cells * sizeof *fbc.cells);
    fbc.shown = kmalloc(cells * sizeof *fbc.shown);
    fbc.dirty = kmalloc((size_t)fbc.rows);
    if (!fbc.cells || !fbc.shown || !fbc.dirty) {
        kfree(fbc.cells);
        kfree(fbc.shown);
        kfree(fbc.dirty);
        kprintf("fbcon: out of memory, serial only\n");
        return;
    }
    fbc.vram = phys_to_virt(fb->base);
    fbc.pitch = fb->pitch;
    for (int i = 0; i < 16; i++) fbc.palette[i] = make_pixel(fb, palette_rgb[i]);
    fbc.fg = DEFAULT_FG;
    fbc.bg = DEFAULT_BG;
    fbc.cursor_visible = 1;
    for (size_t i = 0; i < cells; i++) {
        fbc.cells[i] = blank_cell();
        fbc.shown[i] = fbc.cells[i];
        fbc.shown[i].stale = 1;   /* the firmware left its own picture */
    }
    memset(fbc.dirty, 1, (size_t)fbc.rows);
    /* Pixels right of / below the text grid are never touched by cells. */
    for (uint32_t y = 0; y < fb->height; y++) {
        uint32_t *line = (uint32_t *)(fbc.vram + (size_t)y * fbc.pitch);
        uint32_t from = y < (uint32_t)(fbc.rows * fbc.cell_h) ? (uint32_t)(fbc.cols * fbc.cell_w) : 0;
        for (uint32_t x = from; x < fb->width; x++) line[x] = fbc.palette[DEFAULT_BG];
    }
    fbc.active = 1;
    flush();
    console_register_output(fbcon_write);
}

void fbcon_set_status_line(const char *text) {
    (void)text; /* FIXME: not drawn yet */
}
