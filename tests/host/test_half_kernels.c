/* test_half_kernels.c - the F16 and BF16 kernels of every instruction set
 * this CPU runs (llm/compute/{sse2,avx2,avx512}/f16_bf16_*.c): each dot product against a double
 * sum of independently decoded weights, and the bit-identity the prefill
 * relies on: every row of the multi-row matmul equals the same set's dot,
 * every (row, position) of the gemm equals the matmul, for row lengths
 * with and without a tail, row counts and batches that leave partial tiles,
 * and strided activations and outputs. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/tensor/ggml_types.h"
#include "llm/compute/kernels.h"
#include "tests/host/check.h"
#include "tests/host/ref_logits.h"

enum { ROWS = 13, BATCH = 13, MAX_N = 768, X_PAD = 3, OUT_PAD = 2 };

static uint64_t state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
}

/* A half's value from its fields (not the library's conversion). */
static double f16_value(uint16_t h) {
    int e = h >> 10 & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

static double bf16_value(uint16_t h) {
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* A random finite weight of the type: mostly within +-2, some F16
 * subnormals, some zeros. */
static uint16_t random_half(uint32_t type) {
    uint64_t r = next_random();
    if (r % 17 == 0) return (uint16_t)(r >> 8 & 0x8000);
    if (type == GGML_TYPE_F16) {
        if (r % 11 == 0) return (uint16_t)((r >> 20 & 0x8000) | (r >> 30 & 0x3ff)); /* subnormal */
        return (uint16_t)((r >> 20 & 0x8000) | (uint16_t)(8 + r % 9) << 10 | (r >> 40 & 0x3ff));
    }
    return (uint16_t)((r >> 20 & 0x8000) | (uint16_t)(120 + r % 9) << 7 | (r >> 40 & 0x7f));
}

static uint16_t w[ROWS * MAX_N];
static float x[BATCH * (MAX_N + X_PAD)];

static const char *const set_names[] = {"SSE2", "AVX2", "AVX-512"};

/* One type, one set, one row length n. Returns the dots' worst error
 * relative to the bound of float summation, (n + 16) units of rounding
 * times the sum of |products| (n adds, the horizontal sum's few, the
 * products' own rounding), and counts mismatches into *bad_matmul and
 * *bad_gemm. */
static double check_n(uint32_t type, int variant, int n, int *bad_matmul, int *bad_gemm) {
    size_t row_bytes = (size_t)n * 2, xs = (size_t)(n + X_PAD);
    for (int i = 0; i < ROWS * n; i++) w[i] = random_half(type);
    for (size_t i = 0; i < BATCH * xs; i++) x[i] = (float)((int)(next_random() % 4001) - 2000) / 1000.0f;
    ggml_vec_dot_fn dot = ggml_vec_dot_of(type, ISA_SSE2 + variant);
    ggml_matmul_fn matmul = ggml_matmul_of(type, ISA_SSE2 + variant);
    ggml_gemm_fn gemm = NULL;
    double worst = 0;
    float dots[BATCH][ROWS];
    for (int p = 0; p < BATCH; p++)
        for (int r = 0; r < ROWS; r++) {
            double sum = 0, mag = 0;
            for (int i = 0; i < n; i++) {
                double v = type == GGML_TYPE_F16 ? f16_value(w[r * n + i]) : bf16_value(w[r * n + i]);
                sum += v * x[p * xs + i], mag += fabs(v * x[p * xs + i]);
            }
            dots[p][r] = dot((const uint8_t *)w + r * row_bytes, x + p * xs, n);
            double rel = fabs(dots[p][r] - sum) / ((mag + 1e-30) * (n + 16) * ldexp(1, -24));
            if (rel > worst) worst = rel;
        }
    /* the matmul from every first row, so rows land in every slot of a pass */
    for (int p = 0; p < BATCH; p += 4)
        for (int first = 0; first < ROWS; first++) {
            float out[ROWS];
            matmul(out, (const uint8_t *)w + first * row_bytes, row_bytes, x + p * xs, n, ROWS - first);
            for (int r = first; r < ROWS; r++) *bad_matmul += memcmp(&out[r - first], &dots[p][r], 4) != 0;
        }
    /* the gemm through the dispatch, as gguf_matmul.c calls it */
    kernels_use(variant == 0 ? ISA_SSE2 : variant == 1 ? ISA_AVX2 : ISA_AVX512);
    gemm = ggml_gemm_best(type);
    if (!gemm) return *bad_gemm += 1, worst;
    static const int batches[] = {1, 2, 4, 5, 6, 7, 12, 13}, counts[] = {1, 2, 3, 4, 7, 8, 9, 13};
    for (size_t b = 0; b < sizeof batches / sizeof *batches; b++)
        for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
            int batch = batches[b], count = counts[c], first = ROWS - count;
            size_t out_stride = (size_t)count + OUT_PAD;
            float out[BATCH * (ROWS + OUT_PAD)];
            gemm(out, out_stride, (const uint8_t *)w + first * row_bytes, row_bytes, x, xs * sizeof(float), n,
                 count, batch);
            for (int p = 0; p < batch; p++)
                for (int r = 0; r < count; r++)
                    *bad_gemm += memcmp(&out[p * out_stride + r], &dots[p][first + r], 4) != 0;
        }
    return worst;
}

int main(void) {
    static const int lengths[] = {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 33, 100, 257, 768};
    static const uint32_t types[] = {GGML_TYPE_F16, GGML_TYPE_BF16};
    int top = gguf_top_level();
    if (top < ISA_AVX2) check_skipped("AVX2 F16/BF16 kernels", "this CPU has no AVX2+FMA+F16C");
    if (top < ISA_AVX512) check_skipped("AVX-512 F16/BF16 kernels", "this CPU has no AVX-512 VNNI");
    for (int variant = 0; variant <= top - ISA_SSE2; variant++)
        for (int t = 0; t < 2; t++) {
            const char *type = ggml_type_name(types[t]);
            char name[160];
            snprintf(name, sizeof name, "%s %s kernels exist (dot, matmul, gemm)", set_names[variant], type);
            kernels_use(ISA_SSE2 + variant);
            if (!ggml_vec_dot_of(types[t], ISA_SSE2 + variant) ||
                !ggml_matmul_of(types[t], ISA_SSE2 + variant) || !ggml_gemm_best(types[t])) {
                check(0, name, "missing");
                continue;
            }
            check(variant < 2 || ggml_matmul_of(types[t], ISA_AVX512) != ggml_matmul_of(types[t], ISA_AVX2),
                  name, "the AVX-512 level falls back to the AVX2 kernel");
            double worst = 0;
            int bad_matmul = 0, bad_gemm = 0, worst_n = 0;
            for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
                double e = check_n(types[t], variant, lengths[i], &bad_matmul, &bad_gemm);
                if (e > worst) worst = e, worst_n = lengths[i];
            }
            snprintf(name, sizeof name,
                     "%s %s dot within float rounding of a double sum of the decoded weights",
                     set_names[variant], type);
            check(worst <= 1, name, "error %.3g times the bound at n = %d", worst, worst_n);
            snprintf(name, sizeof name, "%s %s matmul rows are the dot's bits", set_names[variant], type);
            check(bad_matmul == 0, name, "%d outputs differ", bad_matmul);
            snprintf(name, sizeof name, "%s %s gemm outputs are the matmul's bits", set_names[variant], type);
            check(bad_gemm == 0, name, "%d outputs differ", bad_gemm);
        }
    kernels_use(ISA_SSE2);
    return failures ? 1 : 0;
}
