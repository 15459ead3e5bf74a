/* keymap_tables.h - the keyboard layout tables that
 * tools/gen_keymap_tables.py generates from xkb-data at build time
 * (build/gen/keymap_tables.c). Read only by keymap.c and the tests. */
#ifndef KERNEL_KEYMAP_TABLES_H
#define KERNEL_KEYMAP_TABLES_H

#include <stdint.h>

#define KEYMAP_USAGES 0x68 /* HID usages 0x00-0x67: the typing keys and keypad */
/* Table index bits: which modifiers and locks are on. */
#define KEYMAP_SHIFT 1
#define KEYMAP_ALTGR 2
#define KEYMAP_CAPS 4
#define KEYMAP_NUM 8
#define KEYMAP_STATES 16

/* An entry is 0 (nothing), a Unicode code point, or one of these. */
#define KEYMAP_DEAD 0x40000000u    /* | index into keymap_dead_keys */
#define KEYMAP_SPECIAL 0x20000000u /* | a KEY_ code (console.h) */
#define KEYMAP_KIND_MASK 0x60000000u

struct keymap_layout {
    const char *name;
    const char *description;
    uint32_t keys[KEYMAP_USAGES][KEYMAP_STATES];
};

struct keymap_dead {
    const char *name; /* "acute", "circumflex"... */
    uint32_t spacing; /* what the dead key gives before a space or itself */
};

/* Sorted by dead key, then base. */
struct keymap_composition {
    uint8_t dead;
    uint16_t base, composed;
};

extern const struct keymap_layout keymap_layouts[];
extern const int keymap_layout_count;
extern const struct keymap_dead keymap_dead_keys[];
extern const int keymap_dead_key_count;
extern const struct keymap_composition keymap_compositions[];
extern const int keymap_composition_count;

#endif
