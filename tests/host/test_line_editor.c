/* test_line_editor.c - the kernel's line editor on the host: keys in, line
 * and history out, and the redraw output replayed on a tiny terminal model
 * to check the screen shows exactly the prompt and the line. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The editor is kernel code that has no kernel dependencies: build it here. */
#include "kernel/console/line_editor.c"
#include "lib/utf8.h"
#include "tests/host/check.h"

/* ---- a one-line terminal: enough of VT100 to follow the editor. ---- */
#define TERM_COLS 8192
#define WIDE_RIGHT_HALF "\x01" /* the second cell of a double-width character */

/* Double-width (East Asian Wide) characters among those the tests type: CJK
 * ideographs, kana, Hangul syllables and emoticons. */
static int term_char_width(const char *c) {
    uint32_t cp;
    utf8_decode(c, strlen(c), &cp);
    int wide = (cp >= 0x3040 && cp <= 0x30ff) || (cp >= 0x4e00 && cp <= 0x9fff) ||
               (cp >= 0xac00 && cp <= 0xd7a3) || (cp >= 0x1f600 && cp <= 0x1f64f);
    return wide ? 2 : 1;
}

static struct {
    char cell[TERM_COLS][5]; /* one UTF-8 character per cell */
    int col;
    int lines;       /* newlines seen */
    int char_cell;   /* the cell of the character being written */
    char raw[65536]; /* everything written since the last reset */
    size_t raw_len;
    int esc, csi_param;
} term;

static void term_reset(void) {
    memset(&term, 0, sizeof term);
}

static void term_clear_line_from(int col) {
    for (int i = col; i < TERM_COLS; i++) term.cell[i][0] = '\0';
}

static void term_put_cell(int col, const char *text) {
    if (col >= TERM_COLS) return;
    strcpy(term.cell[col], text);
    if (col + 1 < TERM_COLS && strcmp(term.cell[col + 1], WIDE_RIGHT_HALF) == 0)
        strcpy(term.cell[col + 1], " ");
}

static void term_byte(unsigned char b) {
    if (term.raw_len < sizeof term.raw - 1) term.raw[term.raw_len++] = (char)b;
    if (term.esc == 1) {
        term.esc = b == '[' ? 2 : 0;
        term.csi_param = 0;
        return;
    }
    if (term.esc == 2) {
        if (b >= '0' && b <= '9') {
            term.csi_param = term.csi_param * 10 + (b - '0');
            return;
        }
        if (b == ';') return;
        term.esc = 0;
        int n = term.csi_param ? term.csi_param : 1;
        if (b == 'D')
            term.col = term.col > n ? term.col - n : 0;
        else if (b == 'C')
            term.col += n;
        else if (b == 'K')
            term_clear_line_from(term.col);
        else if (b == 'J')
            term_clear_line_from(0);
        else if (b == 'H')
            term.col = 0;
        return;
    }
    if (b == 0x1b)
        term.esc = 1;
    else if (b == '\b')
        term.col = term.col > 0 ? term.col - 1 : 0;
    else if (b == '\r')
        term.col = 0;
    else if (b == '\n') {
        term.lines++;
        term.col = 0;
        term_clear_line_from(0);
    } else if (b == '\a') {
    } else if ((b & 0xc0) == 0x80 && term.col > 0) {
        char *c = term.cell[term.char_cell]; /* continuation joins the character's cell */
        size_t l = strlen(c);
        if (l < 4) c[l] = (char)b, c[l + 1] = '\0';
        if ((int)strlen(c) == utf8_sequence_length((uint8_t)c[0]) && term_char_width(c) == 2) {
            term_put_cell(term.char_cell + 1, WIDE_RIGHT_HALF);
            term.col = term.char_cell + 2;
        }
    } else if (term.col < TERM_COLS) {
        char c[2] = {(char)b, '\0'};
        term_put_cell(term.col, c);
        term.char_cell = term.col++;
    }
}

static void term_write(void *ctx, const char *s, size_t n) {
    (void)ctx;
    for (size_t i = 0; i < n; i++) term_byte((unsigned char)s[i]);
}

static void term_text(char *out, size_t size) {
    size_t n = 0;
    int last = TERM_COLS - 1;
    while (last >= 0 && (term.cell[last][0] == '\0' || strcmp(term.cell[last], " ") == 0)) last--;
    for (int i = 0; i <= last; i++) {
        if (strcmp(term.cell[i], WIDE_RIGHT_HALF) == 0) continue;
        const char *c = term.cell[i][0] ? term.cell[i] : " ";
        size_t l = strlen(c);
        if (n + l + 1 > size) break;
        memcpy(out + n, c, l);
        n += l;
    }
    out[n] = '\0';
}

