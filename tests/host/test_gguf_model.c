/* test_gguf_model.c - GGUF models end to end: logits of every position of
 * tokens.txt against llama.cpp's for synthA (every tensor type) and the
 * qwen2/qwen3 models, both the reference path (weights dequantised to fp32,
 * within 1e-4 of llama.cpp's dequantised-F32 run) and the fast path
 * (activations quantised to int8 blocks, within the activation-quantisation
 * gap of llama.cpp's own run); stories260K.gguf greedy decoding against the
 * golden ids; clear errors for unsupported files. */
#include <string.h>

#include "llm/compute/cpu_features.h"
#include "llm/tensor/ggml_blocks.h"
#include "llm/tensor/ggml_types.h"
#include "llm/format/gguf.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tests/host/llm_test_util.h"
#include "tests/host/ref_logits.h"

static const char *models_dir;
static int tokens[64];

/* dir/tokens.txt into tokens; 0 when it holds 64 ids. */
static int read_tokens(const char *dir) {
    char rel[256];
    snprintf(rel, sizeof rel, "%s/tokens.txt", dir);
    return read_ids_in(models_dir, rel, tokens, 64) == 64 ? 0 : -1;
}

static void compare(Model *t, const char *name, const char *ref_rel, double max_tol, double mean_tol,
                    int min_top1) {
    check_logits(t, name, models_dir, ref_rel, tokens, 64, max_tol, mean_tol, min_top1);
}

/* dir/stem-TYPE.gguf: fast path vs llama.cpp, reference path vs the
 * dequantised-F32 logits (F32: both against .logits.f32). */
static void check_model(const char *dir, const char *stem, const char *type) {
    char rel[256], ref[256], name[256], err[256];
    snprintf(rel, sizeof rel, "%s/%s-%s.gguf", dir, stem, type);
    size_t size;
    void *data = read_file_in(models_dir, rel, &size);
    Model t;
    snprintf(name, sizeof name, "%s-%s loads", stem, type);
    /* llama.cpp's reference runs kept an f32 KV cache (README.md). */
    int rc = data ? model_create(&t, data, size, NULL, err, sizeof err) : -1;
    if (rc == 0) rc = model_set_kv_type(&t, GGML_TYPE_F32, err, sizeof err);
    check(rc == 0, name, "%s", data ? err : "file missing");
    if (rc != 0) {
        free(data);
        return;
    }
    int f32 = strcmp(type, "F32") == 0;
    snprintf(ref, sizeof ref, "%s/%s-%s.logits.f32", dir, stem, type);
    snprintf(name, sizeof name, "%s-%s fast path vs llama.cpp logits", stem, type);
    if (f32)
        compare(&t, name, ref, 1e-4, 1e-4, 64);
    else
        compare(&t, name, ref, 0.7, 0.11, 55);
    if (!f32) {
        model_set_reference(&t, 1);
        snprintf(ref, sizeof ref, "%s/%s-%s.deqf32.logits.f32", dir, stem, type);
        snprintf(name, sizeof name, "%s-%s dequantised path vs llama.cpp dequantised-F32 logits", stem, type);
        compare(&t, name, ref, 1e-4, 1e-4, 64);
    }
    model_destroy(&t);
    free(data);
}

