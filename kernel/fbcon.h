/* fbcon.h - text console on the UEFI GOP framebuffer. */
#ifndef KERNEL_FBCON_H
#define KERNEL_FBCON_H

#include <stddef.h>
#include "boot/boot_info.h"

/* Sets up the console on the framebuffer and registers it as a console
 * output. Does nothing when there is no usable framebuffer. */
void fbcon_init(const struct boot_framebuffer *fb);
/* Interprets text with \n \r \b \t, UTF-8 (one box per sequence) and the
 * ANSI sequences the kernel writes (cursor moves, erase, SGR colours). */
void fbcon_write(const char *s, size_t len);
/* 1 when the framebuffer console is on screen; cols/rows may be NULL. */
int fbcon_size(int *cols, int *rows);
/* The status line (model, speed, memory) kept on the screen's last row;
 * see kernel/status.h. */
void fbcon_set_status_line(const char *text);

#endif
