/* kernels.c - the kernel sets (see llm/compute/kernel_sets.h) and the choice
 * between them: the one place that decides which set runs. */
#include "llm/compute/cpu_features.h"
#include "llm/compute/kernel_sets.h"

const KernelSet kernels_scalar = {
    .name = "scalar",
    .matmul = kernels_matmul_scalar,
    .matmul_q8 = kernels_matmul_q8_scalar,
    .matmul_batch = kernels_matmul_batch_scalar,
    .matmul_q8q = kernels_matmul_q8q_scalar,
    .dot = kernels_dot_scalar,
    .axpy = kernels_axpy_scalar,
    .rmsnorm = kernels_rmsnorm_scalar,
    .softmax = kernels_softmax_scalar,
    .swiglu = kernels_swiglu_scalar,
    .add = kernels_add_scalar,
    .attend = kernels_attend_scalar,
    .attend_f16 = kernels_attend_f16_scalar,
    .attend_q8_0 = kernels_attend_q8_0_scalar,
    .attend_f16_tile = kernels_attend_f16_tile_scalar,
    .attend_q8_0_tile = kernels_attend_q8_0_tile_scalar,
    .attend_f32 = kernels_attend_f32_scalar,
    .attend_f32_tile = kernels_attend_f32_tile_scalar,
};

const KernelSet kernels_sse2 = {
    .name = "sse2",
    .matmul = kernels_matmul_sse2,
    .matmul_q8 = kernels_matmul_q8_sse2,
    .matmul_batch = kernels_matmul_batch_sse2,
    .matmul_q8q = kernels_matmul_q8q_sse2,
    .dot = kernels_dot_sse2,
    .axpy = kernels_axpy_sse2,
    .rmsnorm = kernels_rmsnorm_sse2,
    .softmax = kernels_softmax_sse2,
    .swiglu = kernels_swiglu_sse2,
    .add = kernels_add_sse2,
    .attend = kernels_attend_sse2,
    .attend_f16 = kernels_attend_f16_sse2,
    .attend_q8_0 = kernels_attend_q8_0_sse2,
    .attend_f16_tile = kernels_attend_f16_tile_sse2,
    .attend_q8_0_tile = kernels_attend_q8_0_tile_sse2,
    .attend_f32 = kernels_attend_f32_sse2,
    .attend_f32_tile = kernels_attend_f32_tile_sse2,
};

const KernelSet kernels_avx2 = {
    .name = "avx2",
    .matmul = kernels_matmul_avx2,
    .matmul_q8 = kernels_matmul_q8_avx2,
    .matmul_batch = kernels_matmul_batch_avx2,
    .matmul_q8q = kernels_matmul_q8q_avx2,
    .dot = kernels_dot_avx2,
    .axpy = kernels_axpy_avx2,
    .rmsnorm = kernels_rmsnorm_avx2,
    .softmax = kernels_softmax_avx2,
    .swiglu = kernels_swiglu_avx2,
    .add = kernels_add_avx2,
    .attend = kernels_attend_avx2,
    .attend_f16 = kernels_attend_f16_avx2,
    .attend_q8_0 = kernels_attend_q8_0_avx2,
    .attend_f16_tile = kernels_attend_f16_tile_avx2,
    .attend_q8_0_tile = kernels_attend_q8_0_tile_avx2,
    .attend_f32 = kernels_attend_f32_avx2,
    .attend_f32_tile = kernels_attend_f32_tile_avx2,
};

const KernelSet kernels_avx512 = {
    .name = "avx512",
    .matmul = kernels_matmul_avx512,
    .matmul_q8 = kernels_matmul_q8_avx2,
    .matmul_batch = kernels_matmul_batch_avx512,
    .matmul_q8q = kernels_matmul_q8q_avx512,
    .dot = kernels_dot_avx2,
    .axpy = kernels_axpy_avx2,
    .rmsnorm = kernels_rmsnorm_avx2,
    .softmax = kernels_softmax_avx512,
    .swiglu = kernels_swiglu_avx2,
    .add = kernels_add_avx2,
    .attend = kernels_attend_avx512,
    .attend_f16 = kernels_attend_f16_avx512,
    .attend_q8_0 = kernels_attend_q8_0_avx512,
    .attend_f16_tile = kernels_attend_f16_tile_avx512,
    .attend_q8_0_tile = kernels_attend_q8_0_tile_avx512,
    .attend_f32 = kernels_attend_f32_avx512,
    .attend_f32_tile = kernels_attend_f32_tile_avx512,
};

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

int kernels_q8q_batch(int max) {
    if (kernels == &kernels_sse2 && kernels_sse2_q8q_gemm_chosen() != KERNELS_GEMM_PMADDWD && max >= 3)
        return max / 3 * 3;
    return max;
}

int kernels_widest_level(void) {
    const struct cpu_features *f = cpu_features();
    if (!(f->avx2 && f->fma && f->f16c)) return KERNELS_SSE2;
    return f->avx512f && f->avx512bw && f->avx512vl ? KERNELS_AVX512 : KERNELS_AVX2;
}