static void test_stories260k_greedy(void) {
    size_t size;
    void *data = read_file_in(models_dir, "stories260K.gguf", &size);
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/golden/stories260K__once_upon_a_time.ids", models_dir);
    FILE *f = fopen(path, "r");
    int ids[256], n = 0;
    while (f && n < 256 && fscanf(f, "%d", &ids[n]) == 1) n++;
    if (f) fclose(f);
    Model t;
    int rc = data ? model_create(&t, data, size, NULL, err, sizeof err) : -1;
    check(rc == 0 && n == 201, "stories260K.gguf loads, golden ids present", "%s", data ? err : "missing");
    if (rc == 0) {
        const ModelConfig *c = &t.config;
        check(c->dim == 64 && c->n_layers == 5 && c->n_heads == 8 && c->n_kv_heads == 4 &&
                  c->vocab_size == 512,
              "stories260K.gguf config", "dim %d layers %d heads %d/%d vocab %d", c->dim, c->n_layers,
              c->n_heads, c->n_kv_heads, c->vocab_size);
        int token = ids[0], pos;
        for (pos = 0; pos + 1 < n; pos++) {
            int next = argmax(model_forward(&t, token, pos), c->vocab_size);
            if (next != ids[pos + 1]) break;
            token = next;
        }
        check(pos == n - 1, "stories260K.gguf greedy 200 tokens equal the golden ids", "first mismatch at %d",
              pos);
        /* Prefill must leave the same state as single steps. */
        float last[512];
        memcpy(last, model_forward(&t, ids[20], 20), sizeof last);
        check(model_prefill(&t, ids, 21, 0) == 0 && memcmp(last, model_logits(&t), sizeof last) == 0,
              "stories260K.gguf prefill equals forward", "logits differ");
        model_destroy(&t);
    }
    free(data);
}

static void test_other_files(void) {
    size_t size;
    char err[256] = "";
    Model t;
    void *data = read_file_in(models_dir, "llama-2-tiny-random.gguf", &size);
    int rc = data ? model_create(&t, data, size, NULL, err, sizeof err) : -1;
    check(rc == 0, "llama-2-tiny-random.gguf (F16) loads", "%s", err);
    if (rc == 0) {
        int finite = 1;
        for (int pos = 0; pos < 4; pos++) {
            const float *l = model_forward(&t, 1 + pos, pos);
            for (int i = 0; i < t.config.vocab_size; i++)
                finite &= l[i] == l[i] && l[i] < 1e30f && l[i] > -1e30f;
        }
        check(finite, "llama-2-tiny-random.gguf runs with finite logits", "non-finite logits");
        model_destroy(&t);
    }
    free(data);

    data = read_file_in(models_dir, "tinyllamas-stories-260k-q8_0.gguf", &size);
    rc = data ? model_create(&t, data, size, NULL, err, sizeof err) : 0;
    check(rc == -1 && strstr(err, "not a multiple of the Q8_0 block"),
          "flattened 172-wide Q8_0 rows rejected", "rc %d err '%s'", rc, err);
    free(data);

    /* blk.0.attn_q.weight retyped to 16 (IQ2_XXS, not supported). */
    data = read_file_in(models_dir, "gguf-tests/synthA-Q4_0.gguf", &size);
    GgufFile f;
    if (data && gguf_create(&f, data, size, err, sizeof err) == 0) {
        const GgufTensorInfo *ti = gguf_find_tensor(&f, "blk.0.attn_q.weight");
        uint8_t *type_field = (uint8_t *)ti->name.ptr + ti->name.len + 4 + 8 * ti->n_dims;
        gguf_destroy(&f);
        type_field[0] = 16;
        rc = model_create(&t, data, size, NULL, err, sizeof err);
        check(rc == -1 && strstr(err, "tensor blk.0.attn_q.weight has unsupported type"),
              "unsupported tensor type named in the error", "rc %d err '%s'", rc, err);
    } else {
        check(0, "unsupported tensor type named in the error", "synthA-Q4_0.gguf: %s", err);
    }
    free(data);
}

/* The SIMD kernels' inline half-to-float for block scales: every finite
 * half, subnormals included (small k-quant scales are subnormal), equals
 * the reference conversion bit for bit. */
static void test_half_scale(void) {
    int bad = -1;
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00) continue; /* inf/nan: never a sane scale */
        float got = half_scale((uint16_t)h), want = ggml_fp16_to_fp32((uint16_t)h);
        if (memcmp(&got, &want, sizeof got) != 0 && bad < 0) bad = (int)h;
    }
    check(bad < 0, "half_scale equals ggml_fp16_to_fp32 on every finite half", "differs at 0x%04x", bad);
}

