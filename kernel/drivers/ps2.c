/* ps2.c - i8042 keyboard, polled (no interrupts).
 *
 * The firmware leaves the controller translating the keyboard's codes to
 * scan code set 1, which is what is decoded here: one byte per key, bit 7
 * set on release, 0xE0 before extended keys, 0xE1 before Pause. Bytes from
 * the mouse (status bit 5) are read and dropped so they never become keys. */
#include <stdint.h>
#include "kernel/drivers/ps2.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"

#define PS2_DATA 0x60
#define PS2_STATUS 0x64
#define PS2_COMMAND 0x64
#define STATUS_OUTPUT_FULL 0x01
#define STATUS_INPUT_FULL 0x02
#define STATUS_AUX_DATA 0x20
#define CONFIG_IRQ1 0x01
#define CONFIG_IRQ12 0x02
#define CONFIG_TRANSLATE 0x40
#define WAIT_LOOPS 100000
#define MAX_BYTES_PER_POLL 32

static struct {
    int present;
    int extended;   /* the previous byte was 0xE0 */
    int pause_skip; /* bytes of a Pause sequence still to drop */
    int shift_left, shift_right, ctrl_left, ctrl_right;
    int caps_lock, num_lock;
} kbd;

/* Set 1 make codes 0x00-0x39 -> ASCII, unshifted and shifted (0 = no character). */
static const char keymap_plain[0x3a] = {
    0,    27,  '1', '2',  '3', '4', '5', '6', '7',  '8', '9', '0', '-', '=', '\b', '\t', 'q', 'w', 'e', 'r',
    't',  'y', 'u', 'i',  'o', 'p', '[', ']', '\n', 0,   'a', 's', 'd', 'f', 'g',  'h',  'j', 'k', 'l', ';',
    '\'', '`', 0,   '\\', 'z', 'x', 'c', 'v', 'b',  'n', 'm', ',', '.', '/', 0,    '*',  0,   ' ',
};
static const char keymap_shift[0x3a] = {
    0,   27,  '!', '@', '#', '$', '%', '^', '&',  '*', '(', ')', '_', '+', '\b', '\t', 'Q', 'W', 'E', 'R',
    'T', 'Y', 'U', 'I', 'O', 'P', '{', '}', '\n', 0,   'A', 'S', 'D', 'F', 'G',  'H',  'J', 'K', 'L', ':',
    '"', '~', 0,   '|', 'Z', 'X', 'C', 'V', 'B',  'N', 'M', '<', '>', '?', 0,    '*',  0,   ' ',
};

/* Keypad 0x47-0x53: navigation key (NumLock off) and digit (NumLock on). */
static const int keypad_nav[13] = {
    KEY_HOME, KEY_UP,  KEY_PAGE_UP, '-',           KEY_LEFT, KEY_NONE,   KEY_RIGHT,
    '+',      KEY_END, KEY_DOWN,    KEY_PAGE_DOWN, KEY_NONE, KEY_DELETE,
};
static const char keypad_digit[13] = {'7', '8', '9', '-', '4', '5', '6', '+', '1', '2', '3', '0', '.'};

static int decode_extended(uint8_t code) {
    switch (code) {
    case 0x1c:
        return '\n'; /* keypad Enter */
    case 0x35:
        return '/'; /* keypad / */
    case 0x47:
        return KEY_HOME;
    case 0x48:
        return KEY_UP;
    case 0x49:
        return KEY_PAGE_UP;
    case 0x4b:
        return KEY_LEFT;
    case 0x4d:
        return KEY_RIGHT;
    case 0x4f:
        return KEY_END;
    case 0x50:
        return KEY_DOWN;
    case 0x51:
        return KEY_PAGE_DOWN;
    case 0x53:
        return KEY_DELETE;
    default:
        return KEY_NONE; /* Insert, Windows keys, fake shifts... */
    }
}

