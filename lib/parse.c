/* parse.c - integer parsing (strtol, strtoull) and abs. Like C, with no
 * errno: out-of-range values saturate. */
#include <stdint.h>

#include "lib/ctype.h"
#include "lib/stdlib.h"

/* Not <limits.h>: GCC's copy needs the C library's under -nostdinc. */
#define LONG_MAX_VALUE __LONG_MAX__
#define LONG_MIN_VALUE (-__LONG_MAX__ - 1L)

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if ((c | 32) >= 'a' && (c | 32) <= 'z') return (c | 32) - 'a' + 10;
    return 99;
}

/* Parses the magnitude; *overflow is set when it does not fit 64 bits. */
static uint64_t parse_magnitude(const char *s, char **end, int base, int *negative, int *overflow) {
    const char *p = s;
    *negative = 0;
    *overflow = 0;
    while (isspace((unsigned char)*p)) p++;
    if (*p == '+' || *p == '-') *negative = *p++ == '-';
    if ((base == 0 || base == 16) && p[0] == '0' && (p[1] | 32) == 'x' && digit_value(p[2]) < 16) {
        p += 2;
        base = 16;
    } else if (base == 0) {
        base = p[0] == '0' ? 8 : 10;
    }
    if (base < 2 || base > 36) {
        if (end) *end = (char *)s;
        return 0;
    }
    uint64_t v = 0;
    const char *digits = p;
    for (; digit_value(*p) < base; p++) {
        unsigned d = (unsigned)digit_value(*p);
        if (v > (UINT64_MAX - d) / (unsigned)base)
            *overflow = 1;
        else
            v = v * (unsigned)base + d;
    }
    if (end) *end = (char *)(p == digits ? s : p);
    return p == digits ? 0 : v;
}

long strtol(const char *s, char **end, int base) {
    int negative, overflow;
    uint64_t v = parse_magnitude(s, end, base, &negative, &overflow);
    if (negative) {
        if (overflow || v > (uint64_t)LONG_MAX_VALUE + 1) return LONG_MIN_VALUE;
        return (long)(0 - v);
    }
    if (overflow || v > (uint64_t)LONG_MAX_VALUE) return LONG_MAX_VALUE;
    return (long)v;
}

unsigned long long strtoull(const char *s, char **end, int base) {
    int negative, overflow;
    uint64_t v = parse_magnitude(s, end, base, &negative, &overflow);
    if (overflow) return UINT64_MAX;
    return negative ? 0 - v : v;
}

int abs(int x) {
    return x < 0 ? -x : x;
}