static size_t count_columns(const char *s, size_t bytes) {
    size_t cols = 0;
    for (size_t i = 0; i < bytes;) {
        char c[5] = {0};
        size_t n = (size_t)utf8_sequence_length((uint8_t)s[i]);
        memcpy(c, s + i, n && n <= 4 && i + n <= bytes ? n : 1);
        cols += (size_t)term_char_width(c);
        i += n ? n : 1;
    }
    return cols;
}

/* ---- helpers ---- */
static struct line_editor ed;
#define PROMPT "> "

static void start(void) {
    term_reset();
    line_editor_begin(&ed, PROMPT);
}

static int feed_keys(const int *keys, size_t n) {
    int status = LINE_EDITOR_EDITING;
    for (size_t i = 0; i < n; i++) status = line_editor_feed(&ed, keys[i]);
    return status;
}

static int feed_text(const char *s) {
    int status = LINE_EDITOR_EDITING;
    for (; *s; s++) status = line_editor_feed(&ed, (unsigned char)*s);
    return status;
}

#define KEYS(...) feed_keys((const int[]){__VA_ARGS__}, sizeof((const int[]){__VA_ARGS__}) / sizeof(int))

/* The screen must show the prompt and the line, with the cursor in place. */
static void check_screen(const char *name) {
    static char shown[TERM_COLS * 4], want[LINE_EDITOR_MAX + 16], why[256];
    term_text(shown, sizeof shown);
    snprintf(want, sizeof want, "%s%s", PROMPT, line_editor_line(&ed));
    for (size_t n = strlen(want); n > 0 && want[n - 1] == ' '; n--) want[n - 1] = '\0'; /* blanks are blank */
    size_t want_col = strlen(PROMPT) + count_columns(ed.buf, ed.cursor);
    int same = strcmp(shown, want) == 0 && (size_t)term.col == want_col;
    snprintf(why, sizeof why, "screen \"%.60s\" col %d, want \"%.60s\" col %zu", shown, term.col, want,
             want_col);
    char full[128];
    snprintf(full, sizeof full, "%s (screen)", name);
    check_plain(same, full, why);
}

static void check_line(const char *name, const char *want) {
    char why[256];
    snprintf(why, sizeof why, "line \"%.80s\", want \"%.80s\"", line_editor_line(&ed), want);
    check_plain(strcmp(line_editor_line(&ed), want) == 0, name, why);
}

static void test_typing_and_editing(void) {
    start();
    feed_text("helo");
    KEYS(KEY_LEFT, 'l');
    check_line("insert in the middle", "hello");
    check_screen("insert in the middle");
    KEYS(KEY_HOME, 'X');
    check_line("home then insert", "Xhello");
    check_screen("home then insert");
    KEYS(KEY_END, '\b');
    check_line("end then backspace", "Xhell");
    check_screen("end then backspace");
    KEYS(KEY_HOME, KEY_DELETE);
    check_line("delete at start", "hell");
    check_screen("delete at start");
    KEYS(KEY_RIGHT, KEY_RIGHT, '\b');
    check_line("backspace in the middle", "hll");
    check_screen("backspace in the middle");
    KEYS(KEY_LEFT, KEY_LEFT, KEY_LEFT, KEY_LEFT, '\b', KEY_DELETE, KEY_DELETE, KEY_DELETE, KEY_DELETE);
    check_line("edits past both ends are harmless", "");
    check_screen("edits past both ends are harmless");
    feed_text("abc def");
    KEYS(KEY_LEFT, KEY_LEFT, KEY_LEFT, 11); /* Ctrl-K */
    check_line("ctrl-k kills to the end", "abc ");
    check_screen("ctrl-k kills to the end");
    KEYS(KEY_LEFT);
    int status = KEYS('\n');
    check(status == LINE_EDITOR_DONE, "enter finishes the line", "status not DONE");
    check_line("enter keeps the whole line (cursor anywhere)", "abc ");
}

static void test_kill_and_cancel(void) {
    start();
    feed_text("abc");
    KEYS(21); /* Ctrl-U */
    check_line("ctrl-u kills the line", "");
    check_screen("ctrl-u kills the line");
    feed_text("xy");
    check(KEYS('\n') == LINE_EDITOR_DONE, "line after ctrl-u", "not done");
    check_line("line after ctrl-u", "xy");

    int before = line_editor_history_count(&ed);
    start();
    feed_text("abandoned");
    int status = KEYS(3);
    check(status == LINE_EDITOR_CANCELLED, "ctrl-c cancels", "status not CANCELLED");
    check_line("ctrl-c empties the line", "");
    check(strstr(term.raw, "^C\n") != NULL, "ctrl-c prints ^C and a newline", "no ^C in output");
    check(line_editor_history_count(&ed) == before, "ctrl-c adds no history", "history grew");
}

