/* kernels.c - dispatch between the kernel variants. */
#include "llm/kernels.h"

const KernelSet *kernels = &kernels_sse2;

void kernels_select(int use_avx2_fma) {
    kernels = use_avx2_fma ? &kernels_avx2 : &kernels_sse2;
}
