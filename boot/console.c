/* console.c - loader messages on ConOut and COM1, fatal halts, TSC timing.
 *
 * COM1 is driven directly (polled 16550 at 0x3F8) so messages reach a
 * serial harness even when ConOut is a screen, and after ExitBootServices.
 */
#include <stdarg.h>

#include "boot/loader.h"
#include "boot/read_pace.h"

#define COM1_PORT 0x3F8
#define UART_THR 0 /* transmit holding register */
#define UART_IER 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define UART_LSR_THR_EMPTY 0x20

static bool boot_services_active = true;
static bool conout_reaches_serial = false; /* firmware mirrors ConOut to a UART */
static uint64_t tsc_per_ms;

static inline void port_out8(uint16_t port, uint8_t value) {
    __asm__ volatile("outb %0, %1" : : "a"(value), "Nd"(port));
}

static inline uint8_t port_in8(uint16_t port) {
    uint8_t value;
    __asm__ volatile("inb %1, %0" : "=a"(value) : "Nd"(port));
    return value;
}

void serial_init(void) {
    /* 115200 8N1, FIFOs on, no interrupts: what OVMF sets up too, but real
     * firmware may leave the port untouched. */
    port_out8(COM1_PORT + UART_IER, 0x00);
    port_out8(COM1_PORT + UART_LCR, 0x80); /* DLAB: divisor follows */
    port_out8(COM1_PORT + 0, 0x01);        /* divisor 1 = 115200 baud */
    port_out8(COM1_PORT + 1, 0x00);
    port_out8(COM1_PORT + UART_LCR, 0x03); /* 8 bits, no parity, 1 stop */
    port_out8(COM1_PORT + UART_FCR, 0x07); /* enable and clear FIFOs */
    port_out8(COM1_PORT + UART_MCR, 0x03); /* DTR + RTS */
}

static void serial_putc(char c) {
    /* Bounded wait: a missing UART must not hang the loader. */
    for (int spins = 0; spins < 100000; spins++) {
        if (port_in8(COM1_PORT + UART_LSR) & UART_LSR_THR_EMPTY) break;
    }
    port_out8(COM1_PORT + UART_THR, (uint8_t)c);
}

static void serial_write(const char *text) {
    for (; *text; text++) {
        if (*text == '\n') serial_putc('\r');
        serial_putc(*text);
    }
}

/* COM1 as well, unless the firmware already mirrors ConOut there. */
static void serial_write_unless_mirrored(const char *text) {
    if (!boot_services_active || !conout_reaches_serial) serial_write(text);
}

static void conout_write(const char *text) {
    if (!boot_services_active || !loader_st || !loader_st->ConOut) return;
    CHAR16 wide[256];
    UINTN n = 0;
    for (; *text; text++) {
        if (n + 3 >= sizeof(wide) / sizeof(wide[0])) {
            wide[n] = 0;
            loader_st->ConOut->OutputString(loader_st->ConOut, wide);
            n = 0;
        }
        if (*text == '\n') wide[n++] = L'\r';
        wide[n++] = (CHAR16)(unsigned char)*text;
    }
    wide[n] = 0;
    loader_st->ConOut->OutputString(loader_st->ConOut, wide);
}

void console_boot_services_exited(void) {
    boot_services_active = false;
}

static bool path_has_uart(EFI_DEVICE_PATH *node) {
    for (int guard = 0; guard < 64; guard++) {
        uint16_t length = (uint16_t)(node->Length[0] | (node->Length[1] << 8));
        if ((node->Type & 0x7f) == END_DEVICE_PATH_TYPE || length < 4) return false;
        if (node->Type == MESSAGING_DEVICE_PATH && node->SubType == MSG_UART_DP) return true;
        node = (EFI_DEVICE_PATH *)((uint8_t *)node + length);
    }
    return false;
}

void console_detect_serial_mirror(void) {
    /* OVMF (and firmware with console redirection) already copies ConOut to
     * the serial port; writing COM1 ourselves too would print every line twice. */
    EFI_GUID text_out_guid = EFI_SIMPLE_TEXT_OUTPUT_PROTOCOL_GUID;
    EFI_GUID path_guid = EFI_DEVICE_PATH_PROTOCOL_GUID;
    UINTN count = 0;
    EFI_HANDLE *handles = NULL;
    if (EFI_ERROR(loader_bs->LocateHandleBuffer(ByProtocol, &text_out_guid, NULL, &count, &handles))) return;
    for (UINTN i = 0; i < count; i++) {
        EFI_DEVICE_PATH *path = NULL;
        if (!EFI_ERROR(loader_bs->HandleProtocol(handles[i], &path_guid, (void **)&path)) && path &&
            path_has_uart(path))
            conout_reaches_serial = true;
    }
    loader_bs->FreePool(handles);
}

/* ---- minimal printf into a fixed buffer */
struct out_buf {
    char *data;
    uint64_t cap, len;
};

static void buf_putc(struct out_buf *b, char c) {
    if (b->len + 1 < b->cap) b->data[b->len++] = c;
}

