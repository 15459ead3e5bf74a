/* test_sse2_gemms - the SSE2 set's two kinds of batched gemm (pmaddwd, and
 * 64-bit integer SIMD within a register: int8_swar.c, q4_0_swar.c) each give
 * the one-position bits for every shape around their blocks. int8: rows not
 * a multiple of 3 or 4, groups of 16..256 (spans of 64 inside the SWAR
 * lanes), columns past one packed chunk, 1..64 positions, and the extreme
 * values that would carry between the lanes. Q4_0: rows not a multiple of
 * 4, columns past a chunk of 128, 1..70 positions, extreme values. And the
 * timed choice between the kinds. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "llm/tensor/ggml_types.h"
#include "llm/compute/kernels.h"
#include "llm/compute/kernel_sets.h"
#include "llm/compute/timed_choice.h"
#include "tests/host/check.h"
#include "tests/host/q8q_inputs.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static float random_unit(void) { /* [-1, 1) */
    return 2.0f * rng_f32(&rng_state) - 1.0f;
}

static const char *gemm_name(int gemm) {
    return gemm == KERNELS_GEMM_SWAR ? "swar" : "pmaddwd";
}

static int gemm_case(int gemm, int n, int d, int batch, int gs) {
    Q8qInputs in = q8q_inputs(n, d, batch, gs, random_unit);
    kernels_sse2_gemm_force(gemm);
    kernels_sse2.matmul_q8q(in.got, in.xq, in.xs, batch, in.wq, in.ws, n, d, gs);
    kernels_scalar.matmul_q8q(in.want, in.xq, in.xs, batch, in.wq, in.ws, n, d, gs);
    int same = memcmp(in.got, in.want, sizeof(float) * d * batch) == 0;
    if (!same) {
        char name[128];
        snprintf(name, sizeof name, "sse2 %s gemm n=%d d=%d batch=%d gs=%d bit-identical to scalar",
                 gemm_name(gemm), n, d, batch, gs);
        check(0, name, "outputs differ");
    }
    q8q_inputs_free(&in);
    return same;
}

static void test_shapes(int gemm) {
    static const int shapes[][2] = {{32, 16},  {96, 32},   {288, 32},  {576, 32}, {128, 64},
                                    {192, 96}, {256, 128}, {512, 256}, {768, 48}};
    static const int rows[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13};
    static const int batches[] = {1, 2, 3, 4, 5, 7, 11, 12, 13, 16, 25, 64};
    int cases = 0, same = 0;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
            for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++, cases++)
                same += gemm_case(gemm, shapes[s][0], rows[r], batches[b], shapes[s][1]);
    same += gemm_case(gemm, 288, 768, 37, 32), cases++; /* a 15M model's w1 */
    char name[96];
    snprintf(name, sizeof name, "sse2 %s gemm: %d shapes bit-identical to scalar", gemm_name(gemm), cases);
    check(same == cases, name, "%d differ", cases - same);
}

/* Every product at an extreme, each position's sign its own: a carry or
 * borrow between the SWAR lanes shows up in the neighbouring position. */
static void test_extremes(int gemm) {
    enum { N = 512, D = 5, BATCH = 7, GS = 256 };
    static int8_t wq[N * D];
    static int16_t xq[N * BATCH];
    float ws[D * (N / GS)], xs[BATCH * (N / GS)], out[D * BATCH];
    for (int i = 0; i < N * D; i++) wq[i] = (i / N) % 2 ? 127 : -128;
    for (int b = 0; b < BATCH; b++)
        for (int j = 0; j < N; j++)
            xq[b * N + j] = b % 3 == 0 ? -127 : b % 3 == 1 ? 127 : (j % 2 ? 127 : -127);
    for (int i = 0; i < D * (N / GS); i++) ws[i] = 1.0f;
    for (int i = 0; i < BATCH * (N / GS); i++) xs[i] = 1.0f;
    kernels_sse2_gemm_force(gemm);
    kernels_sse2.matmul_q8q(out, xq, xs, BATCH, wq, ws, N, D, GS);
    int exact = 1;
    for (int b = 0; b < BATCH; b++)
        for (int i = 0; i < D; i++) {
            float w = i % 2 ? 127.0f : -128.0f;
            float want = b % 3 == 2 ? 0.0f : w * (b % 3 == 0 ? -127.0f : 127.0f) * N;
            exact &= out[b * D + i] == want;
        }
    char name[96];
    snprintf(name, sizeof name, "sse2 %s gemm: extreme values in groups of 256, exact", gemm_name(gemm));
    check(exact, name, "wrong sum");
}

/* The choice itself, on made-up timings: the smaller best time per unit of
 * work wins, and a slow first trial does not decide. */
