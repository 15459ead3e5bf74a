/* ggml_dispatch.c - which ggml dot product, matmul and activation
 * quantiser a kernel set runs: per type, the SSE2, AVX2 or AVX-512 kernel
 * (the instruction sets cpu_features() allows), falling back to the
 * scalar reference where a type has no SIMD variant. */
#include "llm/compute/cpu_features.h"
#include "llm/compute/kernels.h"
#include "llm/compute/ggml_simd.h"

enum { SET_SSE2, SET_AVX2, SET_AVX512, SETS };

/* Per type, its kernels in each set (NULL where there is none). */
static const GgmlKernel *const by_type[GGML_TYPE_LIMIT][SETS] = {
    [GGML_TYPE_F16] = {&ggml_f16_sse2, &ggml_f16_avx2, &ggml_f16_avx512},
    [GGML_TYPE_BF16] = {&ggml_bf16_sse2, &ggml_bf16_avx2, &ggml_bf16_avx512},
    [GGML_TYPE_Q8_0] = {&ggml_q8_0_sse2, &ggml_q8_0_avx2, &ggml_q8_0_avx512},
    [GGML_TYPE_Q4_0] = {&ggml_q4_0_sse2, &ggml_q4_0_avx2, &ggml_q4_0_avx512},
    [GGML_TYPE_Q4_1] = {&ggml_q4_1_sse2, &ggml_q4_1_avx2, NULL},
    [GGML_TYPE_Q5_0] = {&ggml_q5_0_sse2, &ggml_q5_0_avx2, NULL},
    [GGML_TYPE_Q5_1] = {&ggml_q5_1_sse2, &ggml_q5_1_avx2, NULL},
    [GGML_TYPE_Q2_K] = {&ggml_q2_k_sse2, &ggml_q2_k_avx2, NULL},
    [GGML_TYPE_Q3_K] = {&ggml_q3_k_sse2, &ggml_q3_k_avx2, NULL},
    [GGML_TYPE_Q4_K] = {&ggml_q4_k_sse2, &ggml_q4_k_avx2, &ggml_q4_k_avx512},
    [GGML_TYPE_Q5_K] = {&ggml_q5_k_sse2, &ggml_q5_k_avx2, NULL},
    [GGML_TYPE_Q6_K] = {&ggml_q6_k_sse2, &ggml_q6_k_avx2, &ggml_q6_k_avx512},
};

static int avx512_vnni_allowed(void) {
    const struct cpu_features *f = cpu_features();
    return f->avx512f && f->avx512bw && f->avx512vl && f->avx512vnni;
}

/* The kernels of `type` for level `avx2` (0 SSE2, 1 AVX2, 2 AVX-512 where
 * the CPU has VNNI and the type a kernel, else AVX2); NULL for types with
 * none. The AVX2 F16 dot also needs F16C (the AVX2 kernel set only
 * requires AVX2 and FMA). */
static const GgmlKernel *kernel_for(uint32_t type, int avx2) {
    if (type >= GGML_TYPE_LIMIT || !by_type[type][SET_SSE2]) return NULL;
    if (avx2 >= 2 && by_type[type][SET_AVX512] && avx512_vnni_allowed()) return by_type[type][SET_AVX512];
    if (type == GGML_TYPE_F16 && !cpu_features()->f16c) return by_type[type][SET_SSE2];
    return by_type[type][avx2 ? SET_AVX2 : SET_SSE2];
}

ggml_vec_dot_fn ggml_vec_dot_simd(uint32_t type, int avx2) {
    const GgmlKernel *k = kernel_for(type, avx2);
    return k ? k->dot : NULL;
}

ggml_matmul_fn ggml_matmul_simd(uint32_t type, int avx2) {
    const GgmlKernel *k = kernel_for(type, avx2);
    return k ? k->matmul : NULL;
}

/* The active kernel set as a level for the two functions above. */
static int active_level(void) {
    int level = kernels_level();
    return level >= KERNELS_AVX512 ? 2 : level >= KERNELS_AVX2;
}

ggml_matmul_fn ggml_matmul_best(uint32_t type) {
    return kernels_level() >= KERNELS_SSE2 ? ggml_matmul_simd(type, active_level()) : NULL;
}

ggml_gemm_fn ggml_gemm_best(uint32_t type) {
    const GgmlKernel *k = kernels_level() >= KERNELS_SSE2 ? kernel_for(type, active_level()) : NULL;
    return k ? k->gemm : NULL;
}

ggml_vec_dot_fn ggml_vec_dot_best(uint32_t type) {
    if (kernels == &kernels_scalar) return ggml_vec_dot_scalar(type);
    ggml_vec_dot_fn fn = ggml_vec_dot_simd(type, active_level());
    return fn ? fn : ggml_vec_dot_scalar(type);
}

static void scalar_quantize_act_q8a(void *out, const float *x, int n) {
    ggml_quantize_act_q8a(out, x, n);
}

static void scalar_quantize_act_q8k(void *out, const float *x, int n) {
    ggml_quantize_act_q8k(out, x, n);
}

ggml_act_quantize_fn ggml_act_quantizer_best(int act) {
    if (kernels_level() >= KERNELS_AVX512 && avx512_vnni_allowed())
        return act == ACT_Q8K ? ggml_quantize_act_q8k_avx512 : ggml_quantize_act_q8a_avx512;
    return act == ACT_Q8K ? scalar_quantize_act_q8k : scalar_quantize_act_q8a;
}
