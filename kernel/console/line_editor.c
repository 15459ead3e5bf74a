/* line_editor.c - an editable input line with history (pure logic).
 *
 * The buffer always holds complete UTF-8 sequences: bytes of a multi-byte
 * character are collected in `pending` and inserted together, so the cursor
 * never stands inside a character. A character takes one column, or two for
 * East Asian wide ones (as the screen and terminals draw them).
 * Redraws only touch the part of the line right of the cursor; moving right
 * re-writes characters instead of using ESC[C so it works on any terminal. */
#include "kernel/console/line_editor.h"
#include "kernel/console/console.h"
#include "lib/format.h"
#include "lib/string.h"
#include "lib/utf8.h"

#define CTRL(c) ((c)&0x1f)

static void emit(struct line_editor *ed, const char *s, size_t n) {
    if (n) ed->write(ed->ctx, s, n);
}

static void emit_str(struct line_editor *ed, const char *s) {
    emit(ed, s, strlen(s));
}

static int is_continuation(unsigned char b) {
    return (b & 0xc0) == 0x80;
}

/* Screen columns of the characters in buf[from, to). */
static size_t columns(const struct line_editor *ed, size_t from, size_t to) {
    size_t n = 0;
    for (size_t i = from; i < to;) {
        if ((unsigned char)ed->buf[i] < 0x80) {
            n++, i++;
            continue;
        }
        uint32_t cp;
        i += (size_t)utf8_decode(ed->buf + i, to - i, &cp);
        n += (size_t)unicode_cell_width(cp);
    }
    return n;
}

static size_t prev_boundary(const struct line_editor *ed, size_t pos) {
    if (pos == 0) return 0;
    pos--;
    while (pos > 0 && is_continuation((unsigned char)ed->buf[pos])) pos--;
    return pos;
}

static size_t next_boundary(const struct line_editor *ed, size_t pos) {
    if (pos >= ed->len) return ed->len;
    pos++;
    while (pos < ed->len && is_continuation((unsigned char)ed->buf[pos])) pos++;
    return pos;
}

static void move_left(struct line_editor *ed, size_t cols) {
    if (cols == 0) return;
    if (cols == 1) {
        emit(ed, "\b", 1);
        return;
    }
    char seq[32];
    int n = snprintf(seq, sizeof seq, "\x1b[%zuD", cols);
    emit(ed, seq, (size_t)n);
}

static void spaces(struct line_editor *ed, size_t count) {
    static const char blanks[] = "                ";
    while (count > 0) {
        size_t n = count < sizeof blanks - 1 ? count : sizeof blanks - 1;
        emit(ed, blanks, n);
        count -= n;
    }
}

/* Rewrites everything right of the cursor, blanks `erase` columns the line
 * lost, and puts the terminal cursor back where ed->cursor is. */
static void redraw_tail(struct line_editor *ed, size_t erase) {
    emit(ed, ed->buf + ed->cursor, ed->len - ed->cursor);
    spaces(ed, erase);
    if (erase) emit_str(ed, "\x1b[K");
    move_left(ed, columns(ed, ed->cursor, ed->len) + erase);
}

/* Replaces the whole line with `text` (history browsing, kill line). */
static void replace_line(struct line_editor *ed, const char *text, size_t n) {
    size_t old_cols = columns(ed, 0, ed->len);
    move_left(ed, columns(ed, 0, ed->cursor));
    memcpy(ed->buf, text, n);
    ed->len = ed->cursor = n;
    ed->buf[n] = '\0';
    size_t new_cols = columns(ed, 0, n);
    emit(ed, ed->buf, n);
    size_t erase = old_cols > new_cols ? old_cols - new_cols : 0;
    spaces(ed, erase);
    if (erase) emit_str(ed, "\x1b[K");
    move_left(ed, erase);
}

static void reprint_line(struct line_editor *ed) {
    emit_str(ed, ed->prompt);
    emit(ed, ed->buf, ed->len);
    move_left(ed, columns(ed, ed->cursor, ed->len));
}

static void insert(struct line_editor *ed, const char *bytes, size_t n) {
    if (ed->len + n > LINE_EDITOR_MAX) {
        if (ed->warned_too_long) {
            emit_str(ed, "\a");
            return;
        }
        char msg[80];
        int m = snprintf(msg, sizeof msg, "\a\nline too long, truncated at %d bytes\n", LINE_EDITOR_MAX);
        emit(ed, msg, (size_t)m);
        ed->warned_too_long = 1;
        reprint_line(ed);
        return;
    }
    memmove(ed->buf + ed->cursor + n, ed->buf + ed->cursor, ed->len - ed->cursor);
    memcpy(ed->buf + ed->cursor, bytes, n);
    ed->len += n;
    ed->buf[ed->len] = '\0';
    emit(ed, bytes, n);
    ed->cursor += n;
    if (ed->cursor < ed->len) redraw_tail(ed, 0);
}

