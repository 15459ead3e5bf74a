/* format.h - printf-style formatting into a buffer (no I/O here; the kernel
 * console and host tools build their output on top of this).
 * Supports: flags "-+ #0", width and precision (also '*'), length modifiers
 * hh h l ll z t j, conversions d i u x X o c s p f F e E g G %.
 * Returns the length the full output would have (like C99 vsnprintf). */
#ifndef LIB_FORMAT_H
#define LIB_FORMAT_H

#include <stdarg.h>
#include <stddef.h>

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