/* SIMD dot products against the scalar ones on random blocks. */
static void test_simd_dots(void) {
    static const uint32_t types[] = {GGML_TYPE_F16,  GGML_TYPE_Q8_0, GGML_TYPE_Q4_0, GGML_TYPE_Q4_K,
                                     GGML_TYPE_Q6_K, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                                     GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q5_K, GGML_TYPE_BF16};
    enum { NTYPES = sizeof types / sizeof *types };
    enum { N = 512 };
    static uint8_t row[N * 4];
    static float x[N];
    static BlockQ8A xa[N / 32];
    static BlockQ8K xk[N / 256];
    uint64_t state = 88172645463325252ull;
    int has_avx2 = gguf_top_level() >= ISA_AVX2, has_avx512 = gguf_top_level() >= ISA_AVX512;
    static const char *const variant_names[] = {"SSE2", "AVX2", "AVX512"};
    if (!has_avx2) check_skipped("AVX2 variant matmuls", "this CPU has no AVX2+FMA+F16C");
    if (!has_avx512) check_skipped("AVX512 variant matmuls", "this CPU has no AVX-512 VNNI");
    for (int t = 0; t < NTYPES; t++) {
        for (int variant = 0; variant < 3; variant++) {
            if (variant == 1 && !has_avx2) continue;
            if (variant == 2 &&
                (!has_avx512 || ggml_matmul_of(types[t], ISA_AVX512) == ggml_matmul_of(types[t], ISA_AVX2)))
                continue;
            double worst = 0;
            for (int trial = 0; trial < 20; trial++) {
                const GgmlTypeInfo *ti = ggml_type_info(types[t]);
                size_t bytes = (size_t)ggml_row_bytes(types[t], N);
                for (size_t i = 0; i < bytes; i++) {
                    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
                    row[i] = (uint8_t)state;
                }
                /* Sane half-precision scales (or weights) where the block holds them. */
                for (size_t b = 0; b < bytes / ti->block_bytes; b++) {
                    uint8_t *blk = row + b * ti->block_bytes;
                    uint16_t h = ggml_fp32_to_fp16(0.01f + 0.001f * (float)(b % 7));
                    uint32_t ty = types[t];
                    if (ty == GGML_TYPE_F16) {
                        uint16_t v = ggml_fp32_to_fp16((float)((int)(blk[0] ^ blk[1]) - 128) / 64.0f);
                        memcpy(blk, &v, 2);
                    } else if (ty == GGML_TYPE_BF16) {
                        float f = (float)((int)(blk[0] ^ blk[1]) - 128) / 64.0f;
                        uint32_t bits;
                        memcpy(&bits, &f, 4);
                        uint16_t v = (uint16_t)(bits >> 16);
                        memcpy(blk, &v, 2);
                    } else if (ty == GGML_TYPE_Q6_K) {
                        memcpy(blk + 208, &h, 2);
                    } else if (ty == GGML_TYPE_Q3_K) {
                        memcpy(blk + 108, &h, 2);
                    } else if (ty == GGML_TYPE_Q2_K) {
                        memcpy(blk + 80, &h, 2);
                        memcpy(blk + 82, &h, 2);
                    } else {
                        memcpy(blk, &h, 2);
                        if (ty == GGML_TYPE_Q4_K || ty == GGML_TYPE_Q5_K || ty == GGML_TYPE_Q4_1 ||
                            ty == GGML_TYPE_Q5_1)
                            memcpy(blk + 2, &h, 2);
                    }
                }
                for (int i = 0; i < N; i++) {
                    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
                    x[i] = (float)((int)(state % 2001) - 1000) / 500.0f;
                }
                const void *act = x;
                if (ti->act == ACT_Q8A) ggml_quantize_act_q8a(xa, x, N), act = xa;
                if (ti->act == ACT_Q8K) ggml_quantize_act_q8k(xk, x, N), act = xk;
                float ref = ggml_vec_dot_scalar(types[t])(row, act, N);
                float got = ggml_vec_dot_of(types[t], ISA_SSE2 + variant)(row, act, N);
                double rel = (got - ref) / (1.0 + (ref > 0 ? ref : -ref));
                if (rel < 0) rel = -rel;
                if (!(rel <= worst)) worst = rel;
            }
            char name[64];
            snprintf(name, sizeof name, "%s %s dot equals scalar", variant_names[variant],
                     ggml_type_name(types[t]));
            check(worst < 1e-5, name, "relative difference %.3g", worst);
            /* The multi-row matmul: every row (in a group or one of the
             * short tail) bit-identical to the dot of the same variant.
             * Rows differ (the row's blocks rotated), so a kernel mixing
             * up rows fails. */
            ggml_matmul_fn matmul = ggml_matmul_of(types[t], ISA_SSE2 + variant);
            if (matmul) {
                enum { ROWS = 37 }; /* full 8- and 16-row groups and short tails */
                static uint8_t rows[ROWS * N * 4];
                const GgmlTypeInfo *ti = ggml_type_info(types[t]);
                size_t bytes = (size_t)ggml_row_bytes(types[t], N), bb = ti->block_bytes, nb = bytes / bb;
                for (int r = 0; r < ROWS; r++)
                    for (size_t b = 0; b < nb; b++)
                        memcpy(rows + r * bytes + b * bb, row + ((b + r) % nb) * bb, bb);
                const void *act = ti->act == ACT_Q8A   ? (const void *)xa
                                  : ti->act == ACT_Q8K ? (const void *)xk
                                                       : (const void *)x; /* F16, BF16: fp32 */
                float out[ROWS];
                matmul(out, rows, bytes, act, N, ROWS);
                int same = 1, bad = 0;
                float want = 0;
                for (int r = ROWS - 1; r >= 0; r--) {
                    float w = ggml_vec_dot_of(types[t], ISA_SSE2 + variant)(rows + r * bytes, act, N);
                    if (memcmp(&out[r], &w, sizeof w) != 0) same = 0, bad = r, want = w;
                }
                snprintf(name, sizeof name, "%s %s matmul rows equal its dot", variant_names[variant],
                         ggml_type_name(types[t]));
                check(same, name, "row %d: %g, dot %g", bad, out[bad], want);
            }
        }
    }
}

