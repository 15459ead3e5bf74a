/* rng.c - llama2.c's xorshift64* generator, bit for bit. */
#include "lib/rng.h"

uint32_t rng_u32(uint64_t *state) {
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return (uint32_t)((*state * 0x2545F4914F6CDD1Dull) >> 32);
}

float rng_f32(uint64_t *state) {
    return (float)(rng_u32(state) >> 8) / 16777216.0f;
}
