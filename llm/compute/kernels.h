/* kernels.h - the numeric inner loops of the transformer, in four sets, one
 * per instruction set (isa.h): a plain scalar reference (for tests), SSE2
 * (the x86_64 baseline), AVX2+FMA and AVX-512 (F+BW: 512-bit matmuls, the
 * rest shared with AVX2). kernels_use() picks the set every kernel family
 * runs; the default before any call is SSE2. */
#ifndef LLM_KERNELS_H
#define LLM_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "llm/compute/isa.h"
#include "llm/compute/q8_0_store.h"

/* out[i] = sum_j w[i*n + j] * x[j], for i < d. */
typedef void matmul_fn(float *out, const float *x, const float *w, int n, int d);
/* Same with int8 weights: w[k] = q[k] * s[k / group_size], k over the
 * flattened (d, n) tensor, so groups may straddle rows. */
typedef void matmul_q8_fn(float *out, const float *x, const int8_t *q, const float *s, int n, int d,
                          int group_size);
/* Batched matmul: out[b*out_stride + i] = sum_j w[i*n + j] * x[b*x_stride + j]
 * for b < batch. Each token's arithmetic is exactly matmul's (bit-identical
 * results); each block of weight rows is read from memory once for all
 * tokens. */
typedef void matmul_batch_fn(float *out, int out_stride, const float *x, int x_stride, int batch,
                             const float *w, int n, int d);
/* Integer matmul (Q8_0 style), batched like matmul_batch. Weights: int8, row
 * i's group g scale at ws[i*(n/gs) + g] (groups never straddle rows: n % gs
 * == 0). Activations: int8 values in int16 lanes (-127..127, from
 * quant_activations), scale xs[b*(n/gs) + g]. out[b*d + i] = sum_g ws * xs *
 * (sum over the group of wq*xq in int32). The SIMD variants need gs % 16 == 0
 * and gs <= QUANT_MAX_GROUP (see quant.h); the scalar one takes any gs. */
typedef void matmul_q8q_fn(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                           const float *ws, int n, int d, int group_size);
typedef float dot_fn(const float *a, const float *b, int n);
/* y[i] += a * x[i] */
typedef void axpy_fn(float *y, float a, const float *x, int n);
/* out[i] = weight[i] * x[i] / sqrt(mean(x^2) + 1e-5) (out may equal x) */
typedef void rmsnorm_fn(float *out, const float *x, const float *weight, int n);
/* In place: x = exp(x - max) / sum. The scalar set uses lib expf; the SIMD
 * sets a float polynomial exp within 2 ulp (much cheaper under QEMU TCG,
 * where the double-precision expf is emulated), the same code in the kernel
 * and on the host. */
typedef void softmax_fn(float *x, int n);
/* In place: a[i] = silu(a[i]) * b[i], silu(v) = v / (1 + exp(-v)) (exp as
 * for softmax) */
typedef void swiglu_fn(float *a, const float *b, int n);
/* In place: x[i] += y[i] */
typedef void add_fn(float *x, const float *y, int n);
/* One attention head over n_pos cached positions, position p's key at
 * keys + p * stride and value at values + p * stride (hs floats each):
 * att[p] = dot(q, key_p) * scale, att = softmax(att), out = sum_p att[p] *
 * value_p. att (n_pos floats) is scratch and is left holding the weights. */
typedef void attend_fn(float *out, float *att, const float *q, const float *keys, const float *values,
                       int stride, int n_pos, int hs, float scale);
/* The same over a KV cache of f16 values (attend_f16), f32 values
 * (attend_f32: a GGUF model's; llama2.c models use attend) or q8_0 blocks of
 * 32 (attend_q8_0: hs % 32 == 0, keys and values at the start of a block):
 * position p's key at keys + p * row_bytes bytes, its value at values + p *
 * row_bytes; read in place, nothing converted beyond one vector at a time.
 * For n_q query heads that share this key/value head (grouped-query
 * attention): head i's query at q + i * hs, its output at out + i * hs, its
 * weights at att + i * att_stride. Each head's result is the same bits
 * whatever n_q (the kernels read each cached row once for up to
 * ATTEND_TILE of them). */