/* The kernel sets' activation quantisers give the scalar bytes exactly:
 * random values, exact rounding ties (x / d = k + 0.5 in both directions),
 * zero blocks, tiny and huge values, and a largest magnitude met twice
 * with both signs (Q8K keeps the first). */
static void test_act_quantizers(void) {
    enum { N = 4 * QK_K };
    static float x[N];
    static BlockQ8A want_a[N / QK32], got_a[N / QK32];
    static BlockQ8K want_k[N / QK_K], got_k[N / QK_K];
    int top = gguf_top_level();
    if (top < ISA_AVX512) printf("note: no AVX-512 VNNI here, only the scalar quantisers are compared\n");
    for (int level = ISA_SSE2; level <= top; level++) {
        kernels_use(level);
        uint64_t state = 0x2545F4914F6CDD1Dull;
        int same_a = 1, same_k = 1;
        for (int round = 0; round < 200; round++) {
            for (int i = 0; i < N; i++) {
                state ^= state << 13, state ^= state >> 7, state ^= state << 17;
                int kind = round % 5;
                float r = (float)((int)(state % 20001) - 10000) / 1000.0f;
                x[i] = kind == 0             ? r
                       : kind == 1           ? (float)((int)(state % 255) - 127) + (i & 1 ? 0.5f : -0.5f)
                       : kind == 2           ? r * 1e-30f
                       : kind == 3           ? r * 1e30f
                       : (i / QK32) % 3 == 0 ? 0.0f
                                             : r;
            }
            if (round % 5 == 1)
                for (int b = 0; b < N / QK32; b++)
                    x[b * QK32] = b & 1 ? 127.0f : -127.0f, x[b * QK32 + 5] = 127.0f;
            ggml_quantize_act_q8a(want_a, x, N);
            ggml_act_quantizer_best(ACT_Q8A)(got_a, x, N);
            ggml_quantize_act_q8k(want_k, x, N);
            ggml_act_quantizer_best(ACT_Q8K)(got_k, x, N);
            same_a &= memcmp(want_a, got_a, sizeof want_a) == 0;
            same_k &= memcmp(want_k, got_k, sizeof want_k) == 0;
        }
        char name[96];
        snprintf(name, sizeof name, "%s Q8A activation quantiser gives the scalar bytes",
                 kernels_active()->name);
        check(same_a, name, "bytes differ");
        snprintf(name, sizeof name, "%s Q8K activation quantiser gives the scalar bytes",
                 kernels_active()->name);
        check(same_k, name, "bytes differ");
    }
    kernels_use(ISA_SSE2);
}

