/* fuzz_line_editor.c - the kernel's line editor fed arbitrary key streams.
 * Bytes are keys (raw UTF-8 and ESC sequences included); 0xf5..0xfd, never
 * valid in UTF-8, stand for the special keys KEY_UP..KEY_PAGE_DOWN. */
#include <stdint.h>

/* Pure logic with no kernel dependencies: built straight into the harness. */
#include "kernel/console/line_editor.c"
#include "lib/utf8.h"
#include "tests/fuzz/fuzz_common.h"

static size_t bytes_written;

static void count_output(void *ctx, const char *s, size_t n) {
    FUZZ_ASSERT(s != NULL && n > 0 && n < 1 << 20, "odd write");
    volatile char sink = s[0] ^ s[n - 1];
    (void)sink;
    bytes_written += n;
}

static void check_state(const struct line_editor *ed) {
    FUZZ_ASSERT(ed->len <= LINE_EDITOR_MAX, "line longer than the buffer");
    FUZZ_ASSERT(ed->cursor <= ed->len, "cursor past the end of the line");
    FUZZ_ASSERT(ed->cursor == ed->len || (ed->buf[ed->cursor] & 0xc0) != 0x80, "cursor inside a character");
    FUZZ_ASSERT(utf8_valid(ed->buf, ed->len), "line holds invalid UTF-8");
    FUZZ_ASSERT(ed->history_count >= 0 && ed->history_count <= LINE_EDITOR_HISTORY,
                "history count out of range");
    FUZZ_ASSERT(ed->history_pos >= 0 && ed->history_pos <= ed->history_count,
                "history position out of range");
    FUZZ_ASSERT(ed->pending_len >= 0 && ed->pending_len < 4, "pending UTF-8 overflow");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct line_editor ed; /* 300 KiB: keep it off the stack */
    bytes_written = 0;
    line_editor_init(&ed, count_output, NULL);
    line_editor_begin(&ed, "> ");
    for (size_t i = 0; i < size; i++) {
        int key = data[i];
        if (key >= 0xf5 && key <= 0xfd) key = KEY_UP + (key - 0xf5);
        if (key == 0xfe) key = KEY_NONE;
        int status = line_editor_feed(&ed, key);
        FUZZ_ASSERT(status == LINE_EDITOR_EDITING || status == LINE_EDITOR_DONE ||
                        status == LINE_EDITOR_CANCELLED,
                    "unknown status");
        check_state(&ed);
        if (status != LINE_EDITOR_EDITING) {
            const char *line = line_editor_line(&ed);
            FUZZ_ASSERT(strlen(line) <= LINE_EDITOR_MAX, "finished line too long");
            line_editor_begin(&ed, "> ");
        }
    }
    for (int i = 0; i < line_editor_history_count(&ed); i++) {
        const char *entry = line_editor_history_entry(&ed, i);
        FUZZ_ASSERT(entry && memchr(entry, '\0', LINE_EDITOR_MAX + 1), "history entry not terminated");
    }
    FUZZ_ASSERT(line_editor_history_entry(&ed, -1) == NULL, "history entry -1");
    FUZZ_ASSERT(line_editor_history_entry(&ed, ed.history_count) == NULL, "history entry past the end");
    return 0;
}
