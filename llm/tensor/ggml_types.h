/* ggml_types.h - the ggml tensor types GGUF files use: type numbers, block
 * layouts (with size asserts), half/bfloat conversion (ggml_types.c),
 * dequantisation of rows (ggml_dequant.c), int8 quantisation of the
 * activations (ggml_act_quant.c) and dot products of a weight row with them
 * (Q8_0-like blocks of 32 for the 32-element types, Q8_K blocks of 256 for
 * the k-quants): the scalar reference and the SIMD variants in llm/compute/. */
#ifndef LLM_GGML_TYPES_H
#define LLM_GGML_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "llm/compute/isa.h"

enum {
    GGML_TYPE_F32 = 0,
    GGML_TYPE_F16 = 1,
    GGML_TYPE_Q4_0 = 2,
    GGML_TYPE_Q4_1 = 3,
    GGML_TYPE_Q5_0 = 6,
    GGML_TYPE_Q5_1 = 7,
    GGML_TYPE_Q8_0 = 8,
    GGML_TYPE_Q8_1 = 9,
    GGML_TYPE_Q2_K = 10,
    GGML_TYPE_Q3_K = 11,
    GGML_TYPE_Q4_K = 12,
    GGML_TYPE_Q5_K = 13,
    GGML_TYPE_Q6_K = 14,
    GGML_TYPE_Q8_K = 15,
    GGML_TYPE_I8 = 24,
    GGML_TYPE_I16 = 25,
    GGML_TYPE_I32 = 26,
    GGML_TYPE_I64 = 27,
    GGML_TYPE_F64 = 28,
    GGML_TYPE_BF16 = 30,
    GGML_TYPE_LIMIT = 40
};

#define QK32 32
#define QK_K 256
#define K_SCALE_SIZE 12

typedef uint16_t ggml_half;

typedef struct {
    ggml_half d;
    uint8_t qs[QK32 / 2];
} BlockQ4_0;
typedef struct {
    ggml_half d, m;
    uint8_t qs[QK32 / 2];
} BlockQ4_1;
typedef struct {
    ggml_half d;
    uint8_t qh[4];
    uint8_t qs[QK32 / 2];
} BlockQ5_0;
typedef struct {
    ggml_half d, m;
    uint8_t qh[4];
    uint8_t qs[QK32 / 2];
} BlockQ5_1;
typedef struct {
    ggml_half d;
    int8_t qs[QK32];
} BlockQ8_0;
typedef struct {
    ggml_half d, s;
    int8_t qs[QK32];
} BlockQ8_1;
typedef struct {
    uint8_t scales[QK_K / 16];
    uint8_t qs[QK_K / 4];
    ggml_half d, dmin;
} BlockQ2_K;
typedef struct {
    uint8_t hmask[QK_K / 8];
    uint8_t qs[QK_K / 4];
    uint8_t scales[K_SCALE_SIZE];
    ggml_half d;
} BlockQ3_K;
typedef struct {
    ggml_half d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qs[QK_K / 2];
} BlockQ4_K;
typedef struct {
    ggml_half d, dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];
    uint8_t qs[QK_K / 2];
} BlockQ5_K;
typedef struct {
    uint8_t ql[QK_K / 2];
    uint8_t qh[QK_K / 4];
    int8_t scales[QK_K / 16];
    ggml_half d;
} BlockQ6_K;

/* Activations quantised for the integer dot products. Q8A: 32 values with
 * an fp32 scale, their scaled sum (for the types with a min) and their exact
 * integer sum (for Q4_0's -8 offset). Q8K: 256 values, an fp32 scale and
 * sums of each 16. */
typedef struct {
    float d;
    float s;
    int32_t qsum;
    int8_t qs[QK32];
} BlockQ8A;
typedef struct {
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];
} BlockQ8K;

_Static_assert(sizeof(BlockQ4_0) == 18, "Q4_0 block");
_Static_assert(sizeof(BlockQ4_1) == 20, "Q4_1 block");
_Static_assert(sizeof(BlockQ5_0) == 22, "Q5_0 block");
_Static_assert(sizeof(BlockQ5_1) == 24, "Q5_1 block");
_Static_assert(sizeof(BlockQ8_0) == 34, "Q8_0 block");
_Static_assert(sizeof(BlockQ8_1) == 36, "Q8_1 block");
_Static_assert(sizeof(BlockQ2_K) == 84, "Q2_K block");
_Static_assert(sizeof(BlockQ3_K) == 110, "Q3_K block");
_Static_assert(sizeof(BlockQ4_K) == 144, "Q4_K block");
_Static_assert(sizeof(BlockQ5_K) == 176, "Q5_K block");
_Static_assert(sizeof(BlockQ6_K) == 210, "Q6_K block");
_Static_assert(sizeof(BlockQ8K) == 292, "Q8_K block (ggml's layout, used for activations only)");

/* Which activation blocks a weight type's dot product takes. */
typedef enum { ACT_F32, ACT_Q8A, ACT_Q8K } ActFormat;

