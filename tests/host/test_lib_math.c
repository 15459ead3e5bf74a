/* test_lib_math.c - lib/math against the host libm (looked up with dlsym,
 * since our functions shadow libm's in this binary). Millions of sampled
 * inputs per function; fails if any result is more than MAX_ULP away.
 * The reference is libm's double-precision function rounded to float (within
 * 0.5 ulp of the truth in practice); glibc's own float versions are not
 * always that good (tanhf is off by up to 2 ulp). */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/math.h"
#include "tests/host/check.h"

#define MAX_ULP 1 /* measured max is 1 ulp against the double reference */

typedef float (*f1_fn)(float);
typedef float (*f2_fn)(float, float);

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint32_t next_u32(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 16);
}
static float uniform(float lo, float hi) {
    return lo + (hi - lo) * ((float)(next_u32() >> 8) / 16777216.0f);
}
static float any_float(void) {
    union {
        uint32_t u;
        float f;
    } v = {.u = next_u32()};
    return v.f;
}

static uint32_t bits_of(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* Distance in representable floats; 0 when both are the same NaN-ness. */
static int64_t ulp_distance(float a, float b) {
    if (a != a || b != b) return (a != a && b != b) ? 0 : INT32_MAX;
    int64_t ia = (int32_t)bits_of(a), ib = (int32_t)bits_of(b);
    if (ia < 0) ia = (int64_t)INT32_MIN - ia; /* map to a monotonic integer line */
    if (ib < 0) ib = (int64_t)INT32_MIN - ib;
    int64_t d = ia - ib;
    return d < 0 ? -d : d;
}

struct stats {
    const char *name;
    long cases;
    int64_t max_ulp;
    float worst_x, worst_y, ours, theirs;
    int64_t bound;
};

static void record(struct stats *s, float x, float y, float ours, float theirs) {
    int64_t d = ulp_distance(ours, theirs);
    s->cases++;
    if (d > s->max_ulp) {
        s->max_ulp = d;
        s->worst_x = x;
        s->worst_y = y;
        s->ours = ours;
        s->theirs = theirs;
    }
}

static void report(struct stats *s) {
    if (s->max_ulp <= s->bound) {
        printf("ok - %s: max error %lld ulp over %ld inputs\n", s->name, (long long)s->max_ulp, s->cases);
    } else {
        printf("FAIL - %s: %lld ulp (bound %lld) at x=%a y=%a: ours %a, libm %a\n", s->name,
               (long long)s->max_ulp, (long long)s->bound, s->worst_x, s->worst_y, s->ours, s->theirs);
        failures++;
    }
}

static void test_unary(const char *name, f1_fn ours, f1_fn theirs, float lo, float hi, long samples,
                       int64_t bound) {
    char label[128];
    snprintf(label, sizeof label, "%s on [%g, %g]", name, lo, hi);
    struct stats s = {.name = label, .bound = bound};
    for (long i = 0; i < samples; i++) {
        float x = uniform(lo, hi);
        record(&s, x, 0, ours(x), theirs(x));
    }
    report(&s);
}

static void test_unary_all_bits(const char *name, f1_fn ours, f1_fn theirs, long samples, int64_t bound) {
    char label[128];
    snprintf(label, sizeof label, "%s on random bit patterns (all exponents, subnormals, inf, nan)", name);
    struct stats s = {.name = label, .bound = bound};
    static const float specials[] = {0.0f,
                                     -0.0f,
                                     1.0f,
                                     -1.0f,
                                     0x1p-149f,
                                     -0x1p-149f,
                                     0x1p-126f,
                                     0x1.fffffep127f,
                                     -0x1.fffffep127f,
                                     0.5f,
                                     -0.5f,
                                     1.5f,
                                     -1.5f,
                                     2.5f,
                                     -2.5f,
                                     0x1p23f,
                                     0x1.fffffep22f,
                                     88.72283f,
                                     88.72284f,
                                     -103.97208f,
                                     -87.33655f,
                                     0.49999997f,
                                     -0.49999997f};
    for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++)
        record(&s, specials[i], 0, ours(specials[i]), theirs(specials[i]));
    float inf = LIB_INFINITY, nan = LIB_NAN;
    record(&s, inf, 0, ours(inf), theirs(inf));
    record(&s, -inf, 0, ours(-inf), theirs(-inf));
    record(&s, nan, 0, ours(nan), theirs(nan));
    for (long i = 0; i < samples; i++) {
        float x = any_float();
        record(&s, x, 0, ours(x), theirs(x));
    }
    report(&s);
}

