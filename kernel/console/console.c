/* console.c - output fan-out (COM1 plus registered sinks) and input fan-in
 * (registered sources plus COM1 bytes decoded from terminal escape sequences
 * into key codes). */
#include "kernel/console/console.h"
#include "kernel/drivers/uart.h"
#include "kernel/arch/cpu.h"
#include "kernel/mm/memory.h"
#include "kernel/drivers/timer.h"
#include "lib/format.h"
#include "lib/string.h"

#define MAX_SINKS 4
#define MAX_SOURCES 4
#define WRITE_CHUNK 256
#define ESC_TIMEOUT_US 30000 /* a lone ESC (or a cut-off sequence) is dropped after this */

static void (*sinks[MAX_SINKS])(const char *s, size_t len);
static int sink_count;
static int (*sources[MAX_SOURCES])(void);
static int source_count;

void console_register_output(void (*write)(const char *s, size_t len)) {
    if (write && sink_count < MAX_SINKS) sinks[sink_count++] = write;
}

void console_register_input(int (*poll_key)(void)) {
    if (poll_key && source_count < MAX_SOURCES) sources[source_count++] = poll_key;
}

static void (*idle_work[MAX_SOURCES])(void);
static int idle_count;

void console_register_idle(void (*work)(void)) {
    if (work && idle_count < MAX_SOURCES) idle_work[idle_count++] = work;
}

void console_write(const char *s, size_t len) {
    /* Chunked so input arriving during long output is pulled off the UART. */
    while (len > 0) {
        size_t n = len < WRITE_CHUNK ? len : WRITE_CHUNK;
        uart_write(s, n);
        for (int i = 0; i < sink_count; i++) sinks[i](s, n);
        uart_poll();
        s += n;
        len -= n;
    }
}

int kvprintf(const char *fmt, va_list ap) {
    char buf[512];
    va_list again;
    va_copy(again, ap);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    if (n < 0) {
        va_end(again);
        return n;
    }
    if ((size_t)n < sizeof buf) {
        console_write(buf, (size_t)n);
    } else {
        /* Long output: format into the heap; if that fails, print what fits. */
        char *big = kmalloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, again);
            console_write(big, (size_t)n);
            kfree(big);
        } else {
            console_write(buf, sizeof buf - 1);
        }
    }
    va_end(again);
    return n;
}

int kprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = kvprintf(fmt, ap);
    va_end(ap);
    return n;
}

/* ---------------------------------------------------------------- serial input decoding */

enum decode_state { DECODE_NORMAL, DECODE_ESC, DECODE_CSI, DECODE_SS3 };

static enum decode_state state = DECODE_NORMAL;
static char csi_params[8];
static int csi_len;
static int csi_overflow;
static uint64_t esc_start_tsc;
static int last_was_cr;

static uint64_t esc_timeout_ticks(void) {
    uint64_t hz = tsc_hz();
    if (hz == 0) hz = 1000000000ull; /* before calibration: assume 1 GHz */
    return hz / 1000000 * ESC_TIMEOUT_US;
}

static int csi_final_key(char final) {
    if (final != '~') return console_vt_final_key(final); /* unknown sequences are swallowed */
    if (csi_overflow || csi_len == 0) return KEY_NONE;
    csi_params[csi_len] = 0;
    if (!strcmp(csi_params, "1") || !strcmp(csi_params, "7")) return KEY_HOME;
    if (!strcmp(csi_params, "4") || !strcmp(csi_params, "8")) return KEY_END;
    if (!strcmp(csi_params, "3")) return KEY_DELETE;
    if (!strcmp(csi_params, "5")) return KEY_PAGE_UP;
    if (!strcmp(csi_params, "6")) return KEY_PAGE_DOWN;
    return KEY_NONE;
}

static void start_escape(void) {
    state = DECODE_ESC;
    csi_len = 0;
    csi_overflow = 0;
    esc_start_tsc = rdtsc();
}

/* Feeds one byte; returns a key code or KEY_NONE when the byte was consumed
 * as part of a sequence (or dropped). */
static int decode_byte(int c) {
    if (state != DECODE_NORMAL && c == 0x1b) { /* a new ESC aborts the old sequence */
        start_escape();
        return KEY_NONE;
    }
    switch (state) {
    case DECODE_NORMAL:
        if (c == 0x1b) {
            start_escape();
            last_was_cr = 0;
            return KEY_NONE;
        }
        if (c == '\n' && last_was_cr) { /* CRLF counts once */
            last_was_cr = 0;
            return KEY_NONE;
        }
        last_was_cr = (c == '\r');
        if (c == '\r') return '\n';
        if (c == 0x7f) return 8;
        return c;
    case DECODE_ESC:
        if (c == '[') {
            state = DECODE_CSI;
            return KEY_NONE;
        }
        if (c == 'O') {
            state = DECODE_SS3;
            return KEY_NONE;
        }
        state = DECODE_NORMAL; /* ESC + other byte (Alt-key): swallowed */
        return KEY_NONE;
    case DECODE_SS3: /* ESC O x: the same final letters as CSI, no parameters */
        state = DECODE_NORMAL;
        return c == '~' ? KEY_NONE : csi_final_key(c);
    case DECODE_CSI:
        if (c >= 0x30 && c <= 0x3f) { /* parameter bytes */
            if (csi_len < (int)sizeof csi_params - 1)
                csi_params[csi_len++] = (char)c;
            else
                csi_overflow = 1;
            return KEY_NONE;
        }
        if (c >= 0x20 && c <= 0x2f) { /* intermediate bytes */
            csi_overflow = 1;
            return KEY_NONE;
        }
        state = DECODE_NORMAL;
        if (c >= 0x40 && c <= 0x7e) return csi_final_key((char)c);
        return KEY_NONE; /* malformed: swallowed */
    }
    return KEY_NONE;
}

static int serial_poll_key(void) {
    for (;;) {
        int c = uart_read_byte();
        if (c < 0) {
            if (state != DECODE_NORMAL && rdtsc() - esc_start_tsc > esc_timeout_ticks())
                state = DECODE_NORMAL; /* lone ESC or truncated sequence: dropped */
            return KEY_NONE;
        }
        int key = decode_byte(c);
        if (key != KEY_NONE) return key;
    }
}

int console_poll_key(void) {
    static int idle_running; /* idle work that polls keys itself must not nest */
    if (!idle_running) {
        idle_running = 1;
        for (int i = 0; i < idle_count; i++) idle_work[i]();
        idle_running = 0;
    }
    for (int i = 0; i < source_count; i++) {
        int key = sources[i]();
        if (key != KEY_NONE) return key;
    }
    return serial_poll_key();
}

void console_flush_input(void) {
    while (uart_read_byte() >= 0) {
    }
    for (int i = 0; i < source_count; i++) {
        for (int guard = 0; guard < 4096 && sources[i]() != KEY_NONE; guard++) {
        }
    }
    state = DECODE_NORMAL;
    last_was_cr = 0;
}
