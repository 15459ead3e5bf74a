/* test_quant - group quantisation of activations and weights: known values,
 * rounding, zero groups, the exporter's rule for weights, and the error bound
 * (at most half a step per value). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/tensor/quant.h"
#include "tests/host/llm_test_util.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static float uniform(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((rng >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

static void test_known_activations(void) {
    float x[16] = {0};
    int16_t q[16];
    float s[1];
    x[0] = 2.54f;  /* max: becomes 127 */
    x[1] = -2.54f; /* -127 */
    x[2] = 1.27f;  /* 63.5 -> 64 (ties to even) */
    x[3] = 0.03f;  /* 1.5 -> 2 */
    x[4] = 0.01f;  /* 0.5 -> 0 */
    x[5] = -0.05f; /* -2.5 -> -2 */
    quant_activations(q, s, x, 16, 16);
    check(fabsf(s[0] - 0.02f) < 1e-7f, "activation scale = max/127", "got %g", s[0]);
    check(q[0] == 127 && q[1] == -127, "activation max maps to +-127", "got %d %d", q[0], q[1]);
    check(q[3] == 2 && q[4] == 0 && q[5] == -2 && q[15] == 0, "activations round to nearest (ties to even)",
          "got %d %d %d %d", q[3], q[4], q[5], q[15]);
    check(q[2] == 63 || q[2] == 64, "activation 63.5 rounds to a neighbour", "got %d", q[2]);

    float zero[32] = {0};
    int16_t qz[32];
    float sz[2] = {1, 1};
    memset(qz, 0x55, sizeof(qz));
    quant_activations(qz, sz, zero, 32, 16);
    int all_zero = 1;
    for (int i = 0; i < 32; i++) all_zero &= qz[i] == 0;
    check(all_zero && sz[0] == 0 && sz[1] == 0, "all-zero groups give zeros and scale 0", "not zero");
}

/* Random data: every value within half a step of the original, groups independent. */
static void test_error_bound(void) {
    enum { N = 96 * 5 };
    float x[N], s[N / 16], back[N];
    int16_t q[N];
    int8_t wq[N];
    float ws[N / 16];
    for (int i = 0; i < N; i++) x[i] = uniform() * (i < 96 ? 100.0f : 0.01f);
    for (int gs = 16; gs <= 96; gs *= 2) {
        if (N % gs) continue;
        quant_activations(q, s, x, N, gs);
        double worst = 0;
        int in_range = 1;
        for (int i = 0; i < N; i++) {
            back[i] = q[i] * s[i / gs];
            worst = fmax(worst, fabs(back[i] - x[i]) / s[i / gs]);
            in_range &= q[i] >= -127 && q[i] <= 127;
        }
        char name[96];
        snprintf(name, sizeof(name), "activations gs %d within half a step, in -127..127", gs);
        check(worst <= 0.5 + 1e-4 && in_range, name, "worst %.4f steps", worst);

        quant_weights(wq, ws, x, N, gs);
        int exporter_rule = 1;
        for (int i = 0; i < N; i++) {
            float scale = ws[i / gs];
            exporter_rule &= wq[i] == (int8_t)lroundf(x[i] / scale);
        }
        snprintf(name, sizeof(name), "weights gs %d follow the exporter rule round(w / (max/127))", gs);
        check(exporter_rule, name, "a value differs");
    }
}

/* Halfway and just-below-halfway steps, signs, the largest values: the
 * vectorised rounding must match roundf (half away from zero) everywhere. */
static void test_weight_rounding(void) {
    enum { N = 64 };
    float w[N] = {127.0f, -2.5f,   2.5f,        0.5f,         -0.5f,      1.5f,        -1.5f,
                  126.5f, -126.5f, 0.49999997f, -0.49999997f, 2.4999998f, -2.4999998f, 0.0f,
                  -0.0f,  1e-30f,  3.5000002f,  -3.5000002f,  63.5f,      -63.5f};
    for (int i = 20; i < N; i++) w[i] = (float)(i - 42) * 2.75f + 0.25f * (float)(i % 3);
    int8_t q[N];
    float s[N / 32];
    quant_weights(q, s, w, N, 32);
    int same = 1, first_bad = -1;
    for (int i = 0; i < N; i++) {
        int8_t want = (int8_t)(int)roundf(w[i] / s[i / 32]);
        if (q[i] != want && first_bad < 0) first_bad = i;
        same &= q[i] == want;
    }
    check(same && s[0] == 1.0f, "weights round half away from zero exactly like roundf", "value %d differs",
          first_bad);
    float zeros[32] = {0};
    int8_t qz[32];
    float sz[1];
    memset(qz, 1, sizeof qz);
    quant_weights(qz, sz, zeros, 32, 32);
    int all_zero = sz[0] == 0.0f;
    for (int i = 0; i < 32; i++) all_zero &= qz[i] == 0;
    check(all_zero, "an all-zero weight group gives scale 0 and zeros", "nonzero output");
}

int main(void) {
    (void)read_file, (void)models_dir_from_env; /* shared helpers this test does not need */
    check(quant_group_supported(16) && quant_group_supported(32) && quant_group_supported(1024),
          "group sizes 16, 32, 1024 supported", "rejected");
    check(!quant_group_supported(0) && !quant_group_supported(8) && !quant_group_supported(24) &&
              !quant_group_supported(1040) && !quant_group_supported(-32),
          "group sizes 0, 8, 24, 1040, -32 refused", "accepted");
    test_known_activations();
    test_error_bound();
    test_weight_rounding();
    return failures ? 1 : 0;
}
