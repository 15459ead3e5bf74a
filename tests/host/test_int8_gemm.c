/* test_int8_gemm - the SSE2 set's two batched int8 gemms (pmaddwd, and the
 * 64-bit integer SIMD within a register of int8_swar.c) each give the
 * scalar reference's bits for every shape around their blocks: rows not a
 * multiple of 3 or 4, groups of 16..256 (spans of 64 inside the SWAR lanes),
 * columns past one packed chunk, 1..64 positions; the extreme values that
 * would carry between the SWAR lanes; and the timed choice between them. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "llm/kernels.h"
#include "llm/simd/kernel_sets.h"
#include "llm/simd/timed_choice.h"
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
    kernels_sse2_q8q_gemm_force(gemm);
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
    static const int shapes[][2] = {{32, 16}, {96, 32}, {288, 32}, {576, 32}, {128, 64},
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
        for (int j = 0; j < N; j++) xq[b * N + j] = b % 3 == 0 ? -127 : b % 3 == 1 ? 127 : (j % 2 ? 127 : -127);
    for (int i = 0; i < D * (N / GS); i++) ws[i] = 1.0f;
    for (int i = 0; i < BATCH * (N / GS); i++) xs[i] = 1.0f;
    kernels_sse2_q8q_gemm_force(gemm);
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
        int which = timed_choice_pick(&c, &timed);
        picks[which]++;
        /* kernel 1: 2 ticks per unit after a cold first call of 100; kernel 0: 3 */
        uint64_t ticks = which ? (picks[1] == 1 ? 100000 : 2000) : 3000;
        timed_choice_record(&c, which, ticks, 1000.0);
    }
    int which = timed_choice_pick(&c, &timed);
    check(picks[0] == TIMED_CHOICE_TRIALS && picks[1] == TIMED_CHOICE_TRIALS, "timed choice alternates trials",
          "picked %d and %d", picks[0], picks[1]);
    check(which == 1 && !timed && c.chosen == 1, "timed choice picks the faster best time",
          "picked %d (timed %d)", which, timed);
    TimedChoice f = TIMED_CHOICE_INIT;
    f.forced = 0;
    check(timed_choice_pick(&f, &timed) == 0 && !timed, "timed choice forced", "not forced");
}

/* Measured on real calls: outputs stay the reference's while trials run, and
 * a choice is made (which one depends on the machine). */
static void test_measured(void) {
    kernels_sse2_q8q_gemm_force(KERNELS_GEMM_MEASURE);
    int same = 1;
    for (int i = 0; i < 2 * TIMED_CHOICE_TRIALS + 2; i++) same &= gemm_case(KERNELS_GEMM_MEASURE, 288, 64, 9, 32);
    check(same, "sse2 gemm while measuring: bit-identical to scalar", "outputs differ");
    int chosen = kernels_sse2_q8q_gemm_chosen();
    check(chosen == KERNELS_GEMM_PMADDWD || chosen == KERNELS_GEMM_SWAR, "sse2 gemm chosen by measurement",
          "still %d", chosen);
    printf("# sse2 gemm chosen on this machine: %s\n", gemm_name(chosen));
}

int main(void) {
    test_timed_choice();
    test_measured();
    for (int gemm = KERNELS_GEMM_PMADDWD; gemm <= KERNELS_GEMM_SWAR; gemm++) {
        test_shapes(gemm);
        test_extremes(gemm);
    }
    kernels_sse2_q8q_gemm_force(KERNELS_GEMM_MEASURE);
    return failures != 0;
}
