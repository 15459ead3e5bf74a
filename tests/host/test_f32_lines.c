/* test_f32_lines - the fp32 matmuls on weights and inputs that start half
 * a cache line in (GGUF aligns tensors to 32 bytes; the run state then
 * puts its inputs likewise, and the AVX-512 set reads both from 8 columns
 * in, in a batch): every set's outputs are bit-identical to the same
 * values at line starts and, a batch's, to one position at a time, and
 * agree with a double-precision dot product. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "llm/compute/kernels.h"
#include "tests/host/check.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

/* A float in [-1, 1). */
static float random_uniform(void) {
    return 2.0f * rng_f32(&rng_state) - 1.0f;
}

/* count floats starting `offset` bytes past a 64-byte boundary. */
static float *placed(float **block, size_t count, size_t offset) {
    *block = aligned_alloc(64, (count * sizeof(float) + offset + 63) / 64 * 64);
    return (float *)((char *)*block + offset);
}

/* The largest error of out (batch rows of d, out_stride apart) against a
 * double dot product, relative to the sum of |w x| of its output. */
static double worst_error(const float *out, int out_stride, const float *w, const float *x, int x_stride,
                          int n, int d, int batch) {
    double worst = 0;
    for (int b = 0; b < batch; b++)
        for (int i = 0; i < d; i++) {
            double dot = 0, size = 0;
            for (int j = 0; j < n; j++) {
                double t = (double)w[(size_t)i * n + j] * x[(size_t)b * x_stride + j];
                dot += t, size += fabs(t);
            }
            double e = fabs(out[(size_t)b * out_stride + i] - dot) / (size > 0 ? size : 1);
            if (!(e <= worst)) worst = e; /* NaN counts as worst */
        }
    return worst;
}

/* matmul_batch (or matmul for a batch of one) on the same values at line
 * starts and half a line in. */
static void lines_case(const KernelSet *ks, int n, int d, int batch) {
    int x_stride = (n + 15) / 16 * 16; /* every input row as far into its line as the first */
    size_t wn = (size_t)n * d, xn = (size_t)x_stride * batch, on = (size_t)d * batch;
    float *blocks[6];
    float *w0 = placed(&blocks[0], wn, 0), *w1 = placed(&blocks[1], wn, 32);
    float *x0 = placed(&blocks[2], xn, 0), *x1 = placed(&blocks[3], xn, 32);
    float *out0 = placed(&blocks[4], on, 0), *out1 = placed(&blocks[5], on, 0);
    for (size_t i = 0; i < wn; i++) w0[i] = w1[i] = random_uniform();
    for (size_t i = 0; i < xn; i++) x0[i] = x1[i] = 2.0f * random_uniform();
    if (batch == 1) {
        ks->matmul(out0, x0, w0, n, d);
        ks->matmul(out1, x1, w1, n, d);
    } else {
        ks->matmul_batch(out0, d, x0, x_stride, batch, w0, n, d);
        ks->matmul_batch(out1, d, x1, x_stride, batch, w1, n, d);
    }
    char name[160];
    snprintf(name, sizeof(name), "%s matmul%s half a line in: the bits of line starts n=%d d=%d batch=%d",
             ks->name, batch == 1 ? "" : "_batch", n, d, batch);
    check(memcmp(out0, out1, on * sizeof(float)) == 0, name, "outputs differ");
    if (batch > 1) { /* a batch's rows and single positions may take different paths */
        int same = 1;
        for (int b = 0; b < batch; b++) {
            ks->matmul(out0, x1 + (size_t)b * x_stride, w1, n, d);
            same &= memcmp(out0, out1 + (size_t)b * d, (size_t)d * sizeof(float)) == 0;
        }
        snprintf(name, sizeof(name), "%s matmul_batch half a line in: the bits of matmul n=%d d=%d batch=%d",
                 ks->name, n, d, batch);
        check(same, name, "a position differs");
    }
    double e = worst_error(out1, d, w1, x1, x_stride, n, d, batch);
    snprintf(name, sizeof(name), "%s matmul%s half a line in: the double dot n=%d d=%d batch=%d", ks->name,
             batch == 1 ? "" : "_batch", n, d, batch);
    check(e <= 1e-6, name, "error %.3g of the sum of |w x| > 1e-6", e);
    for (int i = 0; i < 6; i++) free(blocks[i]);
}

int main(void) {
    /* 16: a head of 8 columns and a tail of 8; 24, 40, 1030: tails of
     * other lengths; 768: the 110M shape's rows (12 layers' q, k, v). */
    static const int sizes_n[] = {16, 24, 40, 768, 1030};
    static const int sizes_d[] = {1, 6, 13};
    static const int batches[] = {1, 5, 64};
    const KernelSet *const sets[] = {&kernels_scalar, &kernels_sse2, &kernels_avx2, &kernels_avx512};
    int widest = isa_widest();
    for (int s = ISA_SCALAR; s <= widest; s++)
        for (size_t a = 0; a < sizeof(sizes_n) / sizeof(sizes_n[0]); a++)
            for (size_t c = 0; c < sizeof(sizes_d) / sizeof(sizes_d[0]); c++)
                for (size_t b = 0; b < sizeof(batches) / sizeof(batches[0]); b++)
                    lines_case(sets[s], sizes_n[a], sizes_d[c], batches[b]);
    if (widest < ISA_AVX512) check_skipped("avx512 matmuls half a line in", "this CPU has no AVX-512F+BW+VL");
    return failures ? 1 : 0;
}
