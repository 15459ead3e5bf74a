/* format_internal.h - pieces shared by format.c (the printf engine) and
 * format_float.c (exact floating-point conversions). Not a public API. */
#ifndef LIB_FORMAT_INTERNAL_H
#define LIB_FORMAT_INTERNAL_H

#include <stddef.h>

/* Output that counts everything but stores only what fits. */
struct format_out {
    char *buf;
    size_t size;
    size_t pos;
};

struct format_spec {
    int left;      /* '-' */
    int plus;      /* '+' */
    int space;     /* ' ' */
    int alt;       /* '#' */
    int zero;      /* '0' */
    int width;     /* -1: none */
    int precision; /* -1: none */
    char conv;     /* conversion letter */
};

static inline void format_putc(struct format_out *out, char c) {
    if (out->pos + 1 < out->size) out->buf[out->pos] = c;
    out->pos++;
}

static inline void format_repeat(struct format_out *out, char c, int count) {
    for (int i = 0; i < count; i++) format_putc(out, c);
}

/* Formats one %f %F %e %E %g %G conversion of v. */
void format_double(struct format_out *out, const struct format_spec *spec, double v);

#endif
