/* gguf_matmul.h - internal: the matmuls of the GGUF forward pass. Several
 * matrices that share an input run as one parallel job, for one position
 * or a batch of them (prefill), each on its own type's kernel. */
#ifndef LLM_GGUF_MATMUL_H
#define LLM_GGUF_MATMUL_H

#include "llm/model/gguf_model.h"

/* The input of one or more matmuls: batch rows of n floats, stride floats
 * apart; quantised at most once per activation format. */
typedef struct {
    const float *x;
    int n, batch, stride;
    int have_a, have_k;
} MatmulInput;

MatmulInput gguf_matmul_input(const float *x, int n, int batch, int stride);

/* For each position b of the input and each matrix i < count (at most 3):
 * outs[i] + b * out_strides[i] = ws[i] times input row b. A weight row is
 * read once for the whole batch (rows in cache-sized tiles), and every
 * output is bit-identical to a batch of one. */
void gguf_matmuls(GgufModel *m, MatmulInput *in, int count, float *const outs[], const int out_strides[],
                  const GTensor *const ws[]);

#endif
