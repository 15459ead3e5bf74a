/* math_trig.c - sinf, cosf, tanhf.
 * Argument reduction x = k pi/2 + r: Cody-Waite with a three-part pi/2 for
 * |x| < 2^25, Payne-Hanek (integer multiply by the bits of 2/pi) above, so
 * even huge arguments reduce exactly enough. sin/cos of r in double. */
#include "lib/math.h"
#include "lib/math_internal.h"

/* pi/2 = PIO2_1 + PIO2_2 + PIO2_3 (to ~2^-110); the first two have at most 28
 * significant bits so k * PIO2_1 and k * PIO2_2 are exact for k < 2^25. */
static const double PIO2_1 = 0x1.921fb54000000p+0;
static const double PIO2_2 = 0x1.10b4612000000p-30;
static const double PIO2_3 = -0x1.676733ae8fe48p-60;
static const double INV_PIO2 = 0x1.45f306dc9c883p-1;
static const double PIO2 = 0x1.921fb54442d18p+0;

/* The binary digits of 2/pi, most significant first (bit 1 is 2^-1). */
static const uint64_t TWO_OVER_PI_BITS[5] = {
    0xa2f9836e4e441529ull, 0xfc2757d1f534ddc0ull, 0xdb6295993c439041ull,
    0xfe5163abdebbc561ull, 0xb7246e3a424dd2e0ull,
};

/* 64 bits of 2/pi starting at bit `pos` (1-based). */
static uint64_t two_over_pi_window(int pos) {
    int word = (pos - 1) / 64, shift = (pos - 1) % 64;
    uint64_t v = TWO_OVER_PI_BITS[word] << shift;
    if (shift) v |= TWO_OVER_PI_BITS[word + 1] >> (64 - shift);
    return v;
}

/* For |x| >= 2^25 (finite): returns the quadrant, *r = remainder in [-pi/4, pi/4]. */
static int reduce_large(float ax, double *r) {
    uint32_t bits = float_bits(ax);
    int e = (int)(bits >> 23) - 127 - 23;      /* ax = m * 2^e */
    uint64_t m = (bits & 0x7fffff) | 0x800000; /* e >= 2 since ax >= 2^25 */
    /* Bits 1..e-2 of 2/pi give multiples of 4 (whole turns): skip them. */
    int start = e - 1;
    uint64_t w_hi = two_over_pi_window(start), w_lo = two_over_pi_window(start + 64);
    unsigned __int128 a = (unsigned __int128)m * w_lo;
    unsigned __int128 b = (unsigned __int128)m * w_hi;
    /* P = a + (b << 64); x*2/pi mod 4 = P / 2^126 mod 4. Keep bits 0..127. */
    uint64_t p0 = (uint64_t)a;
    uint64_t p1 = (uint64_t)(a >> 64) + (uint64_t)b;
    int quadrant = (int)(p1 >> 62);
    uint64_t f_hi = p1 & ((1ull << 62) - 1), f_lo = p0; /* fraction * 2^126 */
    int negative = 0;
    if (f_hi >> 61) { /* fraction >= 1/2: use fraction - 1 and the next quadrant */
        quadrant = (quadrant + 1) & 3;
        negative = 1;
        /* 2^126 - F, as a 126-bit two-word number */
        f_lo = ~f_lo + 1;
        f_hi = ((~f_hi) + (f_lo == 0 ? 1 : 0)) & ((1ull << 62) - 1);
    }
    double frac = ((double)f_hi * 0x1p64 + (double)f_lo) * 0x1p-126;
    *r = (negative ? -frac : frac) * PIO2;
    return quadrant;
}