typedef void attend_kv_fn(float *out, float *att, int att_stride, const float *q, int n_q, const void *keys,
                          const void *values, size_t row_bytes, int n_pos, int hs, float scale);
/* One query of an attention tile: its hs values, its output (hs floats),
 * its weights (n_pos floats of scratch) and how many cached positions it
 * sees (the first n_pos rows). */
typedef struct {
    const float *q;
    float *out, *att;
    int n_pos;
} AttendQuery;
/* attend_f16 / attend_q8_0 / attend_f32 for n queries over one key/value head, each
 * seeing its own number of positions: the query heads that share the head
 * at several positions of a prefill batch. Each query's result is the bits
 * attend_kv gives it alone. Every set has them (llm/compute/attention_group.h). */
#define ATTEND_TILE 4 /* queries a tiled kernel reads each cached row once for */
typedef void attend_kv_tile_fn(const AttendQuery *queries, int n, const void *keys, const void *values,
                               size_t row_bytes, int hs, float scale);

/* One instruction set's kernels: every family reads the active set's
 * table (the ggml per-type kernels and activation quantisers through
 * ggml_dispatch.c, by its isa). */
typedef struct {
    const char *name; /* isa_name(isa) */
    enum isa isa;
    matmul_fn *matmul;
    matmul_q8_fn *matmul_q8;
    matmul_batch_fn *matmul_batch;
    matmul_q8q_fn *matmul_q8q;
    dot_fn *dot;
    axpy_fn *axpy;
    rmsnorm_fn *rmsnorm;
    softmax_fn *softmax;
    swiglu_fn *swiglu;
    add_fn *add;
    attend_fn *attend;
    attend_kv_fn *attend_f16, *attend_q8_0, *attend_f32;
    attend_kv_tile_fn *attend_f16_tile, *attend_q8_0_tile, *attend_f32_tile;
    /* The KV cache's row stores (llm/model/kv_cache.c): same bytes in every set. */
    q8_0_store_fn *store_q8_0;
    void (*store_f16)(uint16_t *h, const float *x, int n);
} KernelSet;

extern const KernelSet kernels_scalar;
extern const KernelSet kernels_sse2;
extern const KernelSet kernels_avx2; /* only call when the CPU (and OS/XCR0) allow AVX2+FMA */
/* Only call when the CPU (and OS/XCR0: opmask and ZMM state) allow
 * AVX-512F + AVX-512BW and AVX2+FMA. */
extern const KernelSet kernels_avx512;

/* The table of a set. */
const KernelSet *kernels_of(enum isa isa);
/* The set in use (SSE2 until kernels_use). */
const KernelSet *kernels_active(void);
/* The one place the set in use changes: `isa` from now on, for every
 * family. Callers check isa_usable() first (and report it when not). */
void kernels_use(enum isa isa);
/* The set that runs fastest here, not yet in use. Without a clock (now_ns
 * NULL: natively, where the widest set is the fastest) isa_widest();
 * with one, the quickest of a small matmul in each set the CPU runs,
 * best of three, its times in ns[] (0 for sets not timed; ns may be
 * NULL): under QEMU's
 * TCG the AVX2+FMA code is ~20x slower than SSE2 while natively faster,
 * so there the choice is measured, not assumed from CPUID. */
enum isa kernels_probe(uint64_t (*now_ns)(void), uint64_t ns[ISA_COUNT]);
/* Positions per matmul_q8q call (at most max) that the active set runs
 * with none left over: the SSE2 set's gemm in general-purpose registers
 * (sse2/int8_swar.c, chosen by timing under QEMU TCG) takes positions
 * in threes and would run a lone last one on the one-position kernel. */
int kernels_q8q_batch(int max);

#endif