/* One byte from the controller -> a key code or KEY_NONE. */
static int decode_byte(uint8_t byte) {
    if (kbd.pause_skip > 0) {
        kbd.pause_skip--;
        return KEY_NONE;
    }
    if (byte == 0xe0) {
        kbd.extended = 1;
        return KEY_NONE;
    }
    if (byte == 0xe1) {
        kbd.pause_skip = 2;
        return KEY_NONE;
    }
    int extended = kbd.extended;
    kbd.extended = 0;
    int released = byte & 0x80;
    uint8_t code = byte & 0x7f;

    /* Modifiers track both edges; everything else acts on press only. */
    if (code == 0x1d) {
        if (extended)
            kbd.ctrl_right = !released;
        else
            kbd.ctrl_left = !released;
        return KEY_NONE;
    }
    if (!extended && code == 0x2a) {
        kbd.shift_left = !released;
        return KEY_NONE;
    }
    if (!extended && code == 0x36) {
        kbd.shift_right = !released;
        return KEY_NONE;
    }
    if (released) return KEY_NONE;
    if (extended) return decode_extended(code);
    if (code == 0x3a) {
        kbd.caps_lock = !kbd.caps_lock;
        return KEY_NONE;
    }
    if (code == 0x45) {
        kbd.num_lock = !kbd.num_lock;
        return KEY_NONE;
    }
    if (code >= 0x47 && code <= 0x53)
        return kbd.num_lock ? keypad_digit[code - 0x47] : keypad_nav[code - 0x47];
    if (code >= sizeof keymap_plain) return KEY_NONE; /* F-keys, Alt, unknown */

    int shift = kbd.shift_left || kbd.shift_right;
    char c = shift ? keymap_shift[code] : keymap_plain[code];
    if (!c) return KEY_NONE;
    if (kbd.caps_lock && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) c ^= 0x20;
    if (kbd.ctrl_left || kbd.ctrl_right) {
        if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return (c | 0x20) - 'a' + 1; /* Ctrl-C = 3 */
        return KEY_NONE;
    }
    return (unsigned char)c;
}

int ps2_poll_key(void) {
    if (!kbd.present) return KEY_NONE;
    for (int i = 0; i < MAX_BYTES_PER_POLL; i++) {
        uint8_t status = inb(PS2_STATUS);
        if (status == 0xff || !(status & STATUS_OUTPUT_FULL)) return KEY_NONE;
        uint8_t byte = inb(PS2_DATA);
        if (status & STATUS_AUX_DATA) continue; /* mouse byte */
        int key = decode_byte(byte);
        if (key != KEY_NONE) return key;
    }
    return KEY_NONE;
}

static int wait_input_empty(void) {
    for (int i = 0; i < WAIT_LOOPS; i++) {
        if (!(inb(PS2_STATUS) & STATUS_INPUT_FULL)) return 1;
        cpu_relax();
    }
    return 0;
}

static int wait_output_full(void) {
    for (int i = 0; i < WAIT_LOOPS; i++) {
        if (inb(PS2_STATUS) & STATUS_OUTPUT_FULL) return 1;
        cpu_relax();
    }
    return 0;
}

static void flush_output(void) {
    for (int i = 0; i < 64 && (inb(PS2_STATUS) & STATUS_OUTPUT_FULL); i++) (void)inb(PS2_DATA);
}

/* Polling needs no IRQs; translation to set 1 is what decode_byte expects. */
static void configure_controller(void) {
    if (!wait_input_empty()) return;
    outb(PS2_COMMAND, 0x20); /* read configuration byte */
    if (!wait_output_full()) return;
    uint8_t config = inb(PS2_DATA);
    uint8_t wanted = (uint8_t)((config & ~(CONFIG_IRQ1 | CONFIG_IRQ12)) | CONFIG_TRANSLATE);
    if (wanted == config || !wait_input_empty()) return;
    outb(PS2_COMMAND, 0x60); /* write configuration byte */
    if (!wait_input_empty()) return;
    outb(PS2_DATA, wanted);
}

void ps2_init(void) {
    if (inb(PS2_STATUS) == 0xff) {
        kprintf("ps2: no i8042 controller\n");
        return;
    }
    flush_output();
    configure_controller();
    flush_output();
    kbd.present = 1;
    console_register_input(ps2_poll_key);
}