static void delete_range(struct line_editor *ed, size_t from, size_t to) {
    size_t cols = columns(ed, from, to);
    memmove(ed->buf + from, ed->buf + to, ed->len - to);
    ed->len -= to - from;
    ed->buf[ed->len] = '\0';
    ed->cursor = from;
    redraw_tail(ed, cols);
}

static void backspace(struct line_editor *ed) {
    if (ed->cursor == 0) return;
    size_t from = prev_boundary(ed, ed->cursor);
    move_left(ed, columns(ed, from, ed->cursor));
    delete_range(ed, from, ed->cursor);
}

static void cursor_left(struct line_editor *ed) {
    if (ed->cursor == 0) return;
    size_t from = prev_boundary(ed, ed->cursor);
    move_left(ed, columns(ed, from, ed->cursor));
    ed->cursor = from;
}

static void cursor_right(struct line_editor *ed) {
    size_t next = next_boundary(ed, ed->cursor);
    emit(ed, ed->buf + ed->cursor, next - ed->cursor);
    ed->cursor = next;
}

static void cursor_home(struct line_editor *ed) {
    move_left(ed, columns(ed, 0, ed->cursor));
    ed->cursor = 0;
}

static void cursor_end(struct line_editor *ed) {
    emit(ed, ed->buf + ed->cursor, ed->len - ed->cursor);
    ed->cursor = ed->len;
}

static void history_up(struct line_editor *ed) {
    if (ed->history_pos == 0) return;
    if (ed->history_pos == ed->history_count) {
        memcpy(ed->saved, ed->buf, ed->len);
        ed->saved_len = ed->len;
    }
    ed->history_pos--;
    const char *entry = ed->history[ed->history_pos];
    replace_line(ed, entry, strlen(entry));
}

static void history_down(struct line_editor *ed) {
    if (ed->history_pos >= ed->history_count) return;
    ed->history_pos++;
    if (ed->history_pos == ed->history_count) {
        replace_line(ed, ed->saved, ed->saved_len);
    } else {
        const char *entry = ed->history[ed->history_pos];
        replace_line(ed, entry, strlen(entry));
    }
}

static void history_add(struct line_editor *ed) {
    if (ed->len == 0) return;
    if (ed->history_count > 0 && strcmp(ed->history[ed->history_count - 1], ed->buf) == 0) return;
    if (ed->history_count == LINE_EDITOR_HISTORY) {
        memmove(ed->history[0], ed->history[1], sizeof ed->history[0] * (LINE_EDITOR_HISTORY - 1));
        ed->history_count--;
    }
    memcpy(ed->history[ed->history_count], ed->buf, ed->len + 1);
    ed->history_count++;
}

/* Collects the bytes of one UTF-8 character; invalid bytes are dropped.
 * Returns 1 when `b` was consumed. */
static int feed_utf8(struct line_editor *ed, unsigned char b) {
    if (ed->pending_len == 0) {
        if (b >= 0xc2 && b <= 0xdf)
            ed->pending_need = 2;
        else if (b >= 0xe0 && b <= 0xef)
            ed->pending_need = 3;
        else if (b >= 0xf0 && b <= 0xf4)
            ed->pending_need = 4;
        else
            return 1; /* stray continuation or impossible lead byte */
        ed->pending[ed->pending_len++] = (char)b;
        return 1;
    }
    if (!is_continuation(b)) {
        ed->pending_len = 0; /* truncated: drop it, b starts anew */
        return 0;
    }
    if (ed->pending_len == 1) {
        /* No overlong forms, surrogates or code points past U+10FFFF. */
        unsigned char lead = (unsigned char)ed->pending[0];
        if ((lead == 0xe0 && b < 0xa0) || (lead == 0xed && b >= 0xa0) || (lead == 0xf0 && b < 0x90) ||
            (lead == 0xf4 && b >= 0x90)) {
            ed->pending_len = 0;
            return 1;
        }
    }
    ed->pending[ed->pending_len++] = (char)b;
    if (ed->pending_len == ed->pending_need) {
        ed->pending_len = 0;
        insert(ed, ed->pending, (size_t)ed->pending_need);
    }
    return 1;
}

/* Raw ESC [ ... / ESC O x sequences (when keys arrive undecoded): the
 * known ones become key codes, the rest vanish. Returns the key, KEY_NONE
 * while inside a sequence, or -2 when `key` ended the sequence unused. */
