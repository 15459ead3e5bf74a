/* format.c - vsnprintf/snprintf: parses the format, handles integers,
 * characters, strings and pointers; floating point is in format_float.c. */
#include <stdint.h>

#include "lib/format.h"
#include "lib/format_internal.h"
#include "lib/string.h"

/* Emits [prefix][zeros to precision][digits] with width padding. */
static void emit_integer(struct format_out *out, const struct format_spec *spec, const char *prefix,
                         const char *digits, int ndigits) {
    int prefix_len = (int)strlen(prefix);
    int zeros = spec->precision > ndigits ? spec->precision - ndigits : 0;
    int len = prefix_len + zeros + ndigits;
    int pad = spec->width > len ? spec->width - len : 0;
    /* '0' pads with zeros only when no precision is given and not left-justified. */
    int zero_pad = spec->zero && !spec->left && spec->precision < 0;
    if (!spec->left && !zero_pad) format_repeat(out, ' ', pad);
    for (int i = 0; i < prefix_len; i++) format_putc(out, prefix[i]);
    if (zero_pad) format_repeat(out, '0', pad);
    format_repeat(out, '0', zeros);
    for (int i = 0; i < ndigits; i++) format_putc(out, digits[i]);
    if (spec->left) format_repeat(out, ' ', pad);
}

static void format_unsigned(struct format_out *out, struct format_spec *spec, uint64_t v, int negative) {
    char digits[24];
    int n = 0;
    unsigned base = 10;
    const char *alphabet = "0123456789abcdef";
    char c = spec->conv;
    if (c == 'x' || c == 'p') base = 16;
    if (c == 'X') {
        base = 16;
        alphabet = "0123456789ABCDEF";
    }
    if (c == 'o') base = 8;

    char tmp[24];
    uint64_t rest = v;
    while (rest > 0) {
        tmp[n++] = alphabet[rest % base];
        rest /= base;
    }
    /* Precision 0 with value 0 prints no digits; otherwise at least one. */
    if (n == 0 && spec->precision != 0) tmp[n++] = '0';
    for (int i = 0; i < n; i++) digits[i] = tmp[n - 1 - i];

    const char *prefix = "";
    if (c == 'd' || c == 'i') {
        prefix = negative ? "-" : spec->plus ? "+" : spec->space ? " " : "";
    } else if ((c == 'x' || c == 'X') && spec->alt && v != 0) {
        prefix = c == 'x' ? "0x" : "0X";
    } else if (c == 'p') {
        prefix = "0x";
    } else if (c == 'o' && spec->alt && (n == 0 || digits[0] != '0')) {
        if (spec->precision <= n) spec->precision = n + 1; /* '#' makes the first digit 0 */
    }
    emit_integer(out, spec, prefix, digits, n);
}

static void format_text(struct format_out *out, const struct format_spec *spec, const char *s, int len) {
    int pad = spec->width > len ? spec->width - len : 0;
    if (!spec->left) format_repeat(out, ' ', pad);
    for (int i = 0; i < len; i++) format_putc(out, s[i]);
    if (spec->left) format_repeat(out, ' ', pad);
}

enum length { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_T, LEN_J };

static int parse_number(const char **p) {
    int v = 0;
    while (**p >= '0' && **p <= '9') {
        if (v < 100000000) v = v * 10 + (**p - '0');
        (*p)++;
    }
    return v;
}

/* The flags, width, precision and length of a conversion (*p just past
 * the '%'); *p is left on the conversion character. */
static enum length parse_spec(const char **p, va_list *args, struct format_spec *spec) {
    spec->width = -1;
    spec->precision = -1;
    for (;; (*p)++) {
        if (**p == '-')
            spec->left = 1;
        else if (**p == '+')
            spec->plus = 1;
        else if (**p == ' ')
            spec->space = 1;
        else if (**p == '#')
            spec->alt = 1;
        else if (**p == '0')
            spec->zero = 1;
        else
            break;
    }
    if (**p == '*') {
        (*p)++;
        int w = va_arg(*args, int);
        if (w < 0) {
            spec->left = 1;
            w = w == INT32_MIN ? INT32_MAX : -w;
        }
        spec->width = w;
    } else if (**p >= '0' && **p <= '9') {
        spec->width = parse_number(p);
    }
    if (**p == '.') {
        (*p)++;
        if (**p == '*') {
            (*p)++;
            int prec = va_arg(*args, int);
            spec->precision = prec < 0 ? -1 : prec;
        } else {
            spec->precision = parse_number(p);
        }
    }
    static const struct {
        char c;
        enum length one, two; /* the letter once, and twice (hh, ll) */
    } lengths[] = {{'h', LEN_H, LEN_HH},
                   {'l', LEN_L, LEN_LL},
                   {'z', LEN_Z, LEN_Z},
                   {'t', LEN_T, LEN_T},
                   {'j', LEN_J, LEN_J}};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++) {
        if (**p != lengths[i].c) continue;
        (*p)++;
        if (lengths[i].two != lengths[i].one && **p == lengths[i].c) {
            (*p)++;
            return lengths[i].two;
        }
        return lengths[i].one;
    }
    return LEN_NONE;
}

