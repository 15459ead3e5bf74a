/* test_kernels - every kernel variant (scalar reference, SSE2, AVX2+FMA and
 * AVX-512 when the host has them) agrees on random inputs, including odd sizes that
 * exercise the vector tails and int8 groups that straddle rows. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/tensor/ggml_types.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/tensor/quant.h"
#include "tests/host/check.h"
#include "tests/host/q8q_inputs.h"
#include "tools/ggml_quantize.h"

static uint64_t rng_state = 0x1234567;

static float random_uniform(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (float)((rng_state >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

static void fill(float *p, int n, float scale) {
    for (int i = 0; i < n; i++) p[i] = scale * random_uniform();
}

/* Largest |a - b| relative to max(1, |b|) over n values. */
static double max_error(const float *a, const float *b, int n) {
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]) / fmax(1.0, fabs((double)b[i]));
        if (!(e <= worst)) worst = e; /* NaN counts as worst */
    }
    return worst;
}

static void compare(const KernelSet *ks, const char *op, int n, int d, const float *got, const float *want,
                    int count, double tol) {
    char name[128], why[128];
    double e = max_error(got, want, count);
    snprintf(name, sizeof(name), "%s %s n=%d d=%d", ks->name, op, n, d);
    snprintf(why, sizeof(why), "max relative error %.3g > %.3g", e, tol);
    check_plain(e <= tol, name, why);
}

static void test_variant(const KernelSet *ks) {
    static const int sizes_n[] = {1, 3, 4, 7, 8, 15, 16, 17, 33, 64, 172, 288, 301};
    static const int sizes_d[] = {1, 3, 4, 5, 13};
    const KernelSet *ref = &kernels_scalar;
    for (size_t a = 0; a < sizeof(sizes_n) / sizeof(sizes_n[0]); a++) {
        int n = sizes_n[a];
        for (size_t b = 0; b < sizeof(sizes_d) / sizeof(sizes_d[0]); b++) {
            int d = sizes_d[b];
            float *w = malloc(sizeof(float) * n * d), *x = malloc(sizeof(float) * n);
            float *got = malloc(sizeof(float) * d), *want = malloc(sizeof(float) * d);
            fill(w, n * d, 1.0f);
            fill(x, n, 2.0f);
            ks->matmul(got, x, w, n, d);
            ref->matmul(want, x, w, n, d);
            compare(ks, "matmul", n, d, got, want, d, 1e-5);

            /* int8 weights, groups over the flattened tensor (rows straddle groups when n % gs != 0). */
            int gs = (n * d) % 32 == 0 ? 32 : (n * d) % 4 == 0 ? 4 : 1;
            int8_t *q = malloc((size_t)n * d);
            float *s = malloc(sizeof(float) * (n * d / gs));
            for (int i = 0; i < n * d; i++) q[i] = (int8_t)(random_uniform() * 127.0f);
            for (int i = 0; i < n * d / gs; i++) s[i] = 0.01f * (1.5f + random_uniform());
            ks->matmul_q8(got, x, q, s, n, d, gs);
            ref->matmul_q8(want, x, q, s, n, d, gs);
            compare(ks, "matmul_q8", n, d, got, want, d, 1e-5);
            free(q), free(s), free(w), free(got), free(want), free(x);
        }
        float *a1 = malloc(sizeof(float) * n), *a2 = malloc(sizeof(float) * n),
              *b1 = malloc(sizeof(float) * n);
        float *wt = malloc(sizeof(float) * n);
        fill(a1, n, 3.0f);
        fill(b1, n, 1.0f);
        fill(wt, n, 1.0f);
        float dg = ks->dot(a1, b1, n), dw = ref->dot(a1, b1, n);
        compare(ks, "dot", n, 1, &dg, &dw, 1, 1e-5);

        memcpy(a2, a1, sizeof(float) * n);
        float *a3 = malloc(sizeof(float) * n);
        memcpy(a3, a1, sizeof(float) * n);
        ks->axpy(a2, 0.37f, b1, n);
        ref->axpy(a3, 0.37f, b1, n);
        compare(ks, "axpy", n, 1, a2, a3, n, 1e-6);

        ks->rmsnorm(a2, a1, wt, n);
        ref->rmsnorm(a3, a1, wt, n);
        compare(ks, "rmsnorm", n, 1, a2, a3, n, 1e-5);

        memcpy(a2, a1, sizeof(float) * n);
        memcpy(a3, a1, sizeof(float) * n);
        ks->softmax(a2, n);
        ref->softmax(a3, n);
        double sum = 0;
        for (int i = 0; i < n; i++) sum += a2[i];
        compare(ks, "softmax", n, 1, a2, a3, n, 1e-6);
        char name[64];
        snprintf(name, sizeof(name), "%s softmax sums to 1 n=%d", ks->name, n);
        check(fabs(sum - 1.0) < 1e-5, name, "probabilities do not sum to 1");
        if (ks == &kernels_avx512) {
            /* Its softmax is AVX2's bit for bit (the attention kernels use it). */
            memcpy(a3, a1, sizeof(float) * n);
            kernels_avx2.softmax(a3, n);
            snprintf(name, sizeof(name), "avx512 softmax equals avx2's bits n=%d", n);
            check(memcmp(a2, a3, sizeof(float) * n) == 0, name, "bits differ");
        }

        memcpy(a2, a1, sizeof(float) * n);
        memcpy(a3, a1, sizeof(float) * n);
        ks->swiglu(a2, b1, n);
        ref->swiglu(a3, b1, n);
        compare(ks, "swiglu", n, 1, a2, a3, n, 1e-6);

        memcpy(a2, a1, sizeof(float) * n);
        memcpy(a3, a1, sizeof(float) * n);
        ks->add(a2, b1, n);
        ref->add(a3, b1, n);
        compare(ks, "add", n, 1, a2, a3, n, 0);
        free(a1), free(a2), free(a3), free(b1), free(wt);
    }
}