static int feed_escape(struct line_editor *ed, int key) {
    if (ed->escape == ESCAPE_START) {
        ed->escape_param = 0;
        if (key == '[')
            ed->escape = ESCAPE_CSI;
        else if (key == 'O')
            ed->escape = ESCAPE_SS3;
        else
            ed->escape = ESCAPE_NONE; /* Alt+key and the like: ignored */
        return KEY_NONE;
    }
    if (key >= '0' && key <= '9' && ed->escape == ESCAPE_CSI) {
        if (ed->escape_param < 1000) ed->escape_param = ed->escape_param * 10 + (key - '0');
        return KEY_NONE;
    }
    if (key == ';' && ed->escape == ESCAPE_CSI) return KEY_NONE;
    enum line_editor_escape kind = ed->escape;
    ed->escape = ESCAPE_NONE;
    if (key < 0x20 || key > 0x7e) return -2; /* a real key interrupted it */
    if (key != '~') return console_vt_final_key((char)key);
    if (kind != ESCAPE_CSI) return KEY_NONE;
    switch (ed->escape_param) {
    case 1:
    case 7:
        return KEY_HOME;
    case 4:
    case 8:
        return KEY_END;
    case 3:
        return KEY_DELETE;
    default:
        return KEY_NONE;
    }
}

void line_editor_init(struct line_editor *ed, line_editor_write_fn write, void *ctx) {
    memset(ed, 0, sizeof *ed);
    ed->write = write;
    ed->ctx = ctx;
    ed->prompt = "";
}

void line_editor_begin(struct line_editor *ed, const char *prompt) {
    ed->prompt = prompt ? prompt : "";
    ed->len = ed->cursor = 0;
    ed->buf[0] = '\0';
    ed->warned_too_long = 0;
    ed->pending_len = 0;
    ed->escape = ESCAPE_NONE;
    ed->history_pos = ed->history_count;
    emit_str(ed, ed->prompt);
}

int line_editor_feed(struct line_editor *ed, int key) {
    if (ed->escape != ESCAPE_NONE) {
        int decoded = feed_escape(ed, key);
        if (decoded == KEY_NONE) return LINE_EDITOR_EDITING;
        if (decoded != -2) key = decoded;
    }
    if (key >= 0x80 && key <= 0xff) {
        if (feed_utf8(ed, (unsigned char)key)) return LINE_EDITOR_EDITING;
        return line_editor_feed(ed, key); /* pending sequence dropped; retry */
    }
    ed->pending_len = 0; /* anything else interrupts a partial character */

    if (key >= 0x20 && key < 0x7f) {
        char c = (char)key;
        insert(ed, &c, 1);
        return LINE_EDITOR_EDITING;
    }
    switch (key) {
    case '\n':
    case '\r':
        cursor_end(ed);
        emit(ed, "\n", 1);
        ed->buf[ed->len] = '\0';
        history_add(ed);
        ed->history_pos = ed->history_count;
        return LINE_EDITOR_DONE;
    case CTRL('c'):
        emit_str(ed, "^C\n");
        ed->len = ed->cursor = 0;
        ed->buf[0] = '\0';
        ed->history_pos = ed->history_count;
        return LINE_EDITOR_CANCELLED;
    case '\b':
    case 0x7f:
        backspace(ed);
        break;
    case KEY_DELETE:
    case CTRL('d'):
        if (ed->cursor < ed->len) delete_range(ed, ed->cursor, next_boundary(ed, ed->cursor));
        break;
    case KEY_LEFT:
    case CTRL('b'):
        cursor_left(ed);
        break;
    case KEY_RIGHT:
    case CTRL('f'):
        cursor_right(ed);
        break;
    case KEY_HOME:
    case CTRL('a'):
        cursor_home(ed);
        break;
    case KEY_END:
    case CTRL('e'):
        cursor_end(ed);
        break;
    case KEY_UP:
    case CTRL('p'):
        history_up(ed);
        break;
    case KEY_DOWN:
    case CTRL('n'):
        history_down(ed);
        break;
    case CTRL('u'):
        replace_line(ed, "", 0);
        break;
    case CTRL('k'):
        if (ed->cursor < ed->len) delete_range(ed, ed->cursor, ed->len);
        break;
    case CTRL('l'):
        emit_str(ed, "\x1b[2J\x1b[H");
        reprint_line(ed);
        break;
    case 0x1b:
        ed->escape = ESCAPE_START;
        break;
    default:
        break; /* other control bytes, page up/down: ignored */
    }
    return LINE_EDITOR_EDITING;
}

const char *line_editor_line(const struct line_editor *ed) {
    return ed->buf;
}

int line_editor_history_count(const struct line_editor *ed) {
    return ed->history_count;
}

const char *line_editor_history_entry(const struct line_editor *ed, int index) {
    if (index < 0 || index >= ed->history_count) return NULL;
    return ed->history[index];
}
