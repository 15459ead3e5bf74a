/* format_float.c - %f %e %g by exact decimal expansion.
 *
 * Every finite double is m * 2^e with integer m, so it has a finite decimal
 * expansion (at most 767 significant digits). We compute all of it with big
 * integers (integer part by repeated division by 1e9, fraction by repeated
 * multiplication by 1e9), then round that exact digit string half-to-even,
 * which is what glibc does. No drift, no guessing. */
#include <stdint.h>

#include "lib/bigint.h"
#include "lib/format_internal.h"

#define MAX_DIGITS 800 /* > 767 significant digits of any double */

/* value = 0 when n == 0; else d[0].d[1]d[2]... * 10^exp10, d[0] != 0, and
 * d[n-1] != 0 (no trailing zeros). Digits are 0..9, not characters. */
struct decimal {
    uint8_t d[MAX_DIGITS];
    int n;
    int exp10;
};

static void append_chunk(struct decimal *dec, uint32_t chunk, int width) {
    char tmp[10];
    for (int i = width - 1; i >= 0; i--) {
        tmp[i] = (char)(chunk % 10);
        chunk /= 10;
    }
    for (int i = 0; i < width; i++)
        if (dec->n < MAX_DIGITS) dec->d[dec->n++] = (uint8_t)tmp[i];
}

static int decimal_width(uint32_t v) {
    int w = 1;
    while (v >= 10) {
        v /= 10;
        w++;
    }
    return w;
}

/* Exact expansion of a finite, positive double. */
static void decimal_from_double(struct decimal *dec, double v) {
    union {
        double f;
        uint64_t u;
    } bits = {.f = v};
    uint64_t mant = bits.u & ((1ull << 52) - 1);
    int biased = (int)((bits.u >> 52) & 0x7ff);
    int e2;
    if (biased == 0) {
        e2 = -1074;
    } else {
        mant |= 1ull << 52;
        e2 = biased - 1075;
    }
    dec->n = 0;
    dec->exp10 = 0;
    if (mant == 0) return;

    struct bigint whole, frac;
    int frac_bits = 0;
    if (e2 >= 0) {
        bigint_set_u64(&whole, mant);
        bigint_shl(&whole, e2);
        bigint_set_u64(&frac, 0);
    } else if (e2 > -64) {
        bigint_set_u64(&whole, mant >> -e2);
        bigint_set_u64(&frac, mant & ((1ull << -e2) - 1));
        frac_bits = -e2;
    } else {
        bigint_set_u64(&whole, 0);
        bigint_set_u64(&frac, mant);
        frac_bits = -e2;
    }

    /* Integer part: base-1e9 chunks, least significant first. */
    uint32_t chunks[40];
    int nchunks = 0;
    while (!bigint_is_zero(&whole) && nchunks < 40)
        chunks[nchunks++] = bigint_divmod_small(&whole, 1000000000u);
    int int_digits = 0;
    if (nchunks > 0) {
        int first = decimal_width(chunks[nchunks - 1]);
        append_chunk(dec, chunks[nchunks - 1], first);
        for (int i = nchunks - 2; i >= 0; i--) append_chunk(dec, chunks[i], 9);
        int_digits = first + 9 * (nchunks - 1);
    }

    /* Fraction: each step yields the next nine digits exactly. */
    int skipped_zeros = 0; /* leading fraction zeros not stored (value < 1) */
    while (!bigint_is_zero(&frac)) {
        bigint_mul_small(&frac, 1000000000u);
        uint32_t chunk = bigint_take_above(&frac, frac_bits);
        if (dec->n == 0 && chunk == 0) {
            skipped_zeros += 9;
            continue;
        }
        append_chunk(dec, chunk, 9);
    }

    if (int_digits > 0) {
        dec->exp10 = int_digits - 1;
    } else {
        int lead = 0;
        while (lead < dec->n && dec->d[lead] == 0) lead++;
        for (int i = lead; i < dec->n; i++) dec->d[i - lead] = dec->d[i];
        dec->n -= lead;
        dec->exp10 = -(skipped_zeros + lead + 1);
    }
    while (dec->n > 0 && dec->d[dec->n - 1] == 0) dec->n--;
}

/* Keeps `keep` significant digits, rounding half to even. */
static void decimal_round(struct decimal *dec, int keep) {
    if (keep >= dec->n) return;
    if (keep < 0) {
        dec->n = 0;
        return;
    }
    int next = dec->d[keep];
    int more = keep + 1 < dec->n; /* trailing digits are non-zero by construction */
    int odd = keep > 0 && (dec->d[keep - 1] & 1);
    int up = next > 5 || (next == 5 && (more || odd));
    dec->n = keep;
    if (up) {
        int i = keep - 1;
        while (i >= 0 && dec->d[i] == 9) i--;
        if (i < 0) {
            dec->d[0] = 1;
            dec->n = 1;
            dec->exp10++;
        } else {
            dec->d[i]++;
            dec->n = i + 1;
        }
    }
    while (dec->n > 0 && dec->d[dec->n - 1] == 0) dec->n--;
}

/* The digit in the 10^place position. */
static char digit_at(const struct decimal *dec, int place) {
    int idx = dec->exp10 - place;
    return (char)('0' + ((idx >= 0 && idx < dec->n) ? dec->d[idx] : 0));
}

