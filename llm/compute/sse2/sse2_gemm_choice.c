/* sse2_gemm_choice.c - the SSE2 set's batched gemms: measured per type
 * (timed_choice.h), or fixed to one kind for tests and profiles. */
#include "llm/compute/kernel_sets.h"

static int forced = KERNELS_GEMM_MEASURE;

void kernels_sse2_gemm_force(int gemm) {
    forced = gemm;
}

int kernels_sse2_gemm_forced(void) {
    return forced;
}
