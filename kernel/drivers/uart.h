/* uart.h - 16550 COM1 at 0x3F8: polled output that never drops a byte, and
 * polled input drained into a ring buffer. */
#ifndef KERNEL_UART_H
#define KERNEL_UART_H

#include <stddef.h>

/* Probes COM1 (scratch register, then a byte through loopback): a missing
 * or floating port is skipped, and every later call does nothing. */
void uart_init(void);
int uart_is_present(void);
/* Writes len bytes, '\n' as "\r\n"; waits for the transmitter. */
void uart_write(const char *s, size_t len);
/* Moves bytes waiting in the receive FIFO into the ring buffer. */
void uart_poll(void);
/* Next received byte (0-255) or -1 when none is queued. Polls first. */
int uart_read_byte(void);

#endif
