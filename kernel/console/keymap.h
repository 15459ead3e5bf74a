/* keymap.h - keyboard layouts: a physical key (USB HID usage; the PS/2
 * driver translates its scan codes to usages) plus modifiers, Caps Lock,
 * Num Lock and a pending dead key -> console key codes, with characters as
 * UTF-8 bytes. Pure logic over generated tables (keymap_tables.h), shared by
 * both keyboard drivers and unit-tested on the host. */
#ifndef KERNEL_KEYMAP_H
#define KERNEL_KEYMAP_H

#include <stdint.h>

/* HID modifier byte bits (the first byte of a boot keyboard report). */
#define KEYMAP_MOD_LCTRL 0x01
#define KEYMAP_MOD_LSHIFT 0x02
#define KEYMAP_MOD_LALT 0x04
#define KEYMAP_MOD_RCTRL 0x10
#define KEYMAP_MOD_RSHIFT 0x20
#define KEYMAP_MOD_RALT 0x40 /* AltGr */

#define KEYMAP_USAGE_CAPS_LOCK 0x39
#define KEYMAP_USAGE_NUM_LOCK 0x53
#define KEYMAP_QUEUE 16

/* One keyboard's state: locks, a dead key waiting for its letter, and the
 * key codes of the last press not yet taken. */
struct keymap_state {
    int caps_lock, num_lock;
    int dead; /* index into keymap_dead_keys, -1 when none */
    int queue[KEYMAP_QUEUE];
    unsigned head, tail;
};

void keymap_state_init(struct keymap_state *s);
/* A key went down: queues what it types (nothing for a dead key). */
void keymap_press(struct keymap_state *s, uint8_t usage, uint8_t modifiers);
/* The next queued key code (console.h), KEY_NONE when none. */
int keymap_next_key(struct keymap_state *s);

/* The layout all keyboards use: 0 on success, -1 for an unknown name. */
int keymap_select(const char *name);
const char *keymap_current(void);
int keymap_count(void);
const char *keymap_name(int index);
const char *keymap_description(int index);

#endif