/* Quadrant k and r with x = k pi/2 + r, |r| <= ~pi/4. */
static int reduce(float x, double *r) {
    float ax = fabsf(x);
    if (ax <= 0.785398f) {
        *r = x;
        return 0;
    }
    int quadrant;
    double rr;
    if (ax < 0x1p25f) {
        double xd = ax;
        double kd = xd * INV_PIO2 + 0x1.8p52;
        kd -= 0x1.8p52;
        quadrant = (int)kd & 3;
        rr = ((xd - kd * PIO2_1) - kd * PIO2_2) - kd * PIO2_3;
    } else {
        quadrant = reduce_large(ax, &rr);
    }
    if (x < 0) { /* x = -(k pi/2 + r) = (-k) pi/2 + (-r) */
        rr = -rr;
        quadrant = (4 - quadrant) & 3;
    }
    *r = rr;
    return quadrant;
}

/* Taylor series, |r| <= pi/4: sin to r^15, cos to r^16 (error < 1e-16). */
static double sin_poly(double r) {
    double r2 = r * r;
    double p = -1.0 / 1307674368000.0;
    p = p * r2 + 1.0 / 6227020800.0;
    p = p * r2 - 1.0 / 39916800.0;
    p = p * r2 + 1.0 / 362880.0;
    p = p * r2 - 1.0 / 5040.0;
    p = p * r2 + 1.0 / 120.0;
    p = p * r2 - 1.0 / 6.0;
    return r + r * r2 * p;
}

static double cos_poly(double r) {
    double r2 = r * r;
    double p = 1.0 / 20922789888000.0;
    p = p * r2 - 1.0 / 87178291200.0;
    p = p * r2 + 1.0 / 479001600.0;
    p = p * r2 - 1.0 / 3628800.0;
    p = p * r2 + 1.0 / 40320.0;
    p = p * r2 - 1.0 / 720.0;
    p = p * r2 + 1.0 / 24.0;
    p = p * r2 - 0.5;
    return 1.0 + r2 * p;
}

float sinf(float x) {
    if (isnan_f(x) || isinf_f(x)) return x - x;
    double r;
    switch (reduce(x, &r)) {
    case 0:
        return (float)sin_poly(r);
    case 1:
        return (float)cos_poly(r);
    case 2:
        return (float)-sin_poly(r);
    default:
        return (float)-cos_poly(r);
    }
}

float cosf(float x) {
    if (isnan_f(x) || isinf_f(x)) return x - x;
    double r;
    switch (reduce(x, &r)) {
    case 0:
        return (float)cos_poly(r);
    case 1:
        return (float)-sin_poly(r);
    case 2:
        return (float)-cos_poly(r);
    default:
        return (float)sin_poly(r);
    }
}

/* e^z - 1 for |z| <= 1, accurate near 0: Taylor to z^18. */
static double expm1_small(double z) {
    double p = 1.0 / 6402373705728000.0;
    static const double inv_fact[17] = {
        1.0 / 355687428096000.0,
        1.0 / 20922789888000.0,
        1.0 / 1307674368000.0,
        1.0 / 87178291200.0,
        1.0 / 6227020800.0,
        1.0 / 479001600.0,
        1.0 / 39916800.0,
        1.0 / 3628800.0,
        1.0 / 362880.0,
        1.0 / 40320.0,
        1.0 / 5040.0,
        1.0 / 720.0,
        1.0 / 120.0,
        1.0 / 24.0,
        1.0 / 6.0,
        0.5,
        1.0,
    };
    for (int i = 0; i < 17; i++) p = p * z + inv_fact[i];
    return p * z;
}

float tanhf(float x) {
    if (isnan_f(x)) return x + x;
    float ax = fabsf(x);
    if (ax > 9.1f) return x > 0 ? 1.0f : -1.0f; /* 1 - tanh < 2^-25 */
    if (ax == 0.0f) return x;                   /* keeps -0 */
    double t;
    if (ax < 0.5f) {
        double e = expm1_small(2.0 * (double)ax); /* tanh = e/(e+2), no cancellation */
        t = e / (e + 2.0);
    } else {
        t = 1.0 - 2.0 / (math_exp_double(2.0 * (double)ax) + 1.0);
    }
    return (float)(x < 0 ? -t : t);
}
