/* kernels.c - the kernel sets (see kernel_sets.h) and the choice between
 * them: the one place that decides which set runs. */
#include "llm/compute/kernel_sets.h"

const KernelSet kernels_scalar = {
    .name = "scalar",
    .isa = ISA_SCALAR,
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
    .store_q8_0 = q8_0_store_scalar,
    .store_f16 = ggml_fp32_to_fp16_row,
};

const KernelSet kernels_sse2 = {
    .name = "sse2",
    .isa = ISA_SSE2,
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
    .store_q8_0 = q8_0_store_sse2,
    .store_f16 = ggml_fp32_to_fp16_row,
};

const KernelSet kernels_avx2 = {
    .name = "avx2",
    .isa = ISA_AVX2,
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
    .store_q8_0 = q8_0_store_avx2,
    .store_f16 = ggml_fp32_to_fp16_row_f16c,
};

const KernelSet kernels_avx512 = {
    .name = "avx512",
    .isa = ISA_AVX512,
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
    .store_q8_0 = q8_0_store_avx512,
    .store_f16 = ggml_fp32_to_fp16_row_f16c,
};

static const KernelSet *const sets[ISA_COUNT] = {&kernels_scalar, &kernels_sse2, &kernels_avx2,
                                                 &kernels_avx512};

/* Read by the workers too: they only ever run between two kernels_use calls. */
static const KernelSet *active = &kernels_sse2;

const KernelSet *kernels_of(enum isa isa) {
    return sets[(unsigned)isa < ISA_COUNT ? isa : ISA_SSE2];
}

const KernelSet *kernels_active(void) {
    return active;
}

void kernels_use(enum isa isa) {
    active = kernels_of(isa);
}

/* One small matmul with a set, best of three, in ns. */
static uint64_t time_matmul(const KernelSet *set, uint64_t (*now_ns)(void)) {
    enum { N = 128, D = 32 };
    static float w[N * D], x[N], out[D];
    for (int i = 0; i < N * D; i++) w[i] = (float)((i * 7919) % 201 - 100) * 0.001f;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 17) * 0.01f;
    uint64_t best = ~0ULL;
    for (int rep = 0; rep < 3; rep++) {
        uint64_t t0 = now_ns();
        set->matmul(out, x, w, N, D);
        uint64_t t = now_ns() - t0;
        if (t < best) best = t;
    }
    return best;
}

enum isa kernels_probe(uint64_t (*now_ns)(void), uint64_t ns[ISA_COUNT]) {
    uint64_t unused[ISA_COUNT];
    if (!ns) ns = unused;
    for (int i = 0; i < ISA_COUNT; i++) ns[i] = 0;
    if (!now_ns) return isa_widest();
    ns[ISA_SSE2] = time_matmul(&kernels_sse2, now_ns);
    if (!isa_usable(ISA_AVX2)) return ISA_SSE2;
    ns[ISA_AVX2] = time_matmul(&kernels_avx2, now_ns);
    enum isa best = ns[ISA_AVX2] < ns[ISA_SSE2] ? ISA_AVX2 : ISA_SSE2;
    if (isa_usable(ISA_AVX512)) {
        ns[ISA_AVX512] = time_matmul(&kernels_avx512, now_ns);
        if (ns[ISA_AVX512] < ns[best]) best = ISA_AVX512;
    }
    return best;
}

int kernels_q8q_batch(int max) {
    if (active == &kernels_sse2 && kernels_sse2_q8q_gemm_chosen() != KERNELS_GEMM_PMADDWD && max >= 3)
        return max / 3 * 3;
    return max;
}