/* matmul_batch: each token's output bit-identical to matmul on that token,
 * at strides wider than a row (the forward pass's), over batches that fill
 * whole register tiles and leave partial ones, and rows that span several
 * of the kernels' row blocks (n = 1030: 60 rows a block). */
static void batch_case(const KernelSet *ks, int n, int d, int batch) {
    int x_stride = n + 3, out_stride = d + 2;
    float *w = malloc(sizeof(float) * n * d), *x = malloc(sizeof(float) * x_stride * batch);
    float *got = malloc(sizeof(float) * out_stride * batch), *want = malloc(sizeof(float) * d * batch);
    fill(w, n * d, 1.0f);
    fill(x, x_stride * batch, 2.0f);
    ks->matmul_batch(got, out_stride, x, x_stride, batch, w, n, d);
    for (int b = 0; b < batch; b++) ks->matmul(want + b * d, x + b * x_stride, w, n, d);
    int same = 1;
    for (int b = 0; b < batch; b++)
        same &= memcmp(got + b * out_stride, want + b * d, sizeof(float) * d) == 0;
    char name[128];
    snprintf(name, sizeof(name), "%s matmul_batch bit-identical to matmul n=%d d=%d batch=%d", ks->name, n, d,
             batch);
    check(same, name, "outputs differ");
    free(w), free(x), free(got), free(want);
}

static void test_batch(const KernelSet *ks) {
    static const int sizes_n[] = {1, 7, 16, 33, 288};
    static const int sizes_d[] = {1, 4, 5, 13};
    for (size_t a = 0; a < sizeof(sizes_n) / sizeof(sizes_n[0]); a++)
        for (size_t c = 0; c < sizeof(sizes_d) / sizeof(sizes_d[0]); c++) {
            batch_case(ks, sizes_n[a], sizes_d[c], 5);
            batch_case(ks, sizes_n[a], sizes_d[c], 13);
        }
    batch_case(ks, 1030, 130, 14);
}

