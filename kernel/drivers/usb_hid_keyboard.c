/* usb_hid_keyboard.c - HID boot keyboard reports -> key codes (US layout).
 * A key goes down when its usage appears in a report that the previous
 * report did not have; the newest held key repeats after 500 ms, every
 * 33 ms, measured when the console polls (there are no interrupts). */
#include "kernel/drivers/usb_hid_keyboard.h"
#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include "lib/string.h"

#define QUEUE_SIZE 64
#define REPEAT_DELAY_NS 500000000ull
#define REPEAT_PERIOD_NS 33000000ull
#define MOD_CTRL 0x11
#define MOD_SHIFT 0x22
#define USAGE_CAPS_LOCK 0x39
#define USAGE_ROLLOVER 0x01

struct keyboard {
    int in_use;
    uint8_t previous[8];
    uint8_t repeat_usage; /* 0: nothing repeating */
    uint8_t repeat_modifiers;
    uint64_t repeat_next_ns;
    int caps_lock;
};

static struct keyboard keyboards[USB_KEYBOARD_MAX];
static int keyboard_count;
static int queue[QUEUE_SIZE];
static unsigned queue_head, queue_tail;

/* Usages 0x04-0x38 -> characters, plain and shifted. */
static const char usage_plain[0x39] = {
    0,   0,   0,    0,   'a',  'b',  'c', 'd', 'e', 'f', 'g', 'h',  'i',  'j', 'k',  'l', 'm', 'n', 'o',
    'p', 'q', 'r',  's', 't',  'u',  'v', 'w', 'x', 'y', 'z', '1',  '2',  '3', '4',  '5', '6', '7', '8',
    '9', '0', '\n', 27,  '\b', '\t', ' ', '-', '=', '[', ']', '\\', '\\', ';', '\'', '`', ',', '.', '/',
};
static const char usage_shift[0x39] = {
    0,   0,   0,    0,   'A',  'B',  'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O',
    'P', 'Q', 'R',  'S', 'T',  'U',  'V', 'W', 'X', 'Y', 'Z', '!', '@', '#', '$', '%', '^', '&', '*',
    '(', ')', '\n', 27,  '\b', '\t', ' ', '_', '+', '{', '}', '|', '|', ':', '"', '~', '<', '>', '?',
};

int usb_keyboard_add(void) {
    for (int i = 0; i < USB_KEYBOARD_MAX; i++) {
        if (keyboards[i].in_use) continue;
        memset(&keyboards[i], 0, sizeof keyboards[0]);
        keyboards[i].in_use = 1;
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

static int translate(const struct keyboard *kb, uint8_t usage, uint8_t modifiers) {
    int shift = (modifiers & MOD_SHIFT) != 0, ctrl = (modifiers & MOD_CTRL) != 0;
    if (usage < sizeof usage_plain && usage_plain[usage]) {
        char c = usage_plain[usage];
        if (ctrl && c >= 'a' && c <= 'z') return c & 0x1f; /* Ctrl-C = 3, Ctrl-U = 21 */
        int is_letter = c >= 'a' && c <= 'z';
        if (is_letter && kb->caps_lock) shift = !shift;
        return shift ? usage_shift[usage] : c;
    }
    switch (usage) {
    case 0x4a:
        return KEY_HOME;
    case 0x4b:
        return KEY_PAGE_UP;
    case 0x4c:
        return KEY_DELETE;
    case 0x4d:
        return KEY_END;
    case 0x4e:
        return KEY_PAGE_DOWN;
    case 0x4f:
        return KEY_RIGHT;
    case 0x50:
        return KEY_LEFT;
    case 0x51:
        return KEY_DOWN;
    case 0x52:
        return KEY_UP;
    case 0x54:
        return '/';
    case 0x55:
        return '*';
    case 0x56:
        return '-';
    case 0x57:
        return '+';
    case 0x58:
        return '\n';
    case 0x62:
        return '0';
    case 0x63:
        return '.';
    default:
        if (usage >= 0x59 && usage <= 0x61) return '1' + (usage - 0x59); /* keypad 1-9 */
        return KEY_NONE;
    }
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
        if (usage == USAGE_CAPS_LOCK) {
            kb->caps_lock = !kb->caps_lock;
            continue;
        }
        int key = translate(kb, usage, modifiers);
        push(key);
        if (key != KEY_NONE) {
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
        return translate(kb, kb->repeat_usage, kb->repeat_modifiers);
    }
    return KEY_NONE;
}
