/* fuzz_keymap.c - the keyboard layouts fed arbitrary key presses, their
 * output fed to the line editor. Byte 0 picks the layout; then each pair
 * of bytes is one press (HID usage, modifier byte), any values at all. */
#include <stdint.h>

/* Pure logic over the generated tables: built straight into the harness. */
#include "build/gen/keymap_tables.c"
#include "kernel/console/keymap.c"
#include "kernel/console/line_editor.c"
#include "lib/utf8.h"
#include "tests/fuzz/fuzz_common.h"

static void discard(void *ctx, const char *s, size_t n) {
    (void)ctx;
    (void)s;
    (void)n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct line_editor ed; /* large: keep it off the stack */
    if (size == 0) return 0;
    FUZZ_ASSERT(keymap_select(keymap_name(data[0] % keymap_count())) == 0, "a listed layout refused");
    struct keymap_state s;
    keymap_state_init(&s);
    line_editor_init(&ed, discard, NULL);
    line_editor_begin(&ed, "> ");
    for (size_t i = 1; i + 1 < size; i += 2) {
        keymap_press(&s, data[i], data[i + 1]);
        char bytes[KEYMAP_QUEUE];
        size_t n = 0;
        for (int key; (key = keymap_next_key(&s)) != KEY_NONE;) {
            FUZZ_ASSERT(key >= 0 && (key <= 0xff || (key >= KEY_UP && key <= KEY_PAGE_DOWN)), "odd key code");
            FUZZ_ASSERT(n < sizeof bytes, "one press queued more than the queue holds");
            if (key <= 0xff) bytes[n++] = (char)key;
            if (line_editor_feed(&ed, key) != LINE_EDITOR_EDITING) line_editor_begin(&ed, "> ");
        }
        /* A press types whole characters, never part of one. */
        FUZZ_ASSERT(utf8_valid(bytes, n), "a press typed broken UTF-8");
        FUZZ_ASSERT(s.dead >= -1 && s.dead < keymap_dead_key_count, "dead key out of range");
    }
    FUZZ_ASSERT(utf8_valid(ed.buf, ed.len), "line holds invalid UTF-8");
    return 0;
}
