/* ps2.h - i8042 PS/2 keyboard, polled (scan code set 1 as translated by the
 * controller), any layout keymap.c knows. Registers itself as a console input. */
#ifndef KERNEL_PS2_H
#define KERNEL_PS2_H

void ps2_init(void);

#endif