/* Random int8 weights (-128..127) and quantised activations. */
static void q8q_case(const KernelSet *ks, int n, int d, int batch, int gs) {
    Q8qInputs in = q8q_inputs(n, d, batch, gs, random_uniform);
    ks->matmul_q8q(in.got, in.xq, in.xs, batch, in.wq, in.ws, n, d, gs);
    kernels_scalar.matmul_q8q(in.want, in.xq, in.xs, batch, in.wq, in.ws, n, d, gs);
    char name[128], why[128];
    double e = max_error(in.got, in.want, d * batch);
    snprintf(name, sizeof(name), "%s matmul_q8q n=%d d=%d batch=%d gs=%d", ks->name, n, d, batch, gs);
    /* Integer group sums are exact; only the float sum over groups runs in a
     * different order (up to 128 groups with cancellation): 5e-5. */
    snprintf(why, sizeof(why), "max relative error %.3g > 5e-5", e);
    check_plain(e <= 5e-5, name, why);
    if (ks != &kernels_scalar) {
        /* The SIMD sets make each group's integer sum exact and scales it like the
         * reference, group by group: bit-identical. */
        snprintf(name, sizeof(name), "%s matmul_q8q bit-identical to scalar n=%d d=%d batch=%d gs=%d",
                 ks->name, n, d, batch, gs);
        check(memcmp(in.got, in.want, sizeof(float) * d * batch) == 0, name, "outputs differ");
    }
    q8q_inputs_free(&in);
}

static void test_q8q(const KernelSet *ks) {
    static const int sizes_n[] = {16, 32, 48, 96, 160, 288, 2048};
    static const int sizes_d[] = {1, 3, 4, 5, 8, 13, 17}; /* around the 4- and 8-row blocks */
    static const int groups[] = {16, 32, 64, 96};
    for (size_t a = 0; a < sizeof(sizes_n) / sizeof(sizes_n[0]); a++)
        for (size_t c = 0; c < sizeof(sizes_d) / sizeof(sizes_d[0]); c++)
            for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
                if (sizes_n[a] % groups[g] == 0)
                    q8q_case(ks, sizes_n[a], sizes_d[c], c % 2 ? 3 : 1, groups[g]);
    q8q_case(ks, 288, 24, 4, 32); /* several full 8-row blocks, batched */
    q8q_case(ks, 96, 9, 70, 48);  /* prefill gemms: more positions than one pass, rows past the last 4 */
    q8q_case(ks, 768, 8, 16, 48);
    q8q_case(ks, 512, 5, 3, 512); /* a group wider than the SSE2 gemm widens at once */
    q8q_case(ks, 2048, 6, 2, 1024);

    /* Worst case for the int32 sums: every product at its extreme over the
     * largest group; the exact answer is known. */
    int n = 1024, d = 5;
    int8_t *wq = malloc((size_t)n * d);
    int16_t *xq = malloc(sizeof(int16_t) * n);
    float ws[5] = {1, 1, 1, 1, 1}, xs[1] = {1}, out[5];
    for (int i = 0; i < n * d; i++) wq[i] = -128;
    for (int i = 0; i < n; i++) xq[i] = -127;
    ks->matmul_q8q(out, xq, xs, 1, wq, ws, n, d, n);
    int exact = 1;
    for (int i = 0; i < d; i++) exact &= out[i] == 128.0f * 127.0f * 1024.0f;
    char name[96];
    snprintf(name, sizeof(name), "%s matmul_q8q extreme values, group 1024, no overflow", ks->name);
    check(exact, name, "wrong sum");
    free(wq), free(xq);
}

/* attend vs the scalar reference: head sizes with and without vector
 * tails, position counts around the 4-position blocks, rows kv apart. */
static void test_attend(const KernelSet *ks) {
    static const int head_sizes[] = {1, 3, 4, 6, 8, 12, 16, 20, 24, 32, 48, 64, 72};
    static const int positions[] = {1, 2, 3, 4, 5, 7, 8, 9, 33, 256};
    for (size_t a = 0; a < sizeof(head_sizes) / sizeof(head_sizes[0]); a++)
        for (size_t b = 0; b < sizeof(positions) / sizeof(positions[0]); b++) {
            int hs = head_sizes[a], n_pos = positions[b], stride = hs * 3 + 1;
            float *keys = malloc(sizeof(float) * stride * n_pos),
                  *values = malloc(sizeof(float) * stride * n_pos);
            float *q = malloc(sizeof(float) * hs), *att1 = malloc(sizeof(float) * n_pos);
            float *att2 = malloc(sizeof(float) * n_pos), *att3 = malloc(sizeof(float) * n_pos),
                  *got = malloc(sizeof(float) * hs);
            float *want = malloc(sizeof(float) * hs);
            fill(keys, stride * n_pos, 2.0f);
            fill(values, stride * n_pos, 1.0f);
            fill(q, hs, 2.0f);
            float scale = 1.0f / sqrtf((float)hs);
            ks->attend(got, att1, q, keys, values, stride, n_pos, hs, scale);
            kernels_scalar.attend(want, att2, q, keys, values, stride, n_pos, hs, scale);
            compare(ks, "attend out", hs, n_pos, got, want, hs, 2e-6);
            compare(ks, "attend weights", hs, n_pos, att1, att2, n_pos, 1e-6);
            free(keys), free(values), free(q), free(att1), free(att2), free(att3), free(got), free(want);
        }
}

