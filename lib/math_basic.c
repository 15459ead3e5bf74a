/* math_basic.c - sqrt, absolute value, rounding and classification. */
#include "lib/math.h"
#include "lib/math_internal.h"

float sqrtf(float x) {
    float r;
    __asm__("sqrtss %1, %0" : "=x"(r) : "x"(x));
    return r;
}

double sqrt(double x) {
    double r;
    __asm__("sqrtsd %1, %0" : "=x"(r) : "x"(x));
    return r;
}

float fabsf(float x) {
    return float_from_bits(float_bits(x) & 0x7fffffffu);
}
double fabs(double x) {
    return double_from_bits(double_bits(x) & ~(1ull << 63));
}

int isnan_f(float x) {
    return (float_bits(x) & 0x7fffffffu) > 0x7f800000u;
}
int isinf_f(float x) {
    return (float_bits(x) & 0x7fffffffu) == 0x7f800000u;
}

/* Integer part toward zero; floats >= 2^23 (and inf, nan) are already integral. */
static float trunc_float(float x) {
    if (!(fabsf(x) < 0x1p23f)) return x;
    float t = (float)(int32_t)x;
    return float_from_bits(float_bits(t) | (float_bits(x) & 0x80000000u)); /* -0.5 -> -0 */
}

float floorf(float x) {
    float t = trunc_float(x);
    return (t > x) ? t - 1.0f : t;
}

float ceilf(float x) {
    float t = trunc_float(x);
    return (t < x) ? t + 1.0f : t;
}

float roundf(float x) {
    float t = trunc_float(x);
    float diff = x - t; /* exact: both are close floats */
    if (diff >= 0.5f) return t + 1.0f;
    if (diff <= -0.5f) return t - 1.0f;
    return t;
}
