/* cpu_features.c - see cpu_features.h. */
#include "llm/compute/cpu_features.h"

static struct cpu_features features = {.sse2 = true};
static bool features_known;

void cpu_features_set(const struct cpu_features *f) {
    features = *f;
    features_known = true;
}

#ifndef KERNEL
#include <cpuid.h>

/* CPUID leaf 1, ECX bit 29: clang's __builtin_cpu_supports knows no "f16c". */
static bool host_has_f16c(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && ((c >> 29) & 1);
}

static void detect_host(void) {
    __builtin_cpu_init();
    struct cpu_features f = {
        .sse2 = __builtin_cpu_supports("sse2"),
        .ssse3 = __builtin_cpu_supports("ssse3"),
        .sse41 = __builtin_cpu_supports("sse4.1"),
        .avx = __builtin_cpu_supports("avx"),
        .avx2 = __builtin_cpu_supports("avx2"),
        .fma = __builtin_cpu_supports("fma"),
        .f16c = __builtin_cpu_supports("avx") && host_has_f16c(), /* its state is AVX's */
        .avx512f = __builtin_cpu_supports("avx512f"),
        .avx512bw = __builtin_cpu_supports("avx512bw"),
        .avx512vl = __builtin_cpu_supports("avx512vl"),
        .avx512vnni = __builtin_cpu_supports("avx512vnni"),
    };
    cpu_features_set(&f);
}
#endif

const struct cpu_features *cpu_features(void) {
#ifndef KERNEL
    if (!features_known) detect_host();
#endif
    return &features;
}