static void buf_number(struct out_buf *b, uint64_t value, unsigned base, int width, char pad, bool negative) {
    char digits[24];
    int n = 0;
    do {
        unsigned d = (unsigned)(value % base);
        digits[n++] = (char)(d < 10 ? '0' + d : 'a' + d - 10);
        value /= base;
    } while (value);
    if (negative) digits[n++] = '-';
    for (int i = n; i < width; i++) buf_putc(b, pad);
    while (n) buf_putc(b, digits[--n]);
}

static void format_into(struct out_buf *b, const char *fmt, va_list ap) {
    for (; *fmt; fmt++) {
        if (*fmt != '%') {
            buf_putc(b, *fmt);
            continue;
        }
        fmt++;
        char pad = ' ';
        int width = 0, longs = 0;
        if (*fmt == '0') {
            pad = '0';
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9') width = width * 10 + (*fmt++ - '0');
        while (*fmt == 'l' || *fmt == 'z') {
            longs++;
            fmt++;
        }
        switch (*fmt) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            for (s = s ? s : "(null)"; *s; s++) buf_putc(b, *s);
            break;
        }
        case 'c':
            buf_putc(b, (char)va_arg(ap, int));
            break;
        case 'd': {
            int64_t v = longs ? va_arg(ap, int64_t) : va_arg(ap, int);
            buf_number(b, v < 0 ? (uint64_t)-v : (uint64_t)v, 10, width, pad, v < 0);
            break;
        }
        case 'u':
        case 'x': {
            uint64_t v = longs ? va_arg(ap, uint64_t) : va_arg(ap, unsigned);
            buf_number(b, v, *fmt == 'u' ? 10 : 16, width, pad, false);
            break;
        }
        case '%':
            buf_putc(b, '%');
            break;
        case '\0':
            fmt--;
            break;
        default:
            buf_putc(b, '?');
            break;
        }
    }
    b->data[b->len] = 0;
}

void log_printf(const char *fmt, ...) {
    char text[512];
    struct out_buf b = {text, sizeof(text), 0};
    va_list ap;
    va_start(ap, fmt);
    format_into(&b, fmt, ap);
    va_end(ap);
    conout_write(text);
    serial_write_unless_mirrored(text);
}

void serial_printf(const char *fmt, ...) {
    char text[512];
    struct out_buf b = {text, sizeof(text), 0};
    va_list ap;
    va_start(ap, fmt);
    format_into(&b, fmt, ap);
    va_end(ap);
    serial_write(text);
}

void fatal(const char *fmt, ...) {
    char text[512];
    struct out_buf b = {text, sizeof(text), 0};
    const char *prefix = "loader: error: ";
    while (*prefix) buf_putc(&b, *prefix++);
    va_list ap;
    va_start(ap, fmt);
    format_into(&b, fmt, ap);
    va_end(ap);
    conout_write(text);
    conout_write("\nloader: halted.\n");
    serial_write_unless_mirrored(text);
    serial_write_unless_mirrored("\nloader: halted.\n");
    /* Halt for good with the message visible: no return to the firmware
     * (it would try the next boot option or reboot). The watchdog is off. */
    for (;;) {
        if (boot_services_active)
            __asm__ volatile("hlt");
        else
            __asm__ volatile("cli; hlt");
    }
}

uint64_t tsc_read(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

uint64_t tsc_calibrate(void) {
    /* Stall only promises a minimum delay and the host may preempt us (TCG),
     * so the shortest of a few 500 us windows is the best estimate. */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 4; i++) {
        uint64_t start = tsc_read();
        loader_bs->Stall(500);
        uint64_t ticks = tsc_read() - start;
        if (ticks < best) best = ticks;
    }
    tsc_per_ms = best * 2;
    return tsc_per_ms;
}

uint64_t tsc_to_ms(uint64_t ticks) {
    return tsc_per_ms ? ticks / tsc_per_ms : 0;
}

void mem_zero(void *dst, uint64_t n) {
    uint64_t words = n / 8;
    __asm__ volatile("rep stosq" : "+D"(dst), "+c"(words) : "a"(0ULL) : "memory");
    uint8_t *tail = dst;
    for (uint64_t i = 0; i < (n & 7); i++) tail[i] = 0;
}

void mem_copy(void *dst, const void *src, uint64_t n) {
    __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

void read_progress_start(struct read_progress *p, const char *what, uint64_t total) {
    p->what = what;
    p->total = total;
    p->start_tsc = tsc_read();
    p->last_report_ms = 0;
    p->reports = 0;
}

uint64_t read_progress_request(const struct read_progress *p, uint64_t done, uint64_t unit) {
    return read_pace_request(done, tsc_to_ms(tsc_read() - p->start_tsc), p->total - done, unit);
}

void read_progress_update(struct read_progress *p, uint64_t done) {
    uint64_t elapsed_ms = tsc_to_ms(tsc_read() - p->start_tsc);
    if (done >= p->total || !read_pace_report_due(elapsed_ms, p->reports, p->last_report_ms)) return;
    p->last_report_ms = elapsed_ms;
    p->reports++;
    uint64_t rate = done / elapsed_ms / 1000; /* MB/s */
    uint64_t left_s = rate ? (p->total - done) / 1000000 / rate : 0;
    log_printf("loader: reading %s: %lu%% (%lu of %lu MiB, %lu MB/s, %lu s left)\n", p->what,
               done * 100 / p->total, done >> 20, p->total >> 20, rate, left_s);
}