/* Batched prefill (GGUF_PREFILL_BATCH positions per pass over the weights)
 * against one position at a time: the last logits and the next position's
 * (so the KV cache too) bit for bit, for a prompt of two full batches and a
 * partial one, on every matmul path (typed row kernels of each kernel set,
 * per-row dots for F16, F32 weights, mixed types, biases, q/k norms) and
 * every KV cache type (synthA's head size, 16, takes no q8_0 cache). */
static void test_prefill_matches_forward(void) {
    static const char *const files[] = {
        "gguf-tests/synthA-Q4_K_M.gguf",  "gguf-tests/synthA-Q8_0.gguf",   "gguf-tests/synthA-Q4_0.gguf",
        "gguf-tests/synthA-F16.gguf",     "gguf-tests/synthA-F32.gguf",    "gguf-arch/qwen2-Q8_0.gguf",
        "gguf-arch/qwen3-tied-Q4_K.gguf", "gguf-arch2/qwen3moe-Q4_K.gguf", "gguf-arch2/qwen3moe-Q8_0.gguf"};
    enum { PROMPT = 2 * GGUF_PREFILL_BATCH + 5 };
    int top = gguf_top_level();
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        size_t size;
        void *data = read_file_in(models_dir, files[f], &size);
        for (int run = 0; run < 3 * (top - ISA_SSE2 + 1) && data; run++) {
            int level = ISA_SSE2 + run / 3;
            uint32_t kv = (const uint32_t[]){GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0}[run % 3];
            if (kv == GGML_TYPE_Q8_0 && strncmp(files[f], "gguf-arch", 9) != 0) continue;
            kernels_use(level);
            Model a, b;
            char err[256], name[160];
            snprintf(name, sizeof name, "%s, %s kernels, %s KV: prefill of %d equals %d single positions",
                     files[f], kernels_active()->name, kv_type_name(kv), PROMPT, PROMPT);
            if (model_create(&a, data, size, NULL, err, sizeof err) != 0 ||
                model_create(&b, data, size, NULL, err, sizeof err) != 0) {
                check(0, name, "%s", err);
                break;
            }
            if (model_set_kv_type(&a, kv, err, sizeof err) || model_set_kv_type(&b, kv, err, sizeof err))
                check(0, name, "%s", err);
            int vocab = a.config.vocab_size, ids[PROMPT];
            for (int i = 0; i < PROMPT; i++) ids[i] = tokens[i] % vocab;
            float *last = malloc(2 * (size_t)vocab * sizeof(float));
            int same = model_prefill(&a, ids, PROMPT, 0) == 0;
            memcpy(last, model_logits(&a), (size_t)vocab * sizeof(float));
            memcpy(last + vocab, model_forward(&a, ids[0], PROMPT), (size_t)vocab * sizeof(float));
            const float *one = NULL;
            for (int i = 0; i < PROMPT; i++) one = model_forward(&b, ids[i], i);
            same &= memcmp(one, last, (size_t)vocab * sizeof(float)) == 0;
            same &=
                memcmp(model_forward(&b, ids[0], PROMPT), last + vocab, (size_t)vocab * sizeof(float)) == 0;
            check(same, name, "logits differ");
            free(last);
            model_destroy(&a);
            model_destroy(&b);
        }
        if (!data) check(0, files[f], "missing");
        free(data);
    }
    kernels_use(ISA_SSE2);
}