/* attend_f16 / attend_q8_0 / attend_f32 vs the scalar reference, and the scalar
 * reference vs fp32 attend over the same values dequantised: heads at an
 * offset inside rows of three heads, position counts around the 4-key
 * blocks, values including f16 subnormals (SSE2 converts them itself). */
static void test_attend_kv(const KernelSet *ks, uint32_t type) {
    static const int f16_sizes[] = {2, 6, 8, 12, 16, 20, 24, 32, 48, 64, 72, 128};
    static const int q8_sizes[] = {32, 64, 96, 128};
    static const int positions[] = {1, 2, 3, 4, 5, 7, 8, 9, 33, 256};
    int q8 = type == GGML_TYPE_Q8_0;
    int n_sizes = q8 ? 4 : (int)(sizeof f16_sizes / sizeof *f16_sizes);
    double worst_out = 0, worst_att = 0, worst_ref = 0;
    int grouped_same = 1, tiled_same = 1, tiles_run = 0;
    for (int a = 0; a < n_sizes; a++)
        for (size_t b = 0; b < sizeof(positions) / sizeof(positions[0]); b++) {
            int hs = q8 ? q8_sizes[a] : f16_sizes[a], n_pos = positions[b], row = 3 * hs;
            size_t rb = (size_t)kv_row_bytes(type, (uint64_t)row),
                   head = (size_t)kv_row_bytes(type, (uint64_t)hs);
            float *x = malloc(sizeof(float) * row), *deq_k = malloc(sizeof(float) * row * n_pos),
                  *deq_v = malloc(sizeof(float) * row * n_pos);
            uint8_t *keys = malloc(rb * n_pos), *values = malloc(rb * n_pos);
            for (int p = 0; p < n_pos; p++) {
                fill(x, row, 2.0f);
                kv_store_row(type, keys + p * rb, x, row);
                ggml_dequantize_row(type, keys + p * rb, deq_k + (size_t)p * row, row);
                fill(x, row, 1.0f);
                for (int i = 0; i < row; i += 5) x[i] *= 1e-4f; /* below f16's smallest normal */
                kv_store_row(type, values + p * rb, x, row);
                ggml_dequantize_row(type, values + p * rb, deq_v + (size_t)p * row, row);
            }
            float *q = malloc(sizeof(float) * hs), *att1 = malloc(sizeof(float) * n_pos),
                  *att2 = malloc(sizeof(float) * n_pos), *att3 = malloc(sizeof(float) * n_pos),
                  *got = malloc(sizeof(float) * hs), *want = malloc(sizeof(float) * hs),
                  *f32 = malloc(sizeof(float) * hs);
            fill(q, hs, 2.0f);
            float scale = 1.0f / sqrtf((float)hs);
            int is_f32 = type == GGML_TYPE_F32;
            attend_kv_fn *fn = q8 ? ks->attend_q8_0 : is_f32 ? ks->attend_f32 : ks->attend_f16;
            attend_kv_fn *ref = q8       ? kernels_scalar.attend_q8_0
                                : is_f32 ? kernels_scalar.attend_f32
                                         : kernels_scalar.attend_f16;
            fn(got, att1, n_pos, q, 1, keys + head, values + head, rb, n_pos, hs, scale);
            ref(want, att2, n_pos, q, 1, keys + head, values + head, rb, n_pos, hs, scale);
            kernels_scalar.attend(f32, att3, q, deq_k + hs, deq_v + hs, row, n_pos, hs, scale);
            worst_out = fmax(worst_out, max_error(got, want, hs));
            worst_ref = fmax(worst_ref, max_error(want, f32, hs));
            worst_att = fmax(worst_att, max_error(att1, att2, n_pos));
            /* 1..5 query heads on this key/value head (5: a group of four and
             * one): each head's bits as when it runs alone. */
            for (int n_q = 1; n_q <= 5; n_q++) {
                float *qs = malloc(sizeof(float) * hs * n_q), *outs = malloc(sizeof(float) * hs * n_q),
                      *atts = malloc(sizeof(float) * n_pos * n_q);
                fill(qs, hs * n_q, 2.0f);
                fn(outs, atts, n_pos, qs, n_q, keys + head, values + head, rb, n_pos, hs, scale);
                for (int i = 0; i < n_q; i++) {
                    fn(got, att1, n_pos, qs + i * hs, 1, keys + head, values + head, rb, n_pos, hs, scale);
                    grouped_same &= memcmp(got, outs + i * hs, sizeof(float) * hs) == 0 &&
                                    memcmp(att1, atts + i * n_pos, sizeof(float) * n_pos) == 0;
                }
                free(qs), free(outs), free(atts);
            }
            /* A tiled call as a prefill batch makes it: six queries seeing
             * n_pos - 5 .. n_pos positions (at least one), each one's bits
             * as when it runs alone. */
            attend_kv_tile_fn *tile = q8       ? ks->attend_q8_0_tile
                                      : is_f32 ? ks->attend_f32_tile
                                               : ks->attend_f16_tile;
            if (tile) {
                enum { N = 6 };
                float *qs = malloc(sizeof(float) * hs * N), *outs = malloc(sizeof(float) * hs * N),
                      *atts = malloc(sizeof(float) * n_pos * N);
                AttendQuery tq[N];
                fill(qs, hs * N, 2.0f);
                for (int i = 0; i < N; i++)
                    tq[i] = (AttendQuery){qs + i * hs, outs + i * hs, atts + i * n_pos,
                                          n_pos - (N - 1 - i) > 0 ? n_pos - (N - 1 - i) : 1};
                tile(tq, N, keys + head, values + head, rb, hs, scale);
                for (int i = 0; i < N; i++) {
                    fn(got, att1, n_pos, qs + i * hs, 1, keys + head, values + head, rb, tq[i].n_pos, hs,
                       scale);
                    tiled_same &= memcmp(got, outs + i * hs, sizeof(float) * hs) == 0 &&
                                  memcmp(att1, atts + i * n_pos, sizeof(float) * tq[i].n_pos) == 0;
                }
                tiles_run++;
                free(qs), free(outs), free(atts);
            }
            free(x), free(deq_k), free(deq_v), free(keys), free(values);
            free(q), free(att1), free(att2), free(att3), free(got), free(want), free(f32);
        }
    char name[96];
    const char *tn = kv_type_name(type);
    snprintf(name, sizeof name, "%s attend_%s out equals the scalar reference", ks->name, tn);
    check(worst_out <= 2e-6, name, "max relative error %.3g", worst_out);
    snprintf(name, sizeof name, "%s attend_%s weights equal the scalar reference", ks->name, tn);
    check(worst_att <= 1e-6, name, "max relative error %.3g", worst_att);
    snprintf(name, sizeof name, "%s attend_%s: 1-5 query heads at once give each head's bits alone", ks->name,
             tn);
    check_plain(grouped_same, name, "a head differs");
    snprintf(name, sizeof name, "%s attend_%s tile: queries seeing 1-5 fewer positions give their bits alone",
             ks->name, tn);
    check_plain(tiles_run && tiled_same, name, tiles_run ? "a query differs" : "the set has no tiled kernel");
    if (ks == &kernels_scalar) {
        snprintf(name, sizeof name, "scalar attend_%s equals fp32 attend over the dequantised cache", tn);
        check(worst_ref <= 2e-6, name, "max relative error %.3g", worst_ref);
    }
}

