/* quant.h - Q8_0-style quantisation: int8 values with one fp32 scale per
 * group of values (scale = max|v| / 127). Weights are quantised once (at
 * load), activations once per matmul input, so the matmul itself runs on
 * integer dot products (see matmul_q8q in kernels.h). */
#ifndef LLM_QUANT_H
#define LLM_QUANT_H

#include <stddef.h>
#include <stdint.h>

/* Groups the integer kernels accept: a multiple of 16 (one SIMD load) and
 * small enough that a group's int32 sums cannot overflow (the SSE2 kernel
 * sums gs/4 products of up to 128*256*127 per lane). */
#define QUANT_GROUP_STEP 16
#define QUANT_MAX_GROUP 1024

/* 1 when the integer kernels can run with this group size. */
int quant_group_supported(int group_size);

/* x (n values, n % group_size == 0) to int8 values held in int16 lanes plus
 * one scale per group: q = round-to-nearest-even(x * 127 / max|x|), scale =
 * max|x| / 127 (an all-zero group gets scale 0 and zeros). */
void quant_activations(int16_t *q, float *scales, const float *x, int n, int group_size);

/* w (count values, count % group_size == 0) to int8 + scales, the rule the
 * llama2.c exporter uses: scale = max|w| / 127, q = round-half-away(w / scale). */
void quant_weights(int8_t *q, float *scales, const float *w, size_t count, int group_size);

#endif
