/* cpu_features.h - the SIMD instruction sets llm/ may use on this CPU.
 *
 * One module answers "may I run AVX2 / AVX-512 code?" for every kernel set.
 * The kernel fills it from its own CPUID reads (it alone knows which state it
 * enabled in XCR0); a host program detects them with __builtin_cpu_supports
 * on first use. Until told otherwise the kernel build assumes SSE2 only. */
#ifndef LLM_CPU_FEATURES_H
#define LLM_CPU_FEATURES_H

#include <stdbool.h>

struct cpu_features {
    bool sse2, ssse3, sse41, avx, avx2, fma, f16c;
    bool avx512f, avx512bw, avx512vl, avx512vnni;
};

/* The platform's answer: the kernel calls this once its CPU setup is done. */
void cpu_features_set(const struct cpu_features *f);
/* The features in force (host: detected on the first call). */
const struct cpu_features *cpu_features(void);

#endif
