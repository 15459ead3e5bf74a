/* usb_hid_keyboard.c - HID boot keyboard reports -> key codes (through
 * kernel/console/keymap.c, in the chosen layout).
 * A key goes down when its usage appears in a report that the previous
 * report did not have; the newest held key repeats after 500 ms, every
 * 33 ms, measured when the console polls (there are no interrupts). */
#include "kernel/drivers/usb_hid_keyboard.h"
#include "kernel/console/console.h"
#include "kernel/console/keymap.h"
#include "kernel/drivers/timer.h"
#include "lib/string.h"

#define QUEUE_SIZE 64
#define REPEAT_DELAY_NS 500000000ull
#define REPEAT_PERIOD_NS 33000000ull
#define USAGE_ROLLOVER 0x01

struct keyboard {
    int in_use;
    uint8_t previous[8];
    uint8_t repeat_usage; /* 0: nothing repeating */
    uint8_t repeat_modifiers;
    uint64_t repeat_next_ns;
    struct keymap_state keys; /* locks and a pending dead key */
};

static struct keyboard keyboards[USB_KEYBOARD_MAX];
static int keyboard_count;
static int queue[QUEUE_SIZE];
static unsigned queue_head, queue_tail;

int usb_keyboard_add(void) {
    for (int i = 0; i < USB_KEYBOARD_MAX; i++) {
        if (keyboards[i].in_use) continue;
        memset(&keyboards[i], 0, sizeof keyboards[0]);
        keyboards[i].in_use = 1;
        keymap_state_init(&keyboards[i].keys);
        if (i >= keyboard_count) keyboard_count = i + 1;
        return i;
    }
    return -1;
}

void usb_keyboard_remove(int index) {
    if (index >= 0 && index < keyboard_count) memset(&keyboards[index], 0, sizeof keyboards[0]);
}

static void push(int key) {
    if (key == KEY_NONE || queue_tail - queue_head >= QUEUE_SIZE) return;
    queue[queue_tail++ % QUEUE_SIZE] = key;
}

/* The key's characters (from the chosen layout) into the queue; returns
 * whether it typed anything (keys that type nothing do not repeat). */
static int press(struct keyboard *kb, uint8_t usage, uint8_t modifiers) {
    keymap_press(&kb->keys, usage, modifiers);
    int typed = 0;
    for (int key; (key = keymap_next_key(&kb->keys)) != KEY_NONE; typed = 1) push(key);
    return typed;
}

static int contains(const uint8_t report[8], uint8_t usage) {
    for (int i = 2; i < 8; i++)
        if (report[i] == usage) return 1;
    return 0;
}

void usb_keyboard_report(int index, const uint8_t report[8]) {
    if (index < 0 || index >= keyboard_count || !keyboards[index].in_use) return;
    struct keyboard *kb = &keyboards[index];
    if (report[2] == USAGE_ROLLOVER) return; /* too many keys: keep the old state */
    uint8_t modifiers = report[0];
    for (int i = 2; i < 8; i++) {
        uint8_t usage = report[i];
        if (usage < 4 || contains(kb->previous, usage)) continue;
        if (press(kb, usage, modifiers)) {
            kb->repeat_usage = usage;
            kb->repeat_next_ns = timer_ns() + REPEAT_DELAY_NS;
        }
    }
    if (kb->repeat_usage && !contains(report, kb->repeat_usage)) kb->repeat_usage = 0;
    kb->repeat_modifiers = modifiers;
    memcpy(kb->previous, report, 8);
}

int usb_keyboard_next_key(void) {
    if (queue_head != queue_tail) return queue[queue_head++ % QUEUE_SIZE];
    for (int i = 0; i < keyboard_count; i++) {
        struct keyboard *kb = &keyboards[i];
        if (!kb->repeat_usage) continue;
        uint64_t now = timer_ns();
        if (now < kb->repeat_next_ns) continue;
        /* Late polls do not replay a burst: one repeat, then the next period. */
        kb->repeat_next_ns = now + REPEAT_PERIOD_NS;
        press(kb, kb->repeat_usage, kb->repeat_modifiers);
        if (queue_head != queue_tail) return queue[queue_head++ % QUEUE_SIZE];
    }
    return KEY_NONE;
}