static void test_history(void) {
    line_editor_init(&ed, term_write, NULL);
    const char *lines[] = {"one", "two", "two", ""};
    for (int i = 0; i < 4; i++) {
        start();
        feed_text(lines[i]);
        KEYS('\n');
    }
    check(line_editor_history_count(&ed) == 2, "history skips repeats and empty lines", "count != 2");
    start();
    feed_text("draft");
    KEYS(KEY_UP);
    check_line("up recalls the last line", "two");
    check_screen("up recalls the last line");
    KEYS(KEY_UP);
    check_line("up again recalls the one before", "one");
    check_screen("up again recalls the one before");
    KEYS(KEY_UP);
    check_line("up at the oldest stays", "one");
    KEYS(KEY_DOWN);
    check_line("down goes forward", "two");
    KEYS(KEY_DOWN);
    check_line("down past the newest restores the draft", "draft");
    check_screen("down past the newest restores the draft");
    KEYS(KEY_DOWN);
    check_line("down at the draft stays", "draft");
    KEYS(KEY_UP, '!', '\n');
    check_line("edited history line is entered", "two!");
    check(line_editor_history_count(&ed) == 3 && strcmp(line_editor_history_entry(&ed, 1), "two") == 0,
          "editing a recalled line leaves the entry alone", "history entry changed");

    line_editor_init(&ed, term_write, NULL);
    char buf[32];
    for (int i = 0; i < 40; i++) {
        start();
        snprintf(buf, sizeof buf, "line %d", i);
        feed_text(buf);
        KEYS('\n');
    }
    check(line_editor_history_count(&ed) == LINE_EDITOR_HISTORY, "history is bounded", "wrong count");
    check_plain(strcmp(line_editor_history_entry(&ed, 0), "line 8") == 0, "oldest entries are dropped first",
                line_editor_history_entry(&ed, 0));
    check_plain(strcmp(line_editor_history_entry(&ed, LINE_EDITOR_HISTORY - 1), "line 39") == 0,
                "newest entry is last", line_editor_history_entry(&ed, LINE_EDITOR_HISTORY - 1));
    check(line_editor_history_entry(&ed, LINE_EDITOR_HISTORY) == NULL, "entry past the end is NULL",
          "not NULL");
}

static void test_too_long(void) {
    start();
    for (int i = 0; i < LINE_EDITOR_MAX + 500; i++) line_editor_feed(&ed, 'a' + i % 26);
    check(strlen(line_editor_line(&ed)) == LINE_EDITOR_MAX, "over-long input is cut at the maximum",
          "wrong length");
    const char *msg = "line too long, truncated at 4096 bytes";
    const char *first = strstr(term.raw, msg);
    check(first != NULL, "over-long input is reported", "no message");
    check(first && !strstr(first + 1, msg), "the report is printed once", "message repeated");
    check(KEYS('\n') == LINE_EDITOR_DONE, "a truncated line can still be entered", "not done");
    start();
    check(!strstr(term.raw, msg), "next line starts without the message", "message again");
}

static void test_ignored_input(void) {
    start();
    KEYS('a', 0x07, 0x0f, 0x1c, 0x00, KEY_PAGE_UP, KEY_PAGE_DOWN, -1, 0x7fffffff, 'b');
    check_line("control bytes and unknown keys are ignored", "ab");
    KEYS(0x1b, '[', '9', '9', 'z', 'c');
    check_line("unknown CSI sequences are swallowed", "abc");
    KEYS(0x1b, 'x', 'd');
    check_line("ESC + letter is swallowed", "abcd");
    KEYS(0x1b, '[', 'D', 0x1b, '[', 'D', 'X');
    check_line("raw ESC[D moves left", "abXcd");
    KEYS(0x1b, '[', '1', '~', 'Y', 0x1b, '[', '3', '~');
    check_line("raw ESC[1~ home and ESC[3~ delete", "YbXcd");
    KEYS(0x1b, 'O', 'F', 'Z');
    check_line("raw ESC O F end", "YbXcdZ");
    check_screen("after raw escape sequences");
    KEYS(0x1b, '[', 3);
    check(ed.len == 0, "ctrl-c inside an escape sequence still cancels", "line kept");
}

