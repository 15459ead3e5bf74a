/* ggml_dispatch.c - the ggml families of each kernel set: per type the dot
 * product, matmul and gemm, and the activation quantisers. The set is the
 * one kernels_use() chose (or the one a caller names); this file only adds
 * the finer feature rules of the ggml kernels: the AVX-512 ones need VNNI
 * (without it the AVX-512 set runs the AVX2 ones), and the scalar
 * reference stands in where a type has no SIMD kernel. */
#include "llm/compute/cpu_features.h"
#include "llm/compute/ggml_simd.h"
#include "llm/compute/kernels.h"

/* Per type, its kernels in each set (NULL where there is none; the scalar
 * set has only the reference dot products, ggml_vec_dot_scalar). */
static const GgmlKernel *const by_type[GGML_TYPE_LIMIT][ISA_COUNT] = {
    [GGML_TYPE_F16] = {NULL, &ggml_f16_sse2, &ggml_f16_avx2, &ggml_f16_avx512},
    [GGML_TYPE_BF16] = {NULL, &ggml_bf16_sse2, &ggml_bf16_avx2, &ggml_bf16_avx512},
    [GGML_TYPE_Q8_0] = {NULL, &ggml_q8_0_sse2, &ggml_q8_0_avx2, &ggml_q8_0_avx512},
    [GGML_TYPE_Q4_0] = {NULL, &ggml_q4_0_sse2, &ggml_q4_0_avx2, &ggml_q4_0_avx512},
    [GGML_TYPE_Q4_1] = {NULL, &ggml_q4_1_sse2, &ggml_q4_1_avx2, NULL},
    [GGML_TYPE_Q5_0] = {NULL, &ggml_q5_0_sse2, &ggml_q5_0_avx2, NULL},
    [GGML_TYPE_Q5_1] = {NULL, &ggml_q5_1_sse2, &ggml_q5_1_avx2, NULL},
    [GGML_TYPE_Q2_K] = {NULL, &ggml_q2_k_sse2, &ggml_q2_k_avx2, NULL},
    [GGML_TYPE_Q3_K] = {NULL, &ggml_q3_k_sse2, &ggml_q3_k_avx2, NULL},
    [GGML_TYPE_Q4_K] = {NULL, &ggml_q4_k_sse2, &ggml_q4_k_avx2, &ggml_q4_k_avx512},
    [GGML_TYPE_Q5_K] = {NULL, &ggml_q5_k_sse2, &ggml_q5_k_avx2, NULL},
    [GGML_TYPE_Q6_K] = {NULL, &ggml_q6_k_sse2, &ggml_q6_k_avx2, &ggml_q6_k_avx512},
};

static void scalar_quantize_act_q8a(void *out, const float *x, int n) {
    ggml_quantize_act_q8a(out, x, n);
}

static void scalar_quantize_act_q8k(void *out, const float *x, int n) {
    ggml_quantize_act_q8k(out, x, n);
}

/* Per set, its activation quantisers (ACT_Q8A, ACT_Q8K): SIMD only in AVX-512 (VNNI). */
static const ggml_act_quantize_fn act_quantizers[ISA_COUNT][2] = {
    [ISA_SCALAR] = {scalar_quantize_act_q8a, scalar_quantize_act_q8k},
    [ISA_SSE2] = {scalar_quantize_act_q8a, scalar_quantize_act_q8k},
    [ISA_AVX2] = {scalar_quantize_act_q8a, scalar_quantize_act_q8k},
    [ISA_AVX512] = {ggml_quantize_act_q8a_avx512, ggml_quantize_act_q8k_avx512},
};

/* The set whose ggml kernels `isa` runs: AVX-512 ones only with VNNI. */
static enum isa ggml_isa(enum isa isa) {
    const struct cpu_features *f = cpu_features();
    if (isa >= ISA_AVX512 && !(f->avx512f && f->avx512bw && f->avx512vl && f->avx512vnni)) return ISA_AVX2;
    return isa >= ISA_AVX512 ? ISA_AVX512 : isa;
}

/* The kernels of `type` in set `isa` (the AVX2 ones where the AVX-512 set
 * has none); NULL for the scalar set and types with none. The AVX2 F16 dot
 * also needs F16C, which ISA_AVX2 implies when isa_usable() allowed it. */
static const GgmlKernel *kernel_for(uint32_t type, enum isa isa) {
    if (type >= GGML_TYPE_LIMIT || !by_type[type][ISA_SSE2] || isa <= ISA_SCALAR) return NULL;
    isa = ggml_isa(isa);
    if (isa == ISA_AVX512 && !by_type[type][ISA_AVX512]) isa = ISA_AVX2;
    if (isa == ISA_AVX2 && type == GGML_TYPE_F16 && !cpu_features()->f16c) isa = ISA_SSE2;
    return by_type[type][isa];
}

ggml_vec_dot_fn ggml_vec_dot_of(uint32_t type, enum isa isa) {
    const GgmlKernel *k = kernel_for(type, isa);
    return k ? k->dot : NULL;
}

ggml_matmul_fn ggml_matmul_of(uint32_t type, enum isa isa) {
    const GgmlKernel *k = kernel_for(type, isa);
    return k ? k->matmul : NULL;
}

ggml_matmul_fn ggml_matmul_best(uint32_t type) {
    return ggml_matmul_of(type, kernels_active()->isa);
}

ggml_gemm_fn ggml_gemm_best(uint32_t type) {
    const GgmlKernel *k = kernel_for(type, kernels_active()->isa);
    return k ? k->gemm : NULL;
}

ggml_vec_dot_fn ggml_vec_dot_best(uint32_t type) {
    ggml_vec_dot_fn fn = ggml_vec_dot_of(type, kernels_active()->isa);
    return fn ? fn : ggml_vec_dot_scalar(type);
}

ggml_act_quantize_fn ggml_act_quantizer_best(int act) {
    return act_quantizers[ggml_isa(kernels_active()->isa)][act == ACT_Q8K];
}
