/* ps2.c - i8042 keyboard, polled (no interrupts).
 *
 * The firmware leaves the controller translating the keyboard's codes to
 * scan code set 1, which is what is decoded here: one byte per key, bit 7
 * set on release, 0xE0 before extended keys, 0xE1 before Pause. Each key is
 * translated to its USB HID usage, and kernel/console/keymap.c turns usages
 * into characters with the chosen layout. Bytes from
 * the mouse (status bit 5) are read and dropped so they never become keys. */
#include <stdint.h>
#include "kernel/drivers/ps2.h"
#include "kernel/console/console.h"
#include "kernel/console/keymap.h"
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
    int extended;      /* the previous byte was 0xE0 */
    int pause_skip;    /* bytes of a Pause sequence still to drop */
    uint8_t modifiers; /* held modifiers as HID modifier bits */
    struct keymap_state keys;
} kbd;

/* Set 1 make codes -> USB HID usages (the keymap's physical key codes);
 * 0 = not a typing key. Modifiers are handled before this table. */
static const uint8_t set1_usage[0x59] = {
    [0x01] = 0x29, [0x02] = 0x1e, [0x03] = 0x1f, [0x04] = 0x20, [0x05] = 0x21, [0x06] = 0x22, [0x07] = 0x23,
    [0x08] = 0x24, [0x09] = 0x25, [0x0a] = 0x26, [0x0b] = 0x27, [0x0c] = 0x2d, [0x0d] = 0x2e, [0x0e] = 0x2a,
    [0x0f] = 0x2b, [0x10] = 0x14, [0x11] = 0x1a, [0x12] = 0x08, [0x13] = 0x15, [0x14] = 0x17, [0x15] = 0x1c,
    [0x16] = 0x18, [0x17] = 0x0c, [0x18] = 0x12, [0x19] = 0x13, [0x1a] = 0x2f, [0x1b] = 0x30, [0x1c] = 0x28,
    [0x1e] = 0x04, [0x1f] = 0x16, [0x20] = 0x07, [0x21] = 0x09, [0x22] = 0x0a, [0x23] = 0x0b, [0x24] = 0x0d,
    [0x25] = 0x0e, [0x26] = 0x0f, [0x27] = 0x33, [0x28] = 0x34, [0x29] = 0x35, [0x2b] = 0x31, [0x2c] = 0x1d,
    [0x2d] = 0x1b, [0x2e] = 0x06, [0x2f] = 0x19, [0x30] = 0x05, [0x31] = 0x11, [0x32] = 0x10, [0x33] = 0x36,
    [0x34] = 0x37, [0x35] = 0x38, [0x37] = 0x55, [0x39] = 0x2c, [0x3a] = 0x39, [0x45] = 0x53, [0x47] = 0x5f,
    [0x48] = 0x60, [0x49] = 0x61, [0x4a] = 0x56, [0x4b] = 0x5c, [0x4c] = 0x5d, [0x4d] = 0x5e, [0x4e] = 0x57,
    [0x4f] = 0x59, [0x50] = 0x5a, [0x51] = 0x5b, [0x52] = 0x62, [0x53] = 0x63, [0x56] = 0x64,
};

/* E0-prefixed make codes -> usages. */
static uint8_t extended_usage(uint8_t code) {
    switch (code) {
    case 0x1c:
        return 0x58; /* keypad Enter */
    case 0x35:
        return 0x54; /* keypad / */
    case 0x47:
        return 0x4a; /* Home */
    case 0x48:
        return 0x52; /* Up */
    case 0x49:
        return 0x4b; /* Page Up */
    case 0x4b:
        return 0x50; /* Left */
    case 0x4d:
        return 0x4f; /* Right */
    case 0x4f:
        return 0x4d; /* End */
    case 0x50:
        return 0x51; /* Down */
    case 0x51:
        return 0x4e; /* Page Down */
    case 0x53:
        return 0x4c; /* Delete */
    default:
        return 0; /* Insert, Windows keys, fake shifts... */
    }
}

/* The HID modifier bit of a set 1 code, 0 if it is not a modifier. */
static uint8_t modifier_bit(uint8_t code, int extended) {
    switch (code) {
    case 0x1d:
        return extended ? KEYMAP_MOD_RCTRL : KEYMAP_MOD_LCTRL;
    case 0x38:
        return extended ? KEYMAP_MOD_RALT : KEYMAP_MOD_LALT;
    case 0x2a:
        return extended ? 0 : KEYMAP_MOD_LSHIFT;
    case 0x36:
        return extended ? 0 : KEYMAP_MOD_RSHIFT;
    default:
        return 0;
    }
}

/* One byte from the controller: a press goes to the keymap. */
static void decode_byte(uint8_t byte) {
    if (kbd.pause_skip > 0) {
        kbd.pause_skip--;
        return;
    }
    if (byte == 0xe0) {
        kbd.extended = 1;
        return;
    }
    if (byte == 0xe1) {
        kbd.pause_skip = 2;
        return;
    }
    int extended = kbd.extended;
    kbd.extended = 0;
    int released = byte & 0x80;
    uint8_t code = byte & 0x7f;

    /* Modifiers track both edges; everything else acts on press only. */
    uint8_t bit = modifier_bit(code, extended);
    if (bit) {
        kbd.modifiers = released ? (uint8_t)(kbd.modifiers & ~bit) : (uint8_t)(kbd.modifiers | bit);
        return;
    }
    if (released) return;
    uint8_t usage = extended ? extended_usage(code) : code < sizeof set1_usage ? set1_usage[code] : 0;
    if (usage) keymap_press(&kbd.keys, usage, kbd.modifiers);
}

static int ps2_poll_key(void) {
    if (!kbd.present) return KEY_NONE;
    int queued = keymap_next_key(&kbd.keys); /* the rest of a UTF-8 character */
    if (queued != KEY_NONE) return queued;
    for (int i = 0; i < MAX_BYTES_PER_POLL; i++) {
        uint8_t status = inb(PS2_STATUS);
        if (status == 0xff || !(status & STATUS_OUTPUT_FULL)) return KEY_NONE;
        uint8_t byte = inb(PS2_DATA);
        if (status & STATUS_AUX_DATA) continue; /* mouse byte */
        decode_byte(byte);
        int key = keymap_next_key(&kbd.keys);
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
    keymap_state_init(&kbd.keys);
    kbd.present = 1;
    console_register_input(ps2_poll_key);
}