static void test_utf8(void) {
    start();
    KEYS(0xc3, 0xa9, 'x'); /* é x */
    check_line("two-byte character inserted", "\xc3\xa9x");
    KEYS(KEY_LEFT, '\b');
    check_line("backspace removes the whole character", "x");
    check_screen("backspace removes the whole character");
    KEYS(KEY_HOME, 0xe2, 0x82, 0xac); /* € */
    KEYS(KEY_LEFT, 'a');
    check_line("left steps over a three-byte character", "a\xe2\x82\xacx");
    check_screen("left steps over a three-byte character");
    KEYS(KEY_RIGHT, KEY_RIGHT, KEY_LEFT, '\b');
    check_line("backspace after left over utf-8", "ax");
    KEYS(KEY_END, 0xf0, 0x9f, 0x98, 0x80); /* U+1F600 */
    check_line("four-byte character", "ax\xf0\x9f\x98\x80");
    KEYS(KEY_DELETE, KEY_LEFT, KEY_DELETE);
    check_line("delete removes the whole character", "ax");
    check_screen("delete removes the whole character");

    KEYS(0xff, 0x80, 0xbf, 0xc0, 0xaf, 0xf5, 0x80);
    check_line("invalid bytes are dropped", "ax");
    KEYS(0xc3, 'b');
    check_line("truncated sequence is dropped, next key kept", "axb");
    KEYS(0xe0, 0x80, 0x80, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80);
    check_line("overlongs, surrogates, > U+10FFFF are dropped", "axb");
    KEYS(0xe2, 0x82, KEY_LEFT, 'q');
    check_line("a special key interrupts a partial character", "axqb");
}

static void test_wide_characters(void) {
    start();
    feed_text("\xe4\xb8\xad\xe6\x96\x87"); /* 中文: two double-width characters */
    check_line("CJK characters inserted", "\xe4\xb8\xad\xe6\x96\x87");
    check(term.col == 2 + 4, "two wide characters take four columns", "wrong cursor column");
    check_screen("CJK characters");
    KEYS(KEY_LEFT);
    check(term.col == 2 + 2, "left over a wide character moves two columns", "wrong cursor column");
    check_screen("left over a wide character");
    feed_text("\xd0\x96"); /* Ж, one column, inserted between them */
    check_line("Cyrillic between CJK", "\xe4\xb8\xad\xd0\x96\xe6\x96\x87");
    check_screen("narrow character inserted before a wide one");
    KEYS(KEY_LEFT, KEY_LEFT, KEY_RIGHT);
    check(term.col == 2 + 2, "right over a wide character moves two columns", "wrong cursor column");
    KEYS(KEY_END, '\b');
    check_line("backspace removes a whole wide character", "\xe4\xb8\xad\xd0\x96");
    check_screen("backspace removes a whole wide character");
    KEYS(KEY_HOME, KEY_DELETE);
    check_line("delete removes a whole wide character", "\xd0\x96");
    check_screen("delete removes a whole wide character");
    feed_text("\xea\xb0\x80\xe3\x81\x82"); /* 가あ: Hangul and hiragana */
    KEYS(KEY_HOME, '\b', KEY_RIGHT, '\b');
    check_line("backspace after right over Hangul", "\xe3\x81\x82\xd0\x96");
    check_screen("Hangul and hiragana");
}

/* Every lead byte in the buffer is followed by all its continuation bytes. */
static int utf8_check_complete(void) {
    for (size_t i = 0; i < ed.len;) {
        unsigned char lead = (unsigned char)ed.buf[i];
        size_t need = lead < 0x80 ? 1 : lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
        if (i + need > ed.len) return 0;
        for (size_t k = 1; k < need; k++)
            if (((unsigned char)ed.buf[i + k] & 0xc0) != 0x80) return 0;
        i += need;
    }
    return 1;
}

static void test_long_utf8_limit(void) {
    start();
    for (int i = 0; i < LINE_EDITOR_MAX; i++) KEYS(0xc3, 0xa9);
    check(ed.len == LINE_EDITOR_MAX, "utf-8 at the limit never splits a character", "wrong length");
    check(utf8_check_complete(), "buffer ends on a character boundary", "split character");
}

int main(void) {
    line_editor_init(&ed, term_write, NULL);
    test_typing_and_editing();
    test_kill_and_cancel();
    test_history();
    test_too_long();
    test_ignored_input();
    test_utf8();
    test_wide_characters();
    test_long_utf8_limit();
    printf("%s\n", failures ? "line_editor: FAILED" : "line_editor: all passed");
    return failures ? 1 : 0;
}
