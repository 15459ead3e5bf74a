/* kv_cache.h - the element types a GGUF model's KV cache holds: f16 (the
 * default, as llama.cpp's), q8_0 (blocks of 32, half the bytes again) or
 * f32. Types are ggml type numbers. A new key or value row is converted
 * once, when it is written; the attention kernels (kernels.h attend_f16,
 * attend_q8_0) read the stored rows directly. */
#ifndef LLM_KV_CACHE_H
#define LLM_KV_CACHE_H

#include <stdint.h>

#include "llm/tensor/ggml_types.h"

#define KV_TYPE_DEFAULT GGML_TYPE_F16

/* "f32", "f16", "q8_0" (any case) -> the ggml type number; -1 otherwise. */
int kv_type_parse(const char *name);
/* "f32" / "f16" / "q8_0" ("?" for any other number). */
const char *kv_type_name(uint32_t type);
/* Bytes of one cached row of n values; 0 when n does not fill whole q8_0 blocks. */
uint64_t kv_row_bytes(uint32_t type, uint64_t n);
/* Writes n values as one row of the type: f16 rounded to nearest even (as
 * ggml's fp32->fp16), q8_0 quantised as ggml's reference quantiser does
 * (scale = max |x| / 127 kept in f16, values rounded half away from zero). */
void kv_store_row(uint32_t type, void *row, const float *x, int n);

#endif