static f1_fn lookup1(void *lib, const char *name) {
    f1_fn f = lib ? (f1_fn)dlsym(lib, name) : NULL;
    if (!f) {
        printf("FAIL - libm lookup %s\n", name);
        failures++;
    }
    return f;
}

/* libm's double functions, rounded to float, as the references. */
typedef double (*d1_fn)(double);
typedef double (*d2_fn)(double, double);
static d1_fn d_exp, d_log, d_sin, d_cos, d_tanh;
static d2_fn d_pow;
static float ref_exp(float x) {
    return (float)d_exp(x);
}
static float ref_log(float x) {
    return (float)d_log(x);
}
static float ref_sin(float x) {
    return (float)d_sin(x);
}
static float ref_cos(float x) {
    return (float)d_cos(x);
}
static float ref_tanh(float x) {
    return (float)d_tanh(x);
}
static float ref_pow(float x, float y) {
    return (float)d_pow(x, y);
}

static void test_pow(f2_fn host_pow) {
    struct stats s = {.name = "powf: x in (0, 100], y in [-30, 30]", .bound = MAX_ULP};
    for (long i = 0; i < 1000000; i++) {
        float x = uniform(0, 100), y = uniform(-30, 30);
        record(&s, x, y, powf(x, y), host_pow(x, y));
    }
    report(&s);
    struct stats near1 = {.name = "powf: x near 1, large y", .bound = MAX_ULP};
    for (long i = 0; i < 500000; i++) {
        float x = uniform(0.99f, 1.01f), y = uniform(-8000, 8000);
        record(&near1, x, y, powf(x, y), host_pow(x, y));
    }
    report(&near1);
    struct stats neg = {.name = "powf: negative x, integer and non-integer y", .bound = MAX_ULP};
    for (long i = 0; i < 300000; i++) {
        float x = uniform(-50, 0), y = (i & 1) ? (float)(int)uniform(-40, 40) : uniform(-40, 40);
        record(&neg, x, y, powf(x, y), host_pow(x, y));
    }
    report(&neg);
    struct stats any = {.name = "powf: random bit patterns for x and y", .bound = MAX_ULP};
    for (long i = 0; i < 1000000; i++) {
        float x = any_float(), y = any_float();
        record(&any, x, y, powf(x, y), host_pow(x, y));
    }
    /* C99 Annex F special cases. */
    static const float sv[] = {0.0f,          -0.0f,   1.0f,  -1.0f,  0.5f,      -0.5f,
                               2.0f,          -2.0f,   3.0f,  -3.0f,  0x1p-149f, LIB_INFINITY,
                               -LIB_INFINITY, LIB_NAN, 1e30f, -1e30f, 0x1p24f,   0x1p24f + 2.0f};
    for (size_t i = 0; i < sizeof sv / sizeof sv[0]; i++)
        for (size_t j = 0; j < sizeof sv / sizeof sv[0]; j++)
            record(&any, sv[i], sv[j], powf(sv[i], sv[j]), host_pow(sv[i], sv[j]));
    report(&any);
}

/* Rounding functions must be exact, including the sign of zero. */
static void test_exact(const char *name, f1_fn ours, f1_fn theirs) {
    long bad = 0, cases = 0;
    float first = 0;
    for (long i = 0; i < 2000000; i++) {
        float x = (i & 1) ? any_float() : uniform(-20, 20);
        if (i < 64) x = (float)(i - 32) * 0.25f; /* exact halves and quarters */
        float a = ours(x), b = theirs(x);
        cases++;
        if (bits_of(a) != bits_of(b) && !(a != a && b != b)) {
            if (bad++ == 0) first = x;
        }
    }
    float minus_zero = -0.0f;
    if (bits_of(ours(minus_zero)) != bits_of(theirs(minus_zero))) bad++;
    if (bad == 0) {
        printf("ok - %s exact over %ld inputs (incl. -0 and halves)\n", name, cases);
    } else {
        printf("FAIL - %s: %ld inputs differ, first x=%a: ours %a, libm %a\n", name, bad, first, ours(first),
               theirs(first));
        failures++;
    }
}

static float lib_fabsf_wrapper(float x) {
    return fabsf(x);
}
static float lib_fabs_wrapper(float x) {
    return (float)fabs((double)x);
}
static float lib_sqrt_wrapper(float x) {
    return (float)sqrt((double)x);
}

