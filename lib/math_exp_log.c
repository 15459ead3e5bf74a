/* math_exp_log.c - expf, logf, powf and their double-precision kernels. */
#include "lib/math.h"
#include "lib/math_internal.h"

static const double LN2_HI = 0x1.62e42fee00000p-1; /* few bits: k * LN2_HI is exact */
static const double LN2_LO = 0x1.a39ef35793c76p-33;
static const double INV_LN2 = 0x1.71547652b82fep+0;
static const double ROUND_SHIFT = 0x1.8p52; /* adding it rounds to an integer */

/* e^r for |r| <= 0.35: Taylor series to r^11 (error < 1e-17 relative). */
static double exp_poly(double r) {
    double p = 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    return p * r + 1.0;
}

double math_exp_double(double x) {
    /* x = k ln2 + r; e^x = 2^k e^r. */
    double shifted = x * INV_LN2 + ROUND_SHIFT;
    double kd = shifted - ROUND_SHIFT;
    int k = (int)kd;
    double r = (x - kd * LN2_HI) - kd * LN2_LO;
    double p = exp_poly(r);
    /* 2^k in two halves so that k down to -1500 or up to 1500 stays representable. */
    int k1 = k / 2, k2 = k - k / 2;
    return p * double_from_bits((uint64_t)(k1 + 1023) << 52) * double_from_bits((uint64_t)(k2 + 1023) << 52);
}

float expf(float x) {
    if (x != x) return x + x;
    if (x > 89.0f) return LIB_INFINITY;
    if (x < -104.0f) return 0.0f;
    /* Short path for the softmax hot loop: degree 8 is plenty for float. */
    double xd = x;
    double shifted = xd * INV_LN2 + ROUND_SHIFT;
    double kd = shifted - ROUND_SHIFT;
    int k = (int)kd;
    double r = (xd - kd * LN2_HI) - kd * LN2_LO;
    double p = 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    return (float)(p * double_from_bits((uint64_t)(k + 1023) << 52));
}

static double math_log_double(double x) {
    uint64_t bits = double_bits(x);
    int e = (int)((bits >> 52) & 0x7ff);
    if (e == 0) { /* subnormal: scale into the normal range */
        bits = double_bits(x * 0x1p54);
        e = (int)((bits >> 52) & 0x7ff) - 54;
    }
    e -= 1023;
    /* m in [sqrt(1/2), sqrt(2)) */
    double m = double_from_bits((bits & ((1ull << 52) - 1)) | (1023ull << 52));
    if (m > 1.4142135623730951) {
        m *= 0.5;
        e++;
    }
    /* ln m = 2 atanh(s), s = (m-1)/(m+1), |s| < 0.172: odd series to s^21. */
    double f = m - 1.0;
    double s = f / (2.0 + f);
    double s2 = s * s;
    double p = 1.0 / 21;
    p = p * s2 + 1.0 / 19;
    p = p * s2 + 1.0 / 17;
    p = p * s2 + 1.0 / 15;
    p = p * s2 + 1.0 / 13;
    p = p * s2 + 1.0 / 11;
    p = p * s2 + 1.0 / 9;
    p = p * s2 + 1.0 / 7;
    p = p * s2 + 1.0 / 5;
    p = p * s2 + 1.0 / 3;
    /* ln m = 2s + 2s * s^2 * p */
    double log_m = 2.0 * s + 2.0 * s * (s2 * p);
    return e * LN2_HI + (e * LN2_LO + log_m);
}

float logf(float x) {
    if (x != x) return x + x;
    if (x < 0.0f) return LIB_NAN;
    if (x == 0.0f) return -LIB_INFINITY;
    if (isinf_f(x)) return x;
    return (float)math_log_double(x);
}

/* 0: not an integer, 1: odd integer, 2: even integer. */
static int integer_kind(float y) {
    float ay = fabsf(y);
    if (ay >= 0x1p24f) return 2; /* every float this large is an even integer */
    if (floorf(ay) != ay) return 0;
    return ((int32_t)ay & 1) ? 1 : 2;
}

float powf(float x, float y) {
    if (y == 0.0f || x == 1.0f) return 1.0f;
    if (x != x || y != y) return x + y;
    float ax = fabsf(x);
    int kind = integer_kind(y);
    int negate = (float_bits(x) >> 31) && kind == 1; /* odd integer powers keep the sign (also of -0) */
    if (isinf_f(y)) {
        if (ax == 1.0f) return 1.0f;
        return ((ax < 1.0f) == (y < 0.0f)) ? LIB_INFINITY : 0.0f;
    }
    if (ax == 0.0f || isinf_f(x)) {
        /* 0^y and inf^y: 0 or inf depending on the signs. */
        int big = (ax == 0.0f) == (y < 0.0f);
        float r = big ? LIB_INFINITY : 0.0f;
        return negate ? -r : r;
    }
    if (x < 0.0f && kind == 0) return LIB_NAN;
    double z = (double)y * math_log_double(ax);
    float r;
    if (z > 200.0)
        r = LIB_INFINITY;
    else if (z < -200.0)
        r = 0.0f;
    else
        r = (float)math_exp_double(z);
    return negate ? -r : r;
}