int main(int argc, char **argv) {
    models_dir = models_dir_from_env();
    if (read_tokens("gguf-tests") != 0 || read_tokens("gguf-arch") != 0) {
        printf("SKIP: GGUF test data missing (%s/gguf-tests, %s/gguf-arch)\n", models_dir, models_dir);
        return 77;
    }
    read_tokens("gguf-tests");
    /* A single model or type from the command line (for quick runs). */
    if (argc == 3) {
        check_model("gguf-tests", argv[1], argv[2]);
        return failures ? 1 : 0;
    }
    static const char *const synth_types[] = {"F32",  "F16",  "BF16", "Q8_0",   "Q4_0",
                                              "Q4_1", "Q5_0", "Q5_1", "Q2_K",   "Q3_K",
                                              "Q4_K", "Q5_K", "Q6_K", "Q4_K_M", "Q5_K_M"};
    for (size_t i = 0; i < sizeof synth_types / sizeof *synth_types; i++)
        check_model("gguf-tests", "synthA", synth_types[i]);
    /* The fast path again with the AVX2 and AVX-512 kernel sets for the SIMD types. */
    for (int level = ISA_AVX2; level <= gguf_top_level(); level++) {
        static const char *const simd_types[] = {"F16",  "BF16", "Q8_0", "Q4_0", "Q4_1", "Q5_0",   "Q5_1",
                                                 "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q4_K_M", "Q5_K_M"};
        kernels_use(level);
        for (size_t i = 0; i < sizeof simd_types / sizeof *simd_types; i++) {
            char rel[256], ref[256], name[256], err[256];
            snprintf(rel, sizeof rel, "gguf-tests/synthA-%s.gguf", simd_types[i]);
            snprintf(ref, sizeof ref, "gguf-tests/synthA-%s.logits.f32", simd_types[i]);
            size_t size;
            void *data = read_file_in(models_dir, rel, &size);
            Model t;
            snprintf(name, sizeof name, "synthA-%s fast path (%s kernels) vs llama.cpp logits", simd_types[i],
                     level == ISA_AVX512 ? "AVX-512" : "AVX2");
            if (data && model_create(&t, data, size, NULL, err, sizeof err) == 0 &&
                model_set_kv_type(&t, GGML_TYPE_F32, err, sizeof err) == 0) {
                compare(&t, name, ref, 0.7, 0.11, 55);
                model_destroy(&t);
            } else {
                check(0, name, "cannot load %s", rel);
            }
            free(data);
        }
        kernels_use(ISA_SSE2);
    }
    read_tokens("gguf-arch");
    static const char *const qwen[] = {"qwen2", "qwen3-tied", "qwen3-untied"};
    static const char *const qwen_types[] = {"F32", "Q8_0", "Q4_K"};
    for (int m = 0; m < 3; m++)
        for (int i = 0; i < 3; i++) check_model("gguf-arch", qwen[m], qwen_types[i]);
    test_half_scale();
    test_simd_dots();
    test_act_quantizers();
    test_prefill_matches_forward();
    test_stories260k_greedy();
    test_other_files();
    return failures ? 1 : 0;
}