static void test_timed_choice(void) {
    TimedChoice c = TIMED_CHOICE_INIT;
    int timed, picks[2] = {0, 0};
    for (int i = 0; i < 2 * TIMED_CHOICE_TRIALS; i++) {
        int which = timed_choice_pick(&c, KERNELS_GEMM_MEASURE, &timed);
        picks[which]++;
        /* kernel 1: 2 ticks per unit after a cold first call of 100; kernel 0: 3 */
        uint64_t ticks = which ? (picks[1] == 1 ? 100000 : 2000) : 3000;
        timed_choice_record(&c, which, ticks, 1000.0);
    }
    int which = timed_choice_pick(&c, KERNELS_GEMM_MEASURE, &timed);
    check(picks[0] == TIMED_CHOICE_TRIALS && picks[1] == TIMED_CHOICE_TRIALS,
          "timed choice alternates trials", "picked %d and %d", picks[0], picks[1]);
    check(which == 1 && !timed && c.chosen == 1, "timed choice picks the faster best time",
          "picked %d (timed %d)", which, timed);
    check(timed_choice_pick(&c, 0, &timed) == 0 && !timed, "timed choice forced", "not forced");
}

/* Measured on real calls: outputs stay the reference's while trials run, and
 * a choice is made (which one depends on the machine). */
static void test_measured(void) {
    kernels_sse2_gemm_force(KERNELS_GEMM_MEASURE);
    int same = 1;
    for (int i = 0; i < 2 * TIMED_CHOICE_TRIALS + 2; i++)
        same &= gemm_case(KERNELS_GEMM_MEASURE, 288, 64, 9, 32);
    check(same, "sse2 gemm while measuring: bit-identical to scalar", "outputs differ");
    int chosen = kernels_sse2_q8q_gemm_chosen();
    check(chosen == KERNELS_GEMM_PMADDWD || chosen == KERNELS_GEMM_SWAR, "sse2 gemm chosen by measurement",
          "still %d", chosen);
    printf("# sse2 gemm chosen on this machine: %s\n", gemm_name(chosen));
}

/* Q4_0 rows (random nibbles and scales; with `extreme`, every weight -8 and
 * every activation -127: the largest lane sum) times Q8A positions: the
 * batched gemm against the SSE2 matmul one position at a time. */
static int q4_0_case(int gemm, int n, int count, int batch, int extreme) {
    size_t row_bytes = ggml_row_bytes(GGML_TYPE_Q4_0, n), act_stride = (size_t)n / 32 * sizeof(BlockQ8A);
    uint8_t *rows = malloc(row_bytes * count);
    BlockQ8A *act = malloc(act_stride * batch);
    float *x = malloc(sizeof(float) * n), *got = malloc(sizeof(float) * count * batch);
    float *want = malloc(sizeof(float) * count * batch);
    for (int i = 0; i < count * n / 32; i++) {
        BlockQ4_0 *b = (BlockQ4_0 *)rows + i;
        b->d = ggml_fp32_to_fp16(0.01f * (1.5f + random_unit()));
        for (int j = 0; j < 16; j++) b->qs[j] = extreme ? 0 : (uint8_t)(rng_u32(&rng_state) >> 24);
    }
    for (int p = 0; p < batch; p++) {
        for (int j = 0; j < n; j++) x[j] = extreme ? -1.0f : 3.0f * random_unit();
        ggml_quantize_act_q8a((BlockQ8A *)((uint8_t *)act + p * act_stride), x, n);
    }
    kernels_use(ISA_SSE2);
    kernels_sse2_gemm_force(gemm);
    ggml_gemm_best(GGML_TYPE_Q4_0)(got, count, rows, row_bytes, act, act_stride, n, count, batch);
    for (int p = 0; p < batch; p++)
        ggml_matmul_best(GGML_TYPE_Q4_0)(want + p * count, rows, row_bytes, (uint8_t *)act + p * act_stride,
                                         n, count);
    int same = memcmp(got, want, sizeof(float) * count * batch) == 0;
    if (!same) {
        char name[128];
        snprintf(name, sizeof name, "sse2 %s Q4_0 gemm n=%d rows=%d batch=%d%s: the matmul's bits",
                 gemm_name(gemm), n, count, batch, extreme ? " extreme" : "");
        check(0, name, "outputs differ");
    }
    free(rows), free(act), free(x), free(got), free(want);
    return same;
}

static void test_q4_0(int gemm) {
    static const int columns[] = {32, 128, 160, 288, 512};
    static const int rows[] = {1, 2, 3, 4, 5, 7, 8, 9, 13};
    static const int batches[] = {1, 2, 3, 4, 5, 7, 8, 16, 17, 64, 65, 70};
    int cases = 0, same = 0;
    for (size_t c = 0; c < sizeof columns / sizeof columns[0]; c++)
        for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
            for (size_t b = 0; b < sizeof batches / sizeof batches[0]; b++, cases++)
                same += q4_0_case(gemm, columns[c], rows[r], batches[b], 0);
    char name[96];
    snprintf(name, sizeof name, "sse2 %s Q4_0 gemm: %d shapes give the matmul's bits", gemm_name(gemm),
             cases);
    check(same == cases, name, "%d differ", cases - same);
    check(q4_0_case(gemm, 256, 5, 9, 1), "sse2 Q4_0 gemm: extreme values exact", "outputs differ");
}

int main(void) {
    test_timed_choice();
    test_measured();
    for (int gemm = KERNELS_GEMM_PMADDWD; gemm <= KERNELS_GEMM_SWAR; gemm++) {
        test_shapes(gemm);
        test_extremes(gemm);
        test_q4_0(gemm);
    }
    kernels_sse2_gemm_force(KERNELS_GEMM_MEASURE);
    kernels_use(ISA_SSE2);
    return failures != 0;
}