struct float_body {
    int style;      /* 'f' or 'e' */
    int frac_count; /* digits after the point */
    int dot;        /* print the point */
    int exp10;      /* exponent printed by 'e' style */
};

static int body_length(const struct decimal *dec, const struct float_body *b) {
    int len = b->frac_count + b->dot;
    if (b->style == 'f') {
        len += (dec->n > 0 && dec->exp10 > 0) ? dec->exp10 + 1 : 1;
    } else {
        int e = b->exp10 < 0 ? -b->exp10 : b->exp10;
        int edigits = e >= 100 ? (e >= 1000 ? 4 : 3) : 2;
        len += 1 + 2 + edigits;
    }
    return len;
}

static void emit_body(struct format_out *out, const struct decimal *dec, const struct float_body *b,
                      int upper) {
    if (b->style == 'f') {
        int top = (dec->n > 0 && dec->exp10 > 0) ? dec->exp10 : 0;
        for (int place = top; place >= 0; place--) format_putc(out, digit_at(dec, place));
        if (b->dot) format_putc(out, '.');
        for (int i = 1; i <= b->frac_count; i++) format_putc(out, digit_at(dec, -i));
        return;
    }
    int lead = dec->n > 0 ? dec->exp10 : 0;
    format_putc(out, digit_at(dec, lead));
    if (b->dot) format_putc(out, '.');
    for (int i = 1; i <= b->frac_count; i++) format_putc(out, digit_at(dec, lead - i));
    format_putc(out, upper ? 'E' : 'e');
    int e = b->exp10;
    format_putc(out, e < 0 ? '-' : '+');
    if (e < 0) e = -e;
    char tmp[6];
    int len = 0;
    do {
        tmp[len++] = (char)('0' + e % 10);
        e /= 10;
    } while (e > 0);
    if (len < 2) tmp[len++] = '0';
    while (len > 0) format_putc(out, tmp[--len]);
}

static void emit_padded(struct format_out *out, const struct format_spec *spec, char sign, int body_len,
                        int zero_pad, const struct decimal *dec, const struct float_body *b,
                        const char *text) {
    int len = body_len + (sign ? 1 : 0);
    int pad = spec->width > len ? spec->width - len : 0;
    int upper = spec->conv == 'F' || spec->conv == 'E' || spec->conv == 'G';
    if (!spec->left && !zero_pad) format_repeat(out, ' ', pad);
    if (sign) format_putc(out, sign);
    if (!spec->left && zero_pad) format_repeat(out, '0', pad);
    if (text) {
        for (const char *p = text; *p; p++) format_putc(out, upper ? (char)(*p - 32) : *p);
    } else {
        emit_body(out, dec, b, upper);
    }
    if (spec->left) format_repeat(out, ' ', pad);
}

void format_double(struct format_out *out, const struct format_spec *spec, double v) {
    union {
        double f;
        uint64_t u;
    } bits = {.f = v};
    int negative = (int)(bits.u >> 63);
    char sign = negative ? '-' : spec->plus ? '+' : spec->space ? ' ' : 0;
    int biased = (int)((bits.u >> 52) & 0x7ff);
    if (biased == 0x7ff) {
        const char *text = (bits.u & ((1ull << 52) - 1)) ? "nan" : "inf";
        emit_padded(out, spec, sign, 3, 0, 0, 0, text);
        return;
    }

    struct decimal local; /* about 2.5 KiB of stack in total with the big integers */
    struct decimal *dec = &local;
    decimal_from_double(dec, negative ? -v : v);

    int precision = spec->precision < 0 ? 6 : spec->precision;
    char conv = (char)(spec->conv | 32);
    struct float_body body = {0};
    if (conv == 'f') {
        decimal_round(dec, dec->exp10 + 1 + precision);
        body.style = 'f';
        body.frac_count = precision;
        body.dot = precision > 0 || spec->alt;
    } else if (conv == 'e') {
        decimal_round(dec, precision + 1);
        body.style = 'e';
        body.frac_count = precision;
        body.dot = precision > 0 || spec->alt;
        body.exp10 = dec->n > 0 ? dec->exp10 : 0;
    } else { /* 'g' */
        int p = precision == 0 ? 1 : precision;
        decimal_round(dec, p);
        int x = dec->n > 0 ? dec->exp10 : 0;
        if (p > x && x >= -4) {
            body.style = 'f';
            body.frac_count = p - 1 - x;
            if (!spec->alt) {
                int needed = dec->n - 1 - x; /* fraction digits up to the last non-zero */
                if (needed < 0) needed = 0;
                if (needed < body.frac_count) body.frac_count = needed;
            }
        } else {
            body.style = 'e';
            body.frac_count = p - 1;
            if (!spec->alt) {
                int needed = dec->n > 0 ? dec->n - 1 : 0;
                if (needed < body.frac_count) body.frac_count = needed;
            }
            body.exp10 = x;
        }
        body.dot = body.frac_count > 0 || spec->alt;
    }
    emit_padded(out, spec, sign, body_length(dec, &body), spec->zero && !spec->left, dec, &body, 0);
}
