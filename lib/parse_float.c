/* parse_float.c - strtod and strtof, correctly rounded (half to even).
 *
 * The decimal input D * 10^P is converted exactly with big integers: either
 * N = D * 10^P directly, or the quotient D * 2^s / 10^-P to 64+ bits. The
 * 64 leading bits plus a "something below" flag are enough to round to 53
 * (or 24) bits correctly. Inputs with more than MAX_SIG digits keep a marker
 * digit for the dropped tail: no halfway point between two doubles needs
 * that many digits, so the rounding decision is unchanged. */
#include <stdint.h>

#include "lib/bigint.h"
#include "lib/ctype.h"
#include "lib/stdlib.h"

#define MAX_SIG 780

struct binary_format {
    int mant_bits; /* including the hidden bit */
    int emin;      /* exponent of the smallest normal */
    int max_biased;
    int bias;
};

static const struct binary_format double_format = {53, -1022, 2046, 1023};
static const struct binary_format float_format = {24, -126, 254, 127};

/* Rounds (q + sticky fraction) * 2^e2, q normalised (bit 63 set), to the
 * format; returns the bit pattern without the sign. */
static uint64_t round_to_format(uint64_t q, int e2, int sticky, const struct binary_format *f) {
    int top = e2 + 63;
    int lowbit = top - (f->mant_bits - 1);
    int min_lowbit = f->emin - (f->mant_bits - 1);
    if (lowbit < min_lowbit) lowbit = min_lowbit;
    int shift = lowbit - e2;
    uint64_t kept;
    int up;
    if (shift > 64) {
        return 0; /* below half the smallest subnormal */
    } else if (shift == 64) {
        kept = 0;
        up = q > (1ull << 63) || (q == (1ull << 63) && sticky);
    } else {
        kept = q >> shift;
        uint64_t rem = q & ((1ull << shift) - 1);
        uint64_t half = 1ull << (shift - 1);
        up = rem > half || (rem == half && (sticky || (kept & 1)));
    }
    kept += (uint64_t)up;
    if (kept >> f->mant_bits) {
        kept >>= 1;
        lowbit++;
    }
    uint64_t hidden = 1ull << (f->mant_bits - 1);
    if (kept < hidden) return kept; /* subnormal (or zero) */
    long biased = (long)lowbit + (f->mant_bits - 1) + f->bias;
    if (biased > f->max_biased) return (uint64_t)(f->max_biased + 1) << (f->mant_bits - 1); /* inf */
    return ((uint64_t)biased << (f->mant_bits - 1)) | (kept & (hidden - 1));
}

/* Converts digits (values 0..9) * 10^p to the format's bit pattern. */
static uint64_t decimal_to_binary(const uint8_t *digits, int nd, long p, const struct binary_format *f) {
    uint64_t inf_bits = (uint64_t)(f->max_biased + 1) << (f->mant_bits - 1);
    if (nd == 0) return 0;
    if (nd + p > 311) return inf_bits;
    if (nd + p < -345) return 0;

    struct bigint n;
    bigint_set_u64(&n, 0);
    for (int i = 0; i < nd; i++) {
        bigint_mul_small(&n, 10);
        bigint_add_small(&n, digits[i]);
    }
    int sticky;
    uint64_t q;
    int e2;
    if (p >= 0) {
        bigint_mul_pow10(&n, (int)p);
        int bits = bigint_bitlen(&n);
        q = bigint_top64(&n, &sticky);
        e2 = bits - 64;
    } else {
        struct bigint m;
        bigint_set_u64(&m, 1);
        bigint_mul_pow10(&m, (int)-p);
        /* Quotient n * 2^s / m lands in [2^63, 2^65). */
        int s = 64 + bigint_bitlen(&m) - bigint_bitlen(&n);
        if (s > 0)
            bigint_shl(&n, s);
        else
            bigint_shl(&m, -s);
        bigint_shl(&m, 64);
        uint64_t quotient = 0;
        int bit64 = 0;
        for (int bit = 64; bit >= 0; bit--) {
            if (bigint_cmp(&n, &m) >= 0) {
                bigint_sub(&n, &m);
                if (bit == 64)
                    bit64 = 1;
                else
                    quotient |= 1ull << bit;
            }
            bigint_shr1(&m);
        }
        sticky = !bigint_is_zero(&n);
        e2 = -s;
        if (bit64) {
            sticky |= (int)(quotient & 1);
            quotient = (quotient >> 1) | (1ull << 63);
            e2++;
        }
        q = quotient;
    }
    return round_to_format(q, e2, sticky, f);
}

