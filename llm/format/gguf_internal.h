/* gguf_internal.h - what the GGUF parser (gguf.c) shares with the value
 * readers (gguf_values.c). Not for other callers. */
#ifndef LLM_GGUF_INTERNAL_H
#define LLM_GGUF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* The little-endian unsigned integer of `bytes` bytes at p. */
uint64_t gguf_load_le(const uint8_t *p, int bytes);
/* The size of one value of a fixed-size metadata type; 0 for string, array
 * and unknown types. */
size_t gguf_scalar_size(uint32_t type);
/* The end of `count` values of `type` from p, which gguf_create has validated. */
const uint8_t *gguf_values_end(const uint8_t *p, uint32_t type, uint64_t count);

#endif
