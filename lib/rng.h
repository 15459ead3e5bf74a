/* rng.h - xorshift64* random numbers, exactly as llama2.c's sampler uses them,
 * so that the same seed gives the same text. */
#ifndef LIB_RNG_H
#define LIB_RNG_H

#include <stdint.h>

/* state must be non-zero. Returns (state * 0x2545F4914F6CDD1D) >> 32 after the
 * xorshift step, like llama2.c's random_u32. */
uint32_t rng_u32(uint64_t *state);
/* A float in [0, 1): (rng_u32 >> 8) / 16777216.0f, like llama2.c's random_f32. */
float rng_f32(uint64_t *state);

#endif
