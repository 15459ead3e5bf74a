/* kernels.c - dispatch between the kernel variants. */
#include "llm/kernels.h"

const KernelSet *kernels = &kernels_sse2;

void kernels_select(int use_avx2_fma) {
    kernels = use_avx2_fma ? &kernels_avx2 : &kernels_sse2;
}

void kernels_select_level(int level) {
    kernels = level >= KERNELS_AVX512 ? &kernels_avx512
              : level == KERNELS_AVX2 ? &kernels_avx2
                                      : &kernels_sse2;
}

int kernels_level(void) {
    if (kernels == &kernels_avx512) return KERNELS_AVX512;
    if (kernels == &kernels_avx2) return KERNELS_AVX2;
    if (kernels == &kernels_sse2) return KERNELS_SSE2;
    return KERNELS_SCALAR;
}
