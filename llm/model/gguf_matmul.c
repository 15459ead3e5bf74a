/* gguf_matmul.c - the matmuls of the GGUF forward pass (see gguf_matmul.h):
 * typed row kernels (llm/compute/, chosen by ggml_dispatch.c) or dot products, over the matrices
 * of a group numbered one after the other and split over the workers
 * together, so they meet once for q, k and v (or gate and up). */
#include "llm/model/gguf_matmul.h"

#include "llm/compute/kernels.h"
#include "llm/compute/parallel.h"

#define MAX_GROUP 3
/* Weight bytes per tile when a batch is multiplied: the tile stays in L2
 * while every position of the batch goes over it. */
#define TILE_BYTES (64 * 1024)

/* One matrix of a group: rows first..first+count-1 of the group's row
 * numbering; a typed row kernel (fn) when the type has one, else one dot
 * product per row. Position b's output and activations lie b * out_stride
 * floats and b * act_stride bytes on. */
typedef struct {
    ggml_gemm_fn gemm;
    ggml_matmul_fn fn;
    ggml_vec_dot_fn dot;
    float *out;
    const uint8_t *rows;
    size_t row_bytes;
    const uint8_t *act;
    size_t act_stride;
    int out_stride;
    int first, count;
} MatmulPart;

typedef struct {
    MatmulPart part[MAX_GROUP];
    int parts, n, batch;
} MatmulGroup;

MatmulInput gguf_matmul_input(const float *x, int n, int batch, int stride) {
    MatmulInput in = {x, n, batch, stride, 0, 0};
    return in;
}

/* Rows lo..hi-1 of one matrix for every position of the batch. */
static void part_rows(const MatmulPart *part, int n, int batch, int lo, int hi) {
    int tile = hi - lo;
    if (batch > 1) {
        size_t fit = TILE_BYTES / (part->row_bytes ? part->row_bytes : 1);
        tile = fit < 16 ? 16 : (int)(fit / 16 * 16); /* whole 16-row groups (Q8_0, Q4_0 on AVX-512) */
    }
    for (int t0 = lo; t0 < hi; t0 += tile) {
        int t1 = hi - t0 < tile ? hi : t0 + tile;
        const uint8_t *rows = part->rows + (size_t)t0 * part->row_bytes;
        if (batch > 1 && part->gemm) {
            part->gemm(part->out + t0, part->out_stride, rows, part->row_bytes, part->act, part->act_stride,
                       n, t1 - t0, batch);
            continue;
        }
        for (int b = 0; b < batch; b++) {
            float *out = part->out + (size_t)b * part->out_stride;
            const void *act = part->act + (size_t)b * part->act_stride;
            if (part->fn) {
                part->fn(out + t0, rows, part->row_bytes, act, n, t1 - t0);
                continue;
            }
            const uint8_t *row = rows;
            for (int i = t0; i < t1; i++, row += part->row_bytes) out[i] = part->dot(row, act, n);
        }
    }
}

/* Rows r0..r1-1 of the group, cut at the matrices' borders. Each kernel
 * computes a row the same way whatever rows it is called with, so results
 * do not depend on how the rows are split. */
static void group_rows(void *ctx, int r0, int r1) {
    MatmulGroup *g = ctx;
    for (int p = 0; p < g->parts; p++) {
        const MatmulPart *part = &g->part[p];
        int lo = r0 > part->first ? r0 - part->first : 0;
        int hi = r1 - part->first < part->count ? r1 - part->first : part->count;
        if (lo < hi) part_rows(part, g->n, g->batch, lo, hi);
    }
}

/* Every position of the input quantised by the `act` quantiser into
 * blocks, stride bytes apart (once per input and format: *done). */
static const void *quantised(const MatmulInput *in, int act, void *blocks, size_t stride, int *done) {
    if (!*done)
        for (int b = 0; b < in->batch; b++)
            ggml_act_quantizer_best(act)((uint8_t *)blocks + (size_t)b * stride,
                                         in->x + (size_t)b * in->stride, in->n);
    *done = 1;
    return blocks;
}

/* The activations in the format w's type multiplies with, and the bytes
 * between positions. */
static const void *activations_for(GgufModel *m, MatmulInput *in, const GTensor *w, size_t *stride) {
    switch (ggml_type_info(w->type)->act) {
    case ACT_Q8A:
        *stride = (size_t)m->act_a_blocks * sizeof(BlockQ8A);
        return quantised(in, ACT_Q8A, m->act_a, *stride, &in->have_a);
    case ACT_Q8K:
        *stride = (size_t)m->act_k_blocks * sizeof(BlockQ8K);
        return quantised(in, ACT_Q8K, m->act_k, *stride, &in->have_k);
    default:
        *stride = (size_t)in->stride * sizeof(float);
        return in->x;
    }
}

/* F32 weights: the kernel set's batched fp32 matmul (each position's
 * arithmetic is its single matmul's, so the bits are the same), which reads
 * every weight row once for the batch, at the forward pass's strides. */
static void f32_matmul(const MatmulInput *in, float *out, int out_stride, const GTensor *w) {
    int n = in->n, d = w->rows, batch = in->batch;
    if (batch == 1) {
        parallel_matmul(out, in->x, (const float *)w->data, n, d);
        return;
    }
    parallel_matmul_batch(out, out_stride, in->x, in->stride, batch, (const float *)w->data, n, d);
}

void gguf_matmuls(GgufModel *m, MatmulInput *in, int count, float *const outs[], const int out_strides[],
                  const GTensor *const ws[]) {
    int n = in->n;
    MatmulGroup g = {.parts = 0, .n = n, .batch = in->batch};
    int total = 0;
    for (int i = 0; i < count && i < MAX_GROUP; i++) {
        const GTensor *w = ws[i];
        if (w->type == GGML_TYPE_F32) {
            f32_matmul(in, outs[i], out_strides[i], w);
            continue;
        }
        if (m->reference) { /* dequantise each row, fp32 dot (one position at a time) */
            for (int b = 0; b < in->batch; b++)
                for (int r = 0; r < w->rows; r++) {
                    ggml_dequantize_row(w->type, (const uint8_t *)w->data + (size_t)r * w->row_bytes, m->row,
                                        n);
                    outs[i][(size_t)b * out_strides[i] + r] =
                        kernels_active()->dot(m->row, in->x + (size_t)b * in->stride, n);
                }
            continue;
        }
        MatmulPart *part = &g.part[g.parts++];
        part->gemm = ggml_gemm_best(w->type);
        part->fn = ggml_matmul_best(w->type);
        part->dot = part->fn ? NULL : ggml_vec_dot_best(w->type);
        part->out = outs[i];
        part->out_stride = out_strides[i];
        part->rows = w->data;
        part->row_bytes = w->row_bytes;
        part->act = activations_for(m, in, w, &part->act_stride);
        part->first = total;
        part->count = w->rows;
        total += w->rows;
    }
    /* chunks of whole 8-row groups, the AVX-512 kernels' unit */
    if (g.parts) parallel_for(total, 8, (uint64_t)n * (uint64_t)total * (uint64_t)in->batch, group_rows, &g);
}
