/* test_keymap.c - the keyboard layouts on the host: every key sequence that
 * tests/host/keymap_reference.py reads from the xkb-data symbols files and
 * X's Compose table (with a parser of its own; the kernel's tables come
 * from libxkbcommon) must type the same UTF-8 through keymap.c; then the
 * console's own rules (Ctrl, Num Lock, dead keys before other keys) and a
 * composed character deleted as one by the line editor. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/console/keymap.c"
#include "kernel/console/line_editor.c"
#include "tests/host/check.h"

#define REFERENCE "python3 tests/host/keymap_reference.py"
#define MAX_LAYOUTS 32

/* Presses the "USAGE/MODS" words of `seq` on a fresh keyboard; the typed
 * bytes go to out as hex. Returns 0 if a key gave a non-character key. */
static int type_hex(char *seq, char *out, size_t size) {
    struct keymap_state s;
    keymap_state_init(&s);
    size_t n = 0;
    out[0] = '\0';
    for (char *word = strtok(seq, " "); word; word = strtok(NULL, " ")) {
        unsigned usage, mods;
        if (sscanf(word, "%x/%x", &usage, &mods) != 2) return 0;
        keymap_press(&s, (uint8_t)usage, (uint8_t)mods);
        for (int key; (key = keymap_next_key(&s)) != KEY_NONE;) {
            if (key < 0 || key > 0xff) return 0;
            n += (size_t)snprintf(out + n, size - n, "%02x", key);
        }
    }
    return 1;
}

struct layout_count {
    char name[16];
    int checked, failed;
};

static void check_against_reference(void) {
    FILE *ref = popen(REFERENCE, "r");
    struct layout_count counts[MAX_LAYOUTS];
    int layouts = 0, shown = 0;
    char line[512];
    while (ref && fgets(line, sizeof line, ref)) {
        line[strcspn(line, "\n")] = '\0';
        char *eq = strstr(line, " =");
        char *space = strchr(line, ' ');
        if (!eq || !space) continue;
        *space = *eq = '\0';
        const char *want = eq[2] == ' ' ? eq + 3 : "";
        int i = 0;
        while (i < layouts && strcmp(counts[i].name, line) != 0) i++;
        if (i == layouts) {
            if (layouts == MAX_LAYOUTS) break;
            snprintf(counts[i].name, sizeof counts[i].name, "%s", line);
            counts[i].checked = counts[i].failed = 0;
            layouts++;
        }
        char seq[256], got[128];
        snprintf(seq, sizeof seq, "%s", space + 1);
        int known = keymap_select(line) == 0;
        int ok = known && type_hex(seq, got, sizeof got) && strcmp(got, want) == 0;
        counts[i].checked++;
        if (!ok) {
            counts[i].failed++;
            if (shown++ < 20)
                printf("# %s: keys %s typed %s, xkb-data says %s\n", line, space + 1,
                       known ? got : "(no layout)", want);
        }
    }
    int status = ref ? pclose(ref) : -1;
    if (status != 0) {
        const char *why =
            "the reference did not run (it needs python3, xkb-data and libx11-data's Compose table)";
        if (getenv("CI"))
            check_plain(0, "keymap reference", why);
        else
            check_skipped("keymap reference", why);
        return;
    }
    for (int i = 0; i < layouts; i++) {
        char name[64];
        snprintf(name, sizeof name, "layout %s matches xkb-data", counts[i].name);
        /* Fewer than 20 checks would mean the reference parser lost the layout. */
        check(counts[i].failed == 0 && counts[i].checked >= 20, name, "%d of %d key sequences differ",
              counts[i].failed, counts[i].checked);
    }
    check(layouts == keymap_count() + 1, "every layout checked (and nordic)",
          "%d layouts in the reference, %d here", layouts, keymap_count());
}

/* The key codes of a sequence of (usage, modifiers) presses. */
static int keys_of(const char *layout, const uint8_t *presses, int count, int *keys, int max) {
    struct keymap_state s;
    keymap_state_init(&s);
    keymap_select(layout);
    int n = 0;
    for (int i = 0; i < count; i++) {
        keymap_press(&s, presses[2 * i], presses[2 * i + 1]);
        for (int key; (key = keymap_next_key(&s)) != KEY_NONE && n < max;) keys[n++] = key;
    }
    return n;
}

