/* line_editor.h - an editable input line with history, pure logic.
 *
 * Keys (kernel/console/console.h codes) go in one at a time; redraws come out
 * through the write callback as bytes plus ANSI sequences (\b, ESC[K,
 * ESC[nD...). No kernel dependencies, so it is unit-tested on the host. */
#ifndef KERNEL_LINE_EDITOR_H
#define KERNEL_LINE_EDITOR_H

#include <stddef.h>

#define LINE_EDITOR_MAX 4096   /* bytes in a line */
#define LINE_EDITOR_HISTORY 32 /* remembered lines */

typedef void (*line_editor_write_fn)(void *ctx, const char *s, size_t n);

enum line_editor_status {
    LINE_EDITOR_EDITING = 0,   /* feed more keys */
    LINE_EDITOR_DONE = 1,      /* Enter: the line is ready */
    LINE_EDITOR_CANCELLED = 2, /* Ctrl-C: the line was dropped */
};

enum line_editor_escape { ESCAPE_NONE, ESCAPE_START, ESCAPE_CSI, ESCAPE_SS3 };

struct line_editor {
    line_editor_write_fn write;
    void *ctx;
    const char *prompt;
    char buf[LINE_EDITOR_MAX + 1];
    size_t len, cursor; /* bytes; cursor is on a code point boundary */
    int warned_too_long;

    char pending[4]; /* a UTF-8 sequence still being typed */
    int pending_len, pending_need;
    enum line_editor_escape escape; /* raw escape sequences from the input */
    int escape_param;

    char history[LINE_EDITOR_HISTORY][LINE_EDITOR_MAX + 1];
    int history_count;               /* entries in use, oldest first */
    int history_pos;                 /* == history_count: the line being typed */
    char saved[LINE_EDITOR_MAX + 1]; /* the typed line while browsing history */
    size_t saved_len;
};

void line_editor_init(struct line_editor *ed, line_editor_write_fn write, void *ctx);
/* Starts a new line: writes the prompt and clears the buffer. */
void line_editor_begin(struct line_editor *ed, const char *prompt);
/* Handles one key; returns an enum line_editor_status. */
int line_editor_feed(struct line_editor *ed, int key);
/* The current line, NUL-terminated (valid after DONE until the next begin). */
const char *line_editor_line(const struct line_editor *ed);
int line_editor_history_count(const struct line_editor *ed);
/* Entry `index` counted from the oldest, or NULL. */
const char *line_editor_history_entry(const struct line_editor *ed, int index);

#endif