/* Writing rows: f16 rounds to nearest even; q8_0 (the active kernel set's
 * store) gives the bytes of the one scalar Q8_0 quantiser, the one whose
 * gguf_convert output test_gguf_convert.py compares with llama-quantize's. */
static void test_kv_store(void) {
    float x[64];
    uint16_t h[4];
    float ties[4] = {1.0f + 1.0f / 2048, 1.0f + 3.0f / 2048, -2.0f, 65504.0f};
    kv_store_row(GGML_TYPE_F16, h, ties, 4);
    check(h[0] == 0x3c00 && h[1] == 0x3c02 && h[2] == 0xc000 && h[3] == 0x7bff, "f16 KV rows round to even",
          "%04x %04x %04x %04x", h[0], h[1], h[2], h[3]);
    /* every other float through the row conversion: tests/host/test_fp16.c */
    int same = 1;
    for (int trial = 0; trial < 50; trial++) {
        BlockQ8_0 got[2], want[2];
        fill(x, 64, trial % 2 ? 3.0f : 0.01f);
        if (trial == 7) memset(x, 0, sizeof x);
        kv_store_row(GGML_TYPE_Q8_0, got, x, 64);
        ggml_quantize_row_q8_0(want, x, 64);
        same &= memcmp(got, want, sizeof got) == 0;
    }
    check(same, "q8_0 KV rows equal the scalar Q8_0 quantiser (llama-quantize's bytes)", "bytes differ");
    check(kv_type_parse("F16") == GGML_TYPE_F16 && kv_type_parse("q8_0") == GGML_TYPE_Q8_0 &&
              kv_type_parse("f32") == GGML_TYPE_F32 && kv_type_parse("bogus") == -1 &&
              kv_type_parse("q4_0") == -1,
          "KV type names", "wrong parse");
}

