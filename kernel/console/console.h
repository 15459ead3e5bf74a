/* console.h - the kernel's text console: output goes to every sink (COM1 and
 * the framebuffer), input comes from every source (COM1, PS/2, later USB)
 * decoded into key codes. */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stdarg.h>
#include <stddef.h>

/* Key codes returned by console_poll_key: plain bytes (ASCII, control
 * characters like 3 = Ctrl-C, 21 = Ctrl-U, '\n' for Enter, 8 for Backspace,
 * and raw UTF-8 bytes >= 0x80) or these special keys. */
enum {
    KEY_NONE = -1,
    KEY_UP = 0x100,
    KEY_DOWN,
    KEY_LEFT,
    KEY_RIGHT,
    KEY_HOME,
    KEY_END,
    KEY_DELETE,
    KEY_PAGE_UP,
    KEY_PAGE_DOWN,
};

/* The key a VT100 sequence ending in `final` means (ESC [ A ... or ESC O A ...):
 * the arrows, Home and End; KEY_NONE for any other final byte. Shared by the
 * serial decoder (console.c) and the line editor. */
static inline int console_vt_final_key(char final) {
    switch (final) {
    case 'A':
        return KEY_UP;
    case 'B':
        return KEY_DOWN;
    case 'C':
        return KEY_RIGHT;
    case 'D':
        return KEY_LEFT;
    case 'H':
        return KEY_HOME;
    case 'F':
        return KEY_END;
    default:
        return KEY_NONE;
    }
}

void console_write(const char *s, size_t len);
int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kvprintf(const char *fmt, va_list ap);

/* Non-blocking: the next key from any input source, or KEY_NONE. */
int console_poll_key(void);
/* Drops input queued so far (used after Ctrl-C). */
void console_flush_input(void);

/* Extra output sinks (the framebuffer console) get every byte written after
 * they register; COM1 is always the first sink. At most 4 sinks. */
void console_register_output(void (*write)(const char *s, size_t len));
/* Extra input sources (PS/2): poll_key returns a key code as above or
 * KEY_NONE, never blocks. At most 4 sources. */
void console_register_input(int (*poll_key)(void));
/* Work that runs whenever input is polled: while the shell waits for a key
 * and between the tokens of an answer (the network). At most 4; idle work
 * that polls keys itself does not run the idle work again (no nesting). */
void console_register_idle(void (*work)(void));

#endif
