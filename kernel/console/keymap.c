/* keymap.c - physical key + modifiers -> characters through the layout
 * tables that tools/gen_keymap_tables.py generates from xkb-data, with dead
 * keys composing as X's Compose table says (^ then e gives ê; ^ then space
 * gives ^; ^ then a key it cannot compose with gives both). */
#include "kernel/console/keymap.h"
#include "kernel/console/console.h"
#include "kernel/console/keymap_tables.h"
#include "lib/string.h"
#include "lib/utf8.h"

static const struct keymap_layout *current_layout = &keymap_layouts[0];

int keymap_select(const char *name) {
    for (int i = 0; i < keymap_layout_count; i++) {
        if (strcmp(keymap_layouts[i].name, name) == 0) {
            current_layout = &keymap_layouts[i];
            return 0;
        }
    }
    /* The name for the Nordic family: Swedish, as fi is nearly the same. */
    if (strcmp(name, "nordic") == 0) return keymap_select("se");
    return -1;
}

const char *keymap_current(void) {
    return current_layout->name;
}

int keymap_count(void) {
    return keymap_layout_count;
}

const char *keymap_name(int index) {
    return index >= 0 && index < keymap_layout_count ? keymap_layouts[index].name : NULL;
}

const char *keymap_description(int index) {
    return index >= 0 && index < keymap_layout_count ? keymap_layouts[index].description : NULL;
}

void keymap_state_init(struct keymap_state *s) {
    memset(s, 0, sizeof *s);
    s->num_lock = 1; /* as PC firmware leaves it */
    s->dead = -1;
}

static void push(struct keymap_state *s, int key) {
    if (s->tail - s->head < KEYMAP_QUEUE) s->queue[s->tail++ % KEYMAP_QUEUE] = key;
}

static void push_char(struct keymap_state *s, uint32_t cp) {
    if (cp == 0) return; /* a dead key without a spacing form */
    char bytes[4];
    int n = utf8_encode(cp, bytes);
    for (int i = 0; i < n; i++) push(s, (unsigned char)bytes[i]);
}

int keymap_next_key(struct keymap_state *s) {
    if (s->head == s->tail) return KEY_NONE;
    return s->queue[s->head++ % KEYMAP_QUEUE];
}

static uint32_t composed(int dead, uint32_t base) {
    int lo = 0, hi = keymap_composition_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const struct keymap_composition *c = &keymap_compositions[mid];
        int cmp = c->dead != dead ? (int)c->dead - dead : (int)c->base - (int)base;
        if (cmp == 0) return c->composed;
        if (cmp < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return 0;
}

/* A character typed while dead key `dead` waits. */
static void finish_dead(struct keymap_state *s, int dead, uint32_t cp) {
    uint32_t spacing = keymap_dead_keys[dead].spacing;
    if (cp == '\b' || cp == 0x1b) return; /* Backspace, Escape: the accent is dropped */
    if (cp == ' ') {
        push_char(s, spacing);
        return;
    }
    uint32_t c = composed(dead, cp);
    if (c) {
        push_char(s, c);
        return;
    }
    if (cp >= 0x20) push_char(s, spacing);
    push_char(s, cp);
}

static void press_dead(struct keymap_state *s, int dead) {
    if (s->dead >= 0) push_char(s, keymap_dead_keys[s->dead].spacing);
    /* The same dead key twice types its accent once. */
    s->dead = s->dead == dead ? -1 : dead;
}

void keymap_press(struct keymap_state *s, uint8_t usage, uint8_t modifiers) {
    if (usage == KEYMAP_USAGE_CAPS_LOCK) {
        s->caps_lock = !s->caps_lock;
        return;
    }
    if (usage == KEYMAP_USAGE_NUM_LOCK) {
        s->num_lock = !s->num_lock;
        return;
    }
    if (usage >= KEYMAP_USAGES) return;
    const uint32_t *key = current_layout->keys[usage];
    int state = (modifiers & (KEYMAP_MOD_LSHIFT | KEYMAP_MOD_RSHIFT) ? KEYMAP_SHIFT : 0) |
                (modifiers & KEYMAP_MOD_RALT ? KEYMAP_ALTGR : 0) | (s->caps_lock ? KEYMAP_CAPS : 0) |
                (s->num_lock ? KEYMAP_NUM : 0);
    uint32_t entry = key[state];
    if (modifiers & (KEYMAP_MOD_LCTRL | KEYMAP_MOD_RCTRL)) {
        /* Ctrl goes with the letter the key has on this layout (Ctrl-C = 3). */
        uint32_t plain = key[0];
        if ((plain | 0x20) >= 'a' && (plain | 0x20) <= 'z') {
            s->dead = -1;
            push(s, (int)(plain & 0x1f));
            return;
        }
        if (!(entry & KEYMAP_SPECIAL)) return;
    }
    if (entry == 0) return;
    switch (entry & KEYMAP_KIND_MASK) {
    case KEYMAP_SPECIAL:
        s->dead = -1;
        push(s, (int)(entry & ~KEYMAP_SPECIAL));
        return;
    case KEYMAP_DEAD:
        press_dead(s, (int)(entry & ~KEYMAP_DEAD));
        return;
    default:
        break;
    }
    if (s->dead >= 0) {
        int dead = s->dead;
        s->dead = -1;
        finish_dead(s, dead, entry);
        return;
    }
    push_char(s, entry);
}