/* The vector exp behind softmax and SwiGLU: softmax([0, v]) against the
 * double-precision answer over a sweep of v, and extreme inputs. */
static void test_exp(const KernelSet *ks) {
    char name[96], why[128];
    double worst = 0;
    float worst_v = 0;
    for (int i = 0; i <= 20000; i++) {
        float v = -87.0f + 87.0f * (float)i / 20000.0f;
        float x[2] = {0.0f, v};
        ks->softmax(x, 2);
        double ev = exp((double)v), want1 = ev / (1.0 + ev);
        double e = fabs(x[1] - want1) / want1;
        if (!(e <= worst)) worst = e, worst_v = v;
    }
    /* exp within 2 ulp, the sum and the reciprocal each 0.5 ulp: < 4e-7. */
    snprintf(name, sizeof(name), "%s softmax exp accuracy over [-87, 0]", ks->name);
    snprintf(why, sizeof(why), "relative error %.3g at v=%g", worst, worst_v);
    check_plain(worst < 4e-7, name, why);

    float inf = 1.0f / 0.0f;
    float x[9] = {-inf, 0.0f, -1e30f, -200.0f, -104.0f, -88.0f, -87.0f, 1e-30f, -1.0f};
    ks->softmax(x, 9);
    int ok = x[0] == 0.0f && x[2] == 0.0f && x[3] == 0.0f && x[4] == 0.0f;
    for (int i = 0; i < 9; i++) ok &= x[i] == x[i] && x[i] >= 0.0f && x[i] <= 1.0f;
    snprintf(name, sizeof(name), "%s softmax -inf and large negative give 0, no NaN", ks->name);
    check(ok, name, "NaN or nonzero weight");

    float a[8] = {-1e30f, -200.0f, -90.0f, -20.0f, 0.0f, 20.0f, 200.0f, 1e30f};
    float b[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    ks->swiglu(a, b, 8);
    ok = 1;
    for (int i = 0; i < 8; i++) ok &= a[i] == a[i];
    ok &= fabsf(a[0]) < 1e-6f && fabsf(a[1]) < 1e-6f && fabsf(a[2]) < 1e-6f && a[4] == 0.0f;
    ok &= fabsf(a[5] - 20.0f) < 1e-5f && a[6] == 200.0f && a[7] == 1e30f;
    snprintf(name, sizeof(name), "%s swiglu extremes finite and right", ks->name);
    check(ok, name, "NaN or wrong limit");
}

int main(void) {
    /* Spot check the reference itself against hand-computed values. */
    float w[6] = {1, 2, 3, 4, 5, 6}, x[3] = {1, -1, 2}, out[2];
    kernels_scalar.matmul(out, x, w, 3, 2);
    check(out[0] == 5.0f && out[1] == 11.0f, "scalar matmul known values", "expected 5, 11");
    int8_t q[6] = {1, 2, 3, 4, 5, 6};
    float s[3] = {1.0f, 0.5f, 2.0f}; /* groups of 2 straddle the 3-wide rows */
    kernels_scalar.matmul_q8(out, x, q, s, 3, 2, 2);
    check(out[0] == 1 - 2 + 3 && out[1] == 0.5f * 4 - 2 * 5 + 2 * 2 * 6, "scalar matmul_q8 flattened groups",
          "wrong group indexing");

    /* The integer reference against a hand computation: groups of 2... per row. */
    int8_t wq[8] = {1, -2, 3, 4, 5, 6, -7, 8};
    int16_t xq[4] = {10, 20, -30, 40};
    float ws[4] = {1.0f, 0.5f, 2.0f, 0.25f}, xs[2] = {0.1f, 1.0f}, o[2];
    kernels_scalar.matmul_q8q(o, xq, xs, 1, wq, ws, 4, 2, 2);
    /* row 0: 1*0.1*(10-40) + 0.5*1*(-90+160) = -3 + 35; row 1: 2*0.1*(50+120) + 0.25*(210+320) */
    check(fabsf(o[0] - 32.0f) < 1e-4f && fabsf(o[1] - (34.0f + 132.5f)) < 1e-4f,
          "scalar matmul_q8q known values", "expected 32, 166.5");

    test_variant(&kernels_sse2);
    test_attend(&kernels_sse2);
    test_exp(&kernels_sse2);
    test_exp(&kernels_scalar);
    test_batch(&kernels_scalar);
    test_batch(&kernels_sse2);
    test_q8q(&kernels_sse2);
    int widest = isa_widest();
    if (widest >= ISA_AVX2) {
        test_variant(&kernels_avx2);
        test_attend(&kernels_avx2);
        test_exp(&kernels_avx2);
        test_batch(&kernels_avx2);
        test_q8q(&kernels_avx2);
    } else
        check_skipped("avx2 variant", "this CPU has no AVX2+FMA+F16C");
    if (widest >= ISA_AVX512) {
        test_variant(&kernels_avx512);
        test_attend(&kernels_avx512);
        test_exp(&kernels_avx512);
        test_batch(&kernels_avx512);
        test_q8q(&kernels_avx512);
    } else
        check_skipped("avx512 variant", "this CPU has no AVX-512F+BW+VL");
    /* After the others, so their random inputs stay what they were. */
    test_kv_store();
    const KernelSet *const sets[] = {&kernels_scalar, &kernels_sse2, &kernels_avx2, &kernels_avx512};
    for (int i = ISA_SCALAR; i <= widest; i++) {
        test_attend_kv(sets[i], GGML_TYPE_F16);
        test_attend_kv(sets[i], GGML_TYPE_Q8_0);
        test_attend_kv(sets[i], GGML_TYPE_F32);
    }

    /* The one encoding: each isa's table, its name and the parser agree. */
    const char *const names[] = {"scalar", "sse2", "avx2", "avx512"};
    for (int i = ISA_SCALAR; i < ISA_COUNT; i++) {
        char name[96];
        snprintf(name, sizeof name, "kernels_use(%s) makes the %s set active", names[i], names[i]);
        kernels_use(i);
        check(kernels_active() == sets[i] && kernels_of(i) == sets[i] && (int)sets[i]->isa == i &&
                  !strcmp(sets[i]->name, names[i]) && !strcmp(isa_name(i), names[i]) &&
                  isa_parse(names[i]) == i,
              name, "active %s, table %s, parsed %d", kernels_active()->name, sets[i]->name,
              isa_parse(names[i]));
    }
    check(isa_parse("auto") < 0 && isa_parse("AVX2") < 0 && isa_parse("") < 0,
          "isa_parse refuses other names", "accepted one");
    check(kernels_probe(NULL, NULL) == isa_widest(), "without a clock the probe picks the widest set",
          "picked %s", isa_name(kernels_probe(NULL, NULL)));
    kernels_use(ISA_SSE2);
    return failures ? 1 : 0;
}
