/* fbcon_internal.h - what the two halves of the framebuffer console share:
 * the cell grid and its state (fbcon.c paints it, fbcon_text.c fills it). */
#ifndef KERNEL_FBCON_INTERNAL_H
#define KERNEL_FBCON_INTERNAL_H

#include <stdint.h>

/* A double-width character fills two cells: the left one holds its code
 * point, the right one the same code point marked CELL_WIDE_RIGHT. */
enum cell_half { CELL_NARROW, CELL_WIDE_LEFT, CELL_WIDE_RIGHT };

struct fb_cell {
    uint32_t ch;    /* a code point */
    uint8_t fg, bg; /* palette indices */
    uint8_t stale;  /* only in the on-screen grid: must be redrawn */
    uint8_t half;   /* enum cell_half */
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

struct fbcon_state {
    int active;
    uint8_t *vram;
    uint32_t pitch; /* bytes per scan line */
    int scale, cell_w, cell_h;
    int cols, rows; /* the text grid (the status row is below it) */
    int has_status;
    struct fb_cell *status, *status_shown; /* cols cells each */
    struct fb_cell *cells;                 /* text, rows in a ring starting at top_row */
    struct fb_cell *shown;                 /* what the screen shows, screen order */
    uint8_t *dirty;                        /* per screen row */
    int top_row;
    int cx, cy; /* cursor; cx == cols means pending wrap */
    int cursor_visible;
    int cursor_drawn, cursor_x, cursor_y;
    uint8_t fg, bg;
    int bold, reverse;
    uint32_t palette[16];
    enum ansi_state ansi;
    int params[ANSI_MAX_PARAMS];
    int param_count, private_marker;
    uint32_t utf8_cp;  /* the character being decoded */
    int utf8_need;     /* continuation bytes still to come */
    uint32_t utf8_min; /* the smallest code point its length may encode */
    /* nibble_pixels[n]: the 4 glyph bits of n, scaled, in painter_fg/bg. */
    uint32_t nibble_pixels[16][4 * MAX_SCALE];
    int painter_fg, painter_bg;
};
/* The one console (defined in fbcon.c). */
extern struct fbcon_state fbc;

static inline struct fb_cell *cell_at(int col, int row) {
    int ring_row = (fbc.top_row + row) % fbc.rows;
    return &fbc.cells[ring_row * fbc.cols + col];
}

/* A space in the current colours (swapped under reverse video). */
struct fb_cell fbcon_blank_cell(void);
/* What an uncovered character or invalid UTF-8 shows. */
#define REPLACEMENT_CHAR 0xfffd

/* Interprets one byte of text: controls, ANSI sequences, UTF-8 characters. */
void fbcon_feed_byte(uint8_t b);

#endif
