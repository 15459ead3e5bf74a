/* q8q_inputs.h - random inputs of an int8 x int8 matmul (matmul_q8q in
 * llm/compute/kernels.h) and its two outputs, shared by the tests that compare its
 * kernels with the scalar reference. */
#ifndef TESTS_HOST_Q8Q_INPUTS_H
#define TESTS_HOST_Q8Q_INPUTS_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "llm/tensor/quant.h"

typedef struct {
    int8_t *wq;
    int16_t *xq;
    float *ws, *xs, *x, *got, *want;
} Q8qInputs;

/* Weights over all of -128..127, scales around 0.015, activations in
 * -3..3 quantised by quant_activations; `unit` draws from [-1, 1). */
static __attribute__((unused)) Q8qInputs q8q_inputs(int n, int d, int batch, int gs, float (*unit)(void)) {
    int groups = n / gs;
    Q8qInputs in = {
        .wq = malloc((size_t)n * d),
        .xq = malloc(sizeof(int16_t) * n * batch),
        .ws = malloc(sizeof(float) * groups * d),
        .xs = malloc(sizeof(float) * groups * batch),
        .x = malloc(sizeof(float) * n * batch),
        .got = malloc(sizeof(float) * d * batch),
        .want = malloc(sizeof(float) * d * batch),
    };
    for (int i = 0; i < n * d; i++) in.wq[i] = (int8_t)(int)floorf(unit() * 128.0f);
    for (int i = 0; i < groups * d; i++) in.ws[i] = 0.01f * (1.5f + unit());
    for (int i = 0; i < n * batch; i++) in.x[i] = 3.0f * unit();
    for (int b = 0; b < batch; b++) quant_activations(in.xq + b * n, in.xs + b * groups, in.x + b * n, n, gs);
    return in;
}

static __attribute__((unused)) void q8q_inputs_free(Q8qInputs *in) {
    free(in->wq), free(in->xq), free(in->ws), free(in->xs), free(in->x), free(in->got), free(in->want);
}

#endif