typedef struct {
    const char *name;
    uint32_t block_elems; /* values per block (1 for plain types) */
    uint32_t block_bytes;
    int supported; /* usable as a model weight */
    ActFormat act; /* activation format of the fast dot product */
} GgmlTypeInfo;

/* NULL for unknown type numbers. */
const GgmlTypeInfo *ggml_type_info(uint32_t type);
const char *ggml_type_name(uint32_t type); /* "Q4_K", or "unknown" */
/* Bytes of a row of n values, 0 when n is not a multiple of the block or
 * the type is unknown. */
uint64_t ggml_row_bytes(uint32_t type, uint64_t n);

float ggml_fp16_to_fp32(uint16_t h);
uint16_t ggml_fp32_to_fp16(float f);
/* h[i] = ggml_fp32_to_fp16(x[i]) for i < n, with F16C when the CPU has it
 * (the KV cache stores through its kernel set's store_f16). */
void ggml_fp32_to_fp16_row(uint16_t *h, const float *x, int n);
float ggml_bf16_to_fp32(uint16_t h);

/* Dequantises one row of n values (n a multiple of the block size). */
void ggml_dequantize_row(uint32_t type, const void *row, float *out, int n);

/* Q8_0's scale for a block whose largest magnitude is amax: d = amax / 127
 * (returned, before the fp16 rounding Q8_0 stores) and the factor each value
 * is multiplied by (0 for an all-zero block). Every Q8_0/Q8A quantiser, scalar
 * or SIMD, takes its scale from here. */
static inline float ggml_q8_0_scale(float amax, float *inverse) {
    float d = amax / 127.0f;
    *inverse = d != 0.0f ? 1.0f / d : 0.0f;
    return d;
}
/* n values (n % 32 == 0) into Q8_0 blocks as ggml's reference quantiser
 * rounds them (qs = round-half-away(x * inverse), d in fp16): the one scalar
 * Q8_0 quantiser, used by Q8A activations, the scalar KV store and
 * gguf_convert; the SIMD ones give its bytes. */
void ggml_quantize_row_q8_0(BlockQ8_0 *out, const float *x, size_t n);
/* Activations: x (n values) into Q8A blocks (n % 32 == 0) / Q8K blocks (n % 256 == 0). */
void ggml_quantize_act_q8a(BlockQ8A *out, const float *x, int n);
void ggml_quantize_act_q8k(BlockQ8K *out, const float *x, int n);
/* Either of them (act ACT_Q8A: BlockQ8A, ACT_Q8K: BlockQ8K) as the active
 * kernel set does it: the same bytes, SIMD where the set has it. */
typedef void (*ggml_act_quantize_fn)(void *out, const float *x, int n);
ggml_act_quantize_fn ggml_act_quantizer_best(int act);

/* Dot product of one weight row (n values) with activations in the format
 * ggml_type_info(type)->act names: fp32 x for F32/F16/BF16, else blocks. */
typedef float (*ggml_vec_dot_fn)(const void *row, const void *act, int n);
ggml_vec_dot_fn ggml_vec_dot_scalar(uint32_t type);
/* The variant of the active kernel set (compute/ggml_dispatch.c): its SIMD
 * one where written, the scalar one otherwise. */
ggml_vec_dot_fn ggml_vec_dot_best(uint32_t type);
/* The variant of kernel set `isa`: ISA_SSE2, ISA_AVX2 or ISA_AVX512 (the
 * AVX-512 VNNI kernels of F16, BF16, Q8_0, Q4_0, Q4_K, Q6_K when
 * cpu_features() has VNNI, else as ISA_AVX2); NULL for ISA_SCALAR and
 * types with none. */
ggml_vec_dot_fn ggml_vec_dot_of(uint32_t type, enum isa isa);
/* out[i] = dot(rows + i * row_bytes, act, n) for i < count: several rows
 * per pass with prefetching; each out[i] is bit-identical to the same
 * variant's ggml_vec_dot (so independent of how rows are split). NULL when
 * the type has no such kernel in that variant (loop over the dot then). */
typedef void (*ggml_matmul_fn)(float *out, const uint8_t *rows, size_t row_bytes, const void *act, int n,
                               int count);
ggml_matmul_fn ggml_matmul_of(uint32_t type, enum isa isa);
ggml_matmul_fn ggml_matmul_best(uint32_t type); /* for the active kernel set */
/* Rows times a batch of positions (a GEMM): out[p * out_stride + i] = row i
 * . activations of position p (act + p * act_stride bytes) for i < count,
 * p < batch. Each weight block is decoded once per tile of rows and
 * positions and used from registers; every output is bit-identical to the
 * same variant's ggml_matmul_fn. NULL when the type has none in that set. */
typedef void (*ggml_gemm_fn)(float *out, size_t out_stride, const uint8_t *rows, size_t row_bytes,
                             const void *act, size_t act_stride, int n, int count, int batch);
ggml_gemm_fn ggml_gemm_best(uint32_t type); /* for the active kernel set */

#endif
