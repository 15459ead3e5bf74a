/* cpu_features.c - see cpu_features.h. */
#include "llm/cpu_features.h"

static struct cpu_features features = {.sse2 = true};
static bool features_known;

void cpu_features_set(const struct cpu_features *f) {
    features = *f;
    features_known = true;
}

#ifndef KERNEL
#include <cpuid.h>

/* clang 14's __builtin_cpu_supports does not know "f16c" (the fuzz build
 * uses clang): CPUID leaf 1, ECX bit 29. */
static bool host_has_f16c(void) {
    unsigned eax, ebx, ecx, edx;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C);
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
        .f16c = host_has_f16c(),
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
