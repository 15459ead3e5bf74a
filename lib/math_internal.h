/* math_internal.h - double-precision kernels shared by the float functions.
 * The float functions evaluate in double and round once at the end, which
 * keeps them within about half an ulp of the true result. Not a public API. */
#ifndef LIB_MATH_INTERNAL_H
#define LIB_MATH_INTERNAL_H

#include <stdint.h>

static inline uint64_t double_bits(double x) {
    union {
        double d;
        uint64_t u;
    } v = {.d = x};
    return v.u;
}

static inline double double_from_bits(uint64_t u) {
    union {
        uint64_t u;
        double d;
    } v = {.u = u};
    return v.d;
}

static inline uint32_t float_bits(float x) {
    union {
        float f;
        uint32_t u;
    } v = {.f = x};
    return v.u;
}

static inline float float_from_bits(uint32_t u) {
    union {
        uint32_t u;
        float f;
    } v = {.u = u};
    return v.f;
}

/* e^x for -1000 < x < 1000 (relative error ~1e-15 where the result is normal). */
double math_exp_double(double x);

#endif
