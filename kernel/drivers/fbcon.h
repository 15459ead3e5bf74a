/* fbcon.h - text console on the UEFI GOP framebuffer. */
#ifndef KERNEL_FBCON_H
#define KERNEL_FBCON_H

#include <stddef.h>
#include <stdint.h>
#include "boot/boot_info.h"

/* Sets up the console on the framebuffer and registers it as a console
 * output. Does nothing when there is no usable framebuffer. */
void fbcon_init(const struct boot_framebuffer *fb);
/* Why the console cannot draw on fb (no framebuffer, too small, unknown or
 * non-32-bit pixels, a stride shorter than the width, a size past its
 * memory), or NULL when it can: RGB, BGR and 32-bit bit-mask pixels at any
 * stride of at least width x 4 bytes. */
const char *fbcon_unusable_reason(const struct boot_framebuffer *fb);
/* Interprets text with \n \r \b \t, UTF-8 (Unifont glyphs, East Asian wide
 * characters in two cells, U+FFFD for invalid bytes) and the
 * ANSI sequences the kernel writes (cursor moves, erase, SGR colours). */
void fbcon_write(const char *s, size_t len);
/* The text scale (1-4) for a screen: 1 below 1600 pixels wide, else the
 * smallest that keeps lines within 160 columns, with at least 24 rows. */
int fbcon_choose_scale(uint32_t width, uint32_t height);
/* 1 when the framebuffer console is on screen; cols/rows (of the text
 * area, without the status row) may be NULL. */
int fbcon_size(int *cols, int *rows);
/* The status line (model, speed, memory) kept on the screen's last row;
 * see kernel/console/status.h. */
void fbcon_set_status_line(const char *text);
/* For a framebuffer the device shows only when told (virtio-gpu): after each
 * change, fn gets the pixel rows y .. y + rows - 1 that changed. */
typedef void (*fbcon_present_fn)(uint32_t y, uint32_t rows);
void fbcon_set_present(fbcon_present_fn fn);

#endif