/* The argument of %d/%i as its length says. */
static int64_t signed_arg(va_list *args, enum length len) {
    switch (len) {
    case LEN_HH:
        return (signed char)va_arg(*args, int);
    case LEN_H:
        return (short)va_arg(*args, int);
    case LEN_L:
        return va_arg(*args, long);
    case LEN_LL:
        return va_arg(*args, long long);
    case LEN_Z:
        return (int64_t)va_arg(*args, size_t);
    case LEN_T:
        return va_arg(*args, ptrdiff_t);
    case LEN_J:
        return va_arg(*args, int64_t);
    default:
        return va_arg(*args, int);
    }
}

/* The argument of %u/%x/%X/%o as its length says. */
static uint64_t unsigned_arg(va_list *args, enum length len) {
    switch (len) {
    case LEN_HH:
        return (unsigned char)va_arg(*args, unsigned);
    case LEN_H:
        return (unsigned short)va_arg(*args, unsigned);
    case LEN_L:
        return va_arg(*args, unsigned long);
    case LEN_LL:
        return va_arg(*args, unsigned long long);
    case LEN_Z:
        return va_arg(*args, size_t);
    case LEN_T:
        return (uint64_t)va_arg(*args, ptrdiff_t);
    case LEN_J:
        return va_arg(*args, uint64_t);
    default:
        return va_arg(*args, unsigned);
    }
}

/* One conversion (spec->conv) of its argument; 0, or -1 for a conversion
 * character this printf does not know. */
static int format_conversion(struct format_out *out, struct format_spec *spec, enum length len,
                             va_list *args) {
    switch (spec->conv) {
    case 'd':
    case 'i': {
        int64_t v = signed_arg(args, len);
        uint64_t mag = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
        format_unsigned(out, spec, mag, v < 0);
        return 0;
    }
    case 'u':
    case 'x':
    case 'X':
    case 'o':
        format_unsigned(out, spec, unsigned_arg(args, len), 0);
        return 0;
    case 'p': {
        void *ptr = va_arg(*args, void *);
        if (!ptr) {
            format_text(out, spec, "(nil)", 5); /* as glibc prints it */
        } else {
            spec->plus = spec->space = 0;
            format_unsigned(out, spec, (uint64_t)(uintptr_t)ptr, 0);
        }
        return 0;
    }
    case 'c': {
        char c = (char)va_arg(*args, int);
        format_text(out, spec, &c, 1);
        return 0;
    }
    case 's': {
        const char *s = va_arg(*args, const char *);
        if (!s) s = (spec->precision < 0 || spec->precision >= 6) ? "(null)" : "";
        size_t n = spec->precision < 0 ? strlen(s) : strnlen(s, (size_t)spec->precision);
        format_text(out, spec, s, (int)n);
        return 0;
    }
    case 'f':
    case 'F':
    case 'e':
    case 'E':
    case 'g':
    case 'G':
        format_double(out, spec, va_arg(*args, double));
        return 0;
    case '%':
        format_putc(out, '%');
        return 0;
    }
    return -1;
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap) {
    struct format_out out = {buf, size, 0};
    va_list args;
    va_copy(args, ap);
    const char *p = fmt;
    while (*p) {
        if (*p != '%') {
            format_putc(&out, *p++);
            continue;
        }
        const char *start = p++;
        struct format_spec spec = {0};
        enum length len = parse_spec(&p, &args, &spec);
        spec.conv = *p;
        if (format_conversion(&out, &spec, len, &args) != 0) {
            /* Unknown or truncated conversion: print it as written. */
            for (const char *q = start; q < p; q++) format_putc(&out, *q);
            if (!*p) continue;
            format_putc(&out, *p);
        }
        p++;
    }
    va_end(args);
    if (size > 0) buf[out.pos < size ? out.pos : size - 1] = '\0';
    return out.pos > INT32_MAX ? INT32_MAX : (int)out.pos;
}

int snprintf(char *buf, size_t size, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