static void test_classification(void) {
    int ok = isnan_f(LIB_NAN) && !isnan_f(LIB_INFINITY) && !isnan_f(1.0f) && isinf_f(LIB_INFINITY) &&
             isinf_f(-LIB_INFINITY) && !isinf_f(LIB_NAN) && !isinf_f(0x1.fffffep127f) && !isnan_f(0.0f);
    printf("%s - isnan_f / isinf_f on nan, inf, -inf, max, 0\n", ok ? "ok" : "FAIL");
    if (!ok) failures++;
    double d = sqrt(2.0);
    ok = d == 1.4142135623730951 && fabs(-3.5) == 3.5 && sqrt(-1.0) != sqrt(-1.0);
    printf("%s - sqrt(2.0) double exact, fabs(-3.5), sqrt(-1) is nan\n", ok ? "ok" : "FAIL");
    if (!ok) failures++;
}

int main(void) {
    void *libm = dlopen("libm.so.6", RTLD_NOW);
    if (!libm) {
        printf("FAIL - dlopen libm.so.6: %s\n", dlerror());
        return 1;
    }
    d_exp = (d1_fn)dlsym(libm, "exp");
    d_log = (d1_fn)dlsym(libm, "log");
    d_sin = (d1_fn)dlsym(libm, "sin");
    d_cos = (d1_fn)dlsym(libm, "cos");
    d_tanh = (d1_fn)dlsym(libm, "tanh");
    d_pow = (d2_fn)dlsym(libm, "pow");
    if (!d_exp || !d_log || !d_sin || !d_cos || !d_tanh || !d_pow || (void *)d_exp == (void *)expf) {
        printf("FAIL - could not get libm's double functions\n");
        return 1;
    }
    f1_fn h_exp = ref_exp, h_log = ref_log, h_sin = ref_sin, h_cos = ref_cos, h_tanh = ref_tanh;
    f1_fn h_sqrt = lookup1(libm, "sqrtf"), h_floor = lookup1(libm, "floorf"), h_ceil = lookup1(libm, "ceilf"),
          h_round = lookup1(libm, "roundf"), h_fabs = lookup1(libm, "fabsf");
    f2_fn h_pow = ref_pow;
    if (failures || h_floor == floorf) {
        printf("FAIL - could not get libm's own functions\n");
        return 1;
    }

    test_unary("expf", expf, h_exp, -20, 20, 2000000, MAX_ULP);
    test_unary("expf", expf, h_exp, -110, 92, 2000000, MAX_ULP);
    test_unary_all_bits("expf", expf, h_exp, 1000000, MAX_ULP);
    test_unary("logf", logf, h_log, 0, 10, 2000000, MAX_ULP);
    test_unary("logf", logf, h_log, 0.9f, 1.1f, 1000000, MAX_ULP);
    test_unary_all_bits("logf", logf, h_log, 2000000, MAX_ULP);
    test_unary("sinf", sinf, h_sin, -10, 10, 2000000, MAX_ULP);
    test_unary("sinf", sinf, h_sin, -1e5f, 1e5f, 2000000, MAX_ULP);
    test_unary_all_bits("sinf", sinf, h_sin, 2000000, MAX_ULP);
    test_unary("cosf", cosf, h_cos, -10, 10, 2000000, MAX_ULP);
    test_unary("cosf", cosf, h_cos, -1e5f, 1e5f, 2000000, MAX_ULP);
    test_unary_all_bits("cosf", cosf, h_cos, 2000000, MAX_ULP);
    test_unary("tanhf", tanhf, h_tanh, -12, 12, 2000000, MAX_ULP);
    test_unary("tanhf", tanhf, h_tanh, -0.6f, 0.6f, 1000000, MAX_ULP);
    test_unary_all_bits("tanhf", tanhf, h_tanh, 1000000, MAX_ULP);
    test_unary_all_bits("sqrtf", sqrtf, h_sqrt, 1000000, 0);
    test_unary_all_bits("sqrt (double)", lib_sqrt_wrapper, h_sqrt, 1000000, 0);
    test_unary_all_bits("fabs (double)", lib_fabs_wrapper, h_fabs, 200000, 0);
    test_pow(h_pow);
    test_exact("floorf", floorf, h_floor);
    test_exact("ceilf", ceilf, h_ceil);
    test_exact("roundf", roundf, h_round);
    test_exact("fabsf", lib_fabsf_wrapper, h_fabs);
    test_classification();
    return failures ? 1 : 0;
}