static int keys_are(const char *layout, const uint8_t *presses, int count, const int *want, int want_count) {
    int got[16];
    int n = keys_of(layout, presses, count, got, 16);
    return n == want_count && memcmp(got, want, sizeof(int) * (size_t)n) == 0;
}

static void check_console_rules(void) {
    /* Ctrl goes with the layout's letter: on AZERTY the key at US Q is A. */
    const uint8_t ctrl_q[] = {0x14, KEYMAP_MOD_LCTRL};
    check(keys_are("fr", ctrl_q, 1, (int[]){1}, 1), "Ctrl + the A of AZERTY is Ctrl-A", "wrong control code");
    const uint8_t ctrl_c[] = {0x06, KEYMAP_MOD_RCTRL};
    check(keys_are("de", ctrl_c, 1, (int[]){3}, 1), "Ctrl-C on de", "wrong control code");
    /* Num Lock on (the default) types digits; off, the keypad moves. */
    const uint8_t kp1[] = {0x59, 0};
    check(keys_are("us", kp1, 1, (int[]){'1'}, 1), "keypad 1 with Num Lock", "not '1'");
    const uint8_t kp1_off[] = {0x53, 0, 0x59, 0};
    check(keys_are("us", kp1_off, 2, (int[]){KEY_END}, 1), "keypad 1 without Num Lock is End", "not End");
    /* de's keypad decimal key types a comma (xkb-data: kpdl(comma)). */
    const uint8_t kpdl[] = {0x63, 0};
    check(keys_are("de", kpdl, 1, (int[]){','}, 1), "de keypad decimal is a comma", "not ','");
    /* Dead keys: twice gives the accent, before Backspace it is dropped,
     * before a letter it cannot go on it gives both, before an arrow it
     * is dropped and the arrow moves. de's ^ is the key left of 1. */
    const uint8_t twice[] = {0x35, 0, 0x35, 0};
    check(keys_are("de", twice, 2, (int[]){'^'}, 1), "dead ^ twice types ^", "not '^'");
    const uint8_t dead_bs[] = {0x35, 0, 0x2a, 0};
    check(keys_are("de", dead_bs, 2, (int[]){}, 0), "dead ^ then Backspace types nothing", "typed something");
    const uint8_t dead_x[] = {0x35, 0, 0x1b, 0};
    check(keys_are("de", dead_x, 2, (int[]){'^', 'x'}, 2), "dead ^ then x types ^x", "not '^x'");
    const uint8_t dead_left[] = {0x35, 0, 0x50, 0, 0x08, 0};
    check(keys_are("de", dead_left, 3, (int[]){KEY_LEFT, 'e'}, 2), "dead ^, Left, e: the accent is dropped",
          "wrong keys");
    check(keymap_select("xx") != 0, "unknown layout refused", "accepted");
    check(keymap_select("nordic") == 0 && strcmp(keymap_current(), "se") == 0, "nordic is se", "not se");
}

static char screen_out[4096];
static void editor_write(void *ctx, const char *s, size_t n) {
    (void)ctx;
    (void)s;
    (void)n;
}

/* de: ^ e (ê) x, Backspace twice: the line editor removes x, then all of ê. */
static void check_composed_backspace(void) {
    static struct line_editor ed;
    line_editor_init(&ed, editor_write, screen_out);
    line_editor_begin(&ed, "> ");
    const uint8_t presses[] = {0x35, 0, 0x08, 0, 0x1b, 0, 0x2a, 0};
    int keys[16];
    int n = keys_of("de", presses, 4, keys, 16);
    for (int i = 0; i < n; i++) line_editor_feed(&ed, keys[i]);
    check(strcmp(line_editor_line(&ed), "\xc3\xaa") == 0, "de ^ e x Backspace leaves ê", "line is '%s'",
          line_editor_line(&ed));
    int bs[4];
    const uint8_t one_bs[] = {0x2a, 0};
    int m = keys_of("de", one_bs, 1, bs, 4);
    for (int i = 0; i < m; i++) line_editor_feed(&ed, bs[i]);
    check(line_editor_line(&ed)[0] == '\0', "one Backspace deletes the composed ê whole", "line is '%s'",
          line_editor_line(&ed));
}

int main(void) {
    check_against_reference();
    check_console_rules();
    check_composed_backspace();
    return failures ? 1 : 0;
}
