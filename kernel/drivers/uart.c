/* uart.c - COM1 (16550) at 115200 8N1 with FIFOs. Output is polled and waits
 * for the transmit holding register, so nothing is ever dropped. Input is
 * drained from the receive FIFO into a ring; when the ring is full we stop
 * draining and the bytes wait in the UART (QEMU holds the rest). */
#include "kernel/drivers/uart.h"
#include "kernel/arch/cpu.h"
#include <stdint.h>

#define COM1 0x3F8
enum {
    REG_DATA = 0,
    REG_IER = 1,
    REG_FCR = 2,
    REG_LCR = 3,
    REG_MCR = 4,
    REG_LSR = 5,
    REG_SCR = 7,
};
#define LSR_DATA_READY 0x01
#define LSR_THR_EMPTY 0x20

#define RX_RING_SIZE 8192 /* power of two */

static uint8_t rx_ring[RX_RING_SIZE];
static uint32_t rx_head, rx_tail; /* head: next write, tail: next read */
static int uart_present;

/* A 16550 answers in loopback mode: what we send comes back on the
 * receive side. A missing port (the bus floats: every register reads 0xFF)
 * or something else at 0x3F8 fails one of these within microseconds. */
static int uart_probe(void) {
    if (inb(COM1 + REG_LSR) == 0xFF) return 0;
    for (int pattern = 0x5A; pattern <= 0xA5; pattern += 0x4B) {
        outb(COM1 + REG_SCR, (uint8_t)pattern);
        if (inb(COM1 + REG_SCR) != pattern) return 0;
    }
    outb(COM1 + REG_MCR, 0x1E); /* loopback, RTS, OUT1, OUT2 */
    outb(COM1 + REG_FCR, 0x07); /* clear both FIFOs */
    outb(COM1 + REG_DATA, 0xAE);
    int echoed = 0;
    for (int i = 0; i < 1000 && !echoed; i++) echoed = inb(COM1 + REG_LSR) & LSR_DATA_READY;
    int ok = echoed && inb(COM1 + REG_DATA) == 0xAE;
    outb(COM1 + REG_MCR, 0x03); /* DTR, RTS: loopback off */
    return ok;
}

void uart_init(void) {
    outb(COM1 + REG_IER, 0x00); /* polled: no interrupts */
    outb(COM1 + REG_LCR, 0x80); /* DLAB on */
    outb(COM1 + REG_DATA, 1);   /* divisor 1 = 115200 baud */
    outb(COM1 + REG_IER, 0);
    outb(COM1 + REG_LCR, 0x03); /* 8N1, DLAB off */
    uart_present = uart_probe();
    if (!uart_present) return;
    outb(COM1 + REG_FCR, 0xC7); /* FIFO on, clear both, 14-byte trigger */
    outb(COM1 + REG_MCR, 0x03); /* DTR, RTS */
}

int uart_is_present(void) {
    return uart_present;
}

static void uart_put_raw(uint8_t c) {
    /* Bounded wait so a wedged UART cannot hang the kernel. */
    for (uint32_t spins = 0; spins < 10000000u; spins++) {
        if (inb(COM1 + REG_LSR) & LSR_THR_EMPTY) break;
        cpu_relax();
    }
    outb(COM1 + REG_DATA, c);
}

void uart_write(const char *s, size_t len) {
    if (!uart_present) return;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '\n') uart_put_raw('\r');
        uart_put_raw((uint8_t)s[i]);
    }
}

void uart_poll(void) {
    if (!uart_present) return;
    while (rx_head - rx_tail < RX_RING_SIZE && (inb(COM1 + REG_LSR) & LSR_DATA_READY)) {
        rx_ring[rx_head % RX_RING_SIZE] = inb(COM1 + REG_DATA);
        rx_head++;
    }
}

int uart_read_byte(void) {
    uart_poll();
    if (rx_head == rx_tail) return -1;
    uint8_t c = rx_ring[rx_tail % RX_RING_SIZE];
    rx_tail++;
    return c;
}
