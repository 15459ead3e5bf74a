/* math.h - single-precision maths for the kernel and llm/ (same source on
 * the host, so both give bit-identical results). Accurate to a few ulp
 * against glibc's libm over the full range; special values (inf, nan, 0,
 * subnormals) behave as C99 says. */
#ifndef LIB_MATH_H
#define LIB_MATH_H

#define LIB_INFINITY (__builtin_inff())
#define LIB_NAN (__builtin_nanf(""))

float expf(float x);
float logf(float x);
float sqrtf(float x);
float powf(float x, float y);
float sinf(float x);
float cosf(float x);
float tanhf(float x);
float fabsf(float x);
float floorf(float x);
float ceilf(float x);
float roundf(float x);
double fabs(double x);
double sqrt(double x);
int isnan_f(float x);
int isinf_f(float x);

#endif
