/* fbcon_text.c - the terminal half of the framebuffer console: bytes of text
 * and the ANSI sequences the kernel writes, turned into cells of the grid.
 *
 * The cursor column may equal `cols`: the "pending wrap" state terminals
 * use after writing the last column. Cursor moves are linear over the
 * screen (left at column 0 goes to the end of the previous row), which
 * keeps the line editor's redraws right when a line wraps. Rows form a ring
 * (top_row), so scrolling moves no memory; fbcon.c redraws what changed. */
#include "kernel/drivers/fbcon_internal.h"
#include "lib/string.h"
#include "lib/utf8.h"

struct fb_cell fbcon_blank_cell(void) {
    struct fb_cell c = {' ', fbc.fg, fbc.bg, 0, CELL_NARROW};
    if (fbc.reverse) c.bg = fbc.fg, c.fg = fbc.bg;
    return c;
}

static void clear_cells(int row, int from_col, int to_col) {
    struct fb_cell blank = fbcon_blank_cell();
    if (from_col > 0 && from_col < fbc.cols && cell_at(from_col, row)->half == CELL_WIDE_RIGHT) from_col--;
    if (to_col < fbc.cols && cell_at(to_col, row)->half == CELL_WIDE_RIGHT) to_col++;
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

/* Blanks the rest of a wide character of which (col, row) is one half, so
 * no half glyph stays on screen when the cell is overwritten. */
static void break_wide_char(int col, int row) {
    struct fb_cell *c = cell_at(col, row);
    int other = c->half == CELL_WIDE_RIGHT ? col - 1 : c->half == CELL_WIDE_LEFT ? col + 1 : -1;
    if (other < 0 || other >= fbc.cols) return;
    struct fb_cell *o = cell_at(other, row);
    o->ch = ' ';
    o->half = CELL_NARROW;
}

static void put_char(uint32_t ch) {
    int width = ch < 0x80 ? 1 : unicode_cell_width(ch);
    /* A wide character that does not fit at the line's end goes to the next line. */
    if (fbc.cx + width > fbc.cols) {
        if (fbc.cx < fbc.cols) clear_cells(fbc.cy, fbc.cx, fbc.cols);
        fbc.cx = 0;
        line_feed();
    }
    struct fb_cell c = {ch, fbc.fg, fbc.bg, 0, CELL_NARROW};
    if (fbc.bold && c.fg < 8) c.fg += 8;
    if (fbc.reverse) {
        uint8_t t = c.fg;
        c.fg = c.bg;
        c.bg = t;
    }
    struct fb_cell *at = cell_at(fbc.cx, fbc.cy);
    if (at->half != CELL_NARROW) break_wide_char(fbc.cx, fbc.cy);
    if (width == 2) {
        struct fb_cell *right = cell_at(fbc.cx + 1, fbc.cy);
        if (right->half == CELL_WIDE_LEFT) break_wide_char(fbc.cx + 1, fbc.cy);
        c.half = CELL_WIDE_LEFT;
        *at = c;
        c.half = CELL_WIDE_RIGHT;
        *right = c;
    } else {
        *at = c;
    }
    fbc.dirty[fbc.cy] = 1;
    fbc.cx += width;
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

static int clamp(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

static void apply_sgr(void) {
    if (fbc.param_count == 0) fbc.params[fbc.param_count++] = 0;
    for (int i = 0; i < fbc.param_count; i++) {
        int p = fbc.params[i];
        if (p == 0)
            fbc.fg = DEFAULT_FG, fbc.bg = DEFAULT_BG, fbc.bold = 0, fbc.reverse = 0;
        else if (p == 1)
            fbc.bold = 1;
        else if (p == 22)
            fbc.bold = 0;
        else if (p == 7)
            fbc.reverse = 1;
        else if (p == 27)
            fbc.reverse = 0;
        else if (p >= 30 && p <= 37)
            fbc.fg = (uint8_t)(p - 30);
        else if (p == 39)
            fbc.fg = DEFAULT_FG;
        else if (p >= 40 && p <= 47)
            fbc.bg = (uint8_t)(p - 40);
        else if (p == 49)
            fbc.bg = DEFAULT_BG;
        else if (p >= 90 && p <= 97)
            fbc.fg = (uint8_t)(p - 90 + 8);
        else if (p >= 100 && p <= 107)
            fbc.bg = (uint8_t)(p - 100 + 8);
        /* 256-colour and RGB forms carry extra parameters: skip them. */
        else if ((p == 38 || p == 48) && i + 1 < fbc.param_count)
            i += fbc.params[i + 1] == 5 ? 2 : 4;
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
    case 'A':
        fbc.cy = clamp(fbc.cy - n, 0, fbc.rows - 1);
        break;
    case 'B':
        fbc.cy = clamp(fbc.cy + n, 0, fbc.rows - 1);
        break;
    case 'C':
        move_linear(n);
        break;
    case 'D':
        move_linear(-(long)n);
        break;
    case 'G':
        fbc.cx = clamp(n - 1, 0, fbc.cols - 1);
        break;
    case 'H':
    case 'f':
        fbc.cy = clamp(n - 1, 0, fbc.rows - 1);
        fbc.cx = clamp((fbc.param_count > 1 && fbc.params[1] > 0 ? fbc.params[1] : 1) - 1, 0, fbc.cols - 1);
        break;
    case 'J':
        erase_display(p0);
        break;
    case 'K': {
        int cx = fbc.cx < fbc.cols ? fbc.cx : fbc.cols;
        if (p0 == 0)
            clear_cells(fbc.cy, cx, fbc.cols);
        else if (p0 == 1)
            clear_cells(fbc.cy, 0, cx < fbc.cols ? cx + 1 : fbc.cols);
        else
            clear_cells(fbc.cy, 0, fbc.cols);
        break;
    }
    case 'm':
        apply_sgr();
        break;
    default:
        break; /* unsupported: ignored */
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
            fbc.ansi = ANSI_NORMAL; /* two-byte escapes: ignored */
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
        fbc.ansi = ANSI_NORMAL; /* broken sequence: drop it */
    }
}

/* Takes one byte >= 0x80: starts or continues a UTF-8 sequence, and puts
 * the character once complete. Overlong forms, surrogates, code points past
 * U+10FFFF and stray bytes show as U+FFFD. */
static void feed_utf8(uint8_t b) {
    if ((b & 0xc0) == 0x80) {
        if (fbc.utf8_need == 0) {
            put_char(REPLACEMENT_CHAR);
            return;
        }
        fbc.utf8_cp = fbc.utf8_cp << 6 | (b & 0x3f);
        if (--fbc.utf8_need > 0) return;
        uint32_t cp = fbc.utf8_cp;
        int valid = cp >= fbc.utf8_min && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff);
        put_char(valid ? cp : REPLACEMENT_CHAR);
        return;
    }
    if (b >= 0xc2 && b <= 0xdf) {
        fbc.utf8_need = 1, fbc.utf8_cp = b & 0x1f, fbc.utf8_min = 0x80;
    } else if (b >= 0xe0 && b <= 0xef) {
        fbc.utf8_need = 2, fbc.utf8_cp = b & 0x0f, fbc.utf8_min = 0x800;
    } else if (b >= 0xf0 && b <= 0xf4) {
        fbc.utf8_need = 3, fbc.utf8_cp = b & 0x07, fbc.utf8_min = 0x10000;
    } else {
        put_char(REPLACEMENT_CHAR); /* c0, c1, f5-ff never start a character */
    }
}

void fbcon_feed_byte(uint8_t b) {
    if (fbc.ansi != ANSI_NORMAL) {
        feed_escape(b);
        return;
    }
    if (fbc.utf8_need > 0 && (b & 0xc0) != 0x80) {
        fbc.utf8_need = 0;
        put_char(REPLACEMENT_CHAR); /* truncated sequence: this byte starts anew */
    }
    if (b >= 0x80) {
        feed_utf8(b);
        return;
    }
    switch (b) {
    case 0x1b:
        fbc.ansi = ANSI_ESCAPE;
        return;
    case '\n':
        fbc.cx = 0;
        line_feed();
        return;
    case '\r':
        fbc.cx = 0;
        return;
    case '\b':
        move_linear(-1);
        return;
    case '\t': {
        if (fbc.cx >= fbc.cols) {
            fbc.cx = 0;
            line_feed();
        }
        int next = (fbc.cx / TAB_WIDTH + 1) * TAB_WIDTH;
        fbc.cx = next < fbc.cols ? next : fbc.cols;
        return;
    }
    default:
        break;
    }
    if (b < 0x20 || b == 0x7f) return; /* other control bytes (bell...) */
    put_char(b);
}