static int match_word(const char *p, const char *word) {
    int i = 0;
    for (; word[i]; i++)
        if ((p[i] | 32) != word[i]) return 0;
    return i;
}

/* Parses the text; returns the bit pattern (sign included) for the format. */
static uint64_t parse_decimal(const char *s, char **end, const struct binary_format *f) {
    const char *p = s;
    uint64_t sign_bit = 1ull << (f->mant_bits - 1 + (f->mant_bits == 53 ? 11 : 8));
    uint64_t inf_bits = (uint64_t)(f->max_biased + 1) << (f->mant_bits - 1);
    while (isspace((unsigned char)*p)) p++;
    int negative = 0;
    if (*p == '+' || *p == '-') negative = *p++ == '-';
    uint64_t sign = negative ? sign_bit : 0;

    int n;
    if ((n = match_word(p, "inf"))) {
        p += n;
        if ((n = match_word(p, "inity"))) p += n;
        if (end) *end = (char *)p;
        return sign | inf_bits;
    }
    if ((n = match_word(p, "nan"))) {
        p += n;
        if (*p == '(') { /* nan(chars): accept only if the parenthesis closes */
            const char *q = p + 1;
            while (isalnum((unsigned char)*q) || *q == '_') q++;
            if (*q == ')') p = q + 1;
        }
        if (end) *end = (char *)p;
        return sign | inf_bits | (1ull << (f->mant_bits - 2)); /* quiet NaN */
    }

    uint8_t digits[MAX_SIG + 1];
    int nd = 0, seen_digit = 0, dropped_nonzero = 0;
    long scale = 0; /* value = digits * 10^scale */
    for (int after_point = 0;; p++) {
        if (*p == '.' && !after_point) {
            after_point = 1;
            continue;
        }
        if (!isdigit((unsigned char)*p)) break;
        seen_digit = 1;
        int d = *p - '0';
        if (nd == 0 && d == 0) {
            if (after_point) scale--;
        } else if (nd < MAX_SIG) {
            digits[nd++] = (uint8_t)d;
            if (after_point) scale--;
        } else {
            if (d) dropped_nonzero = 1;
            if (!after_point) scale++;
        }
        if (scale < -100000000L) scale = -100000000L;
        if (scale > 100000000L) scale = 100000000L;
    }
    if (!seen_digit) {
        if (end) *end = (char *)s;
        return 0;
    }
    if ((*p | 32) == 'e') {
        const char *q = p + 1;
        int exp_negative = 0;
        if (*q == '+' || *q == '-') exp_negative = *q++ == '-';
        if (isdigit((unsigned char)*q)) {
            long e = 0;
            for (; isdigit((unsigned char)*q); q++)
                if (e < 100000000L) e = e * 10 + (*q - '0');
            scale += exp_negative ? -e : e;
            p = q;
        }
    }
    if (end) *end = (char *)p;
    if (dropped_nonzero) {
        digits[nd++] = 1;
        scale--;
    }
    return sign | decimal_to_binary(digits, nd, scale, f);
}

double strtod(const char *s, char **end) {
    union {
        uint64_t u;
        double d;
    } v = {.u = parse_decimal(s, end, &double_format)};
    return v.d;
}

float strtof(const char *s, char **end) {
    union {
        uint32_t u;
        float f;
    } v = {.u = (uint32_t)parse_decimal(s, end, &float_format)};
    return v.f;
}
