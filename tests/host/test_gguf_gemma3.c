/* test_gguf_gemma3.c - the gemma3 architecture against llama.cpp
 * (../shared/models/gguf-arch2/README.md): the logits of all 64 positions of
 * gemma3.tokens.txt for the F32, Q8_0 and Q4_K files within the README's
 * tolerances, llama.cpp's greedy continuation after a batched prefill,
 * prefill equal to single positions over the sliding-window ring, each
 * special feature shown to matter (switched off, the check fails), the KV
 * cache bounded by the window, and bad files refused with their reason. */
#include <string.h>

#include "lib/math.h"
#include "llm/tensor/ggml_types.h"
#include "llm/model/gguf_model.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model_estimate.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tests/host/gguf_layout.h"
#include "tests/host/llm_test_util.h"
#include "tests/host/ref_logits.h"

#define DIR "gguf-arch2"
#define N_POS 64

static const char *models_dir;
static int tokens[N_POS];

static int read_ids(const char *rel, int *ids, int cap) {
    return read_ids_in(models_dir, rel, ids, cap);
}

/* Runs the 64 tokens one position at a time against a reference logits file. */
static int diff_logits(Model *t, const char *ref_rel, LogitsDiff *d) {
    return logits_diff(t, models_dir, ref_rel, tokens, N_POS, d);
}

static void compare(Model *t, const char *name, const char *ref_rel, double max_tol, double mean_tol,
                    int min_top1) {
    check_logits(t, name, models_dir, ref_rel, tokens, N_POS, max_tol, mean_tol, min_top1);
}

/* A model from bytes with llama.cpp's f32 KV cache (its reference runs). */
static int load(Model *t, const void *data, size_t size, char *err, size_t n) {
    if (model_create(t, data, size, NULL, err, n) != 0) return -1;
    if (model_set_kv_type(t, GGML_TYPE_F32, err, n) != 0) {
        model_destroy(t);
        return -1;
    }
    return 0;
}

/* llama.cpp's free-running continuation after the 64 tokens, the prompt
 * going through the batched prefill (four batches over the ring). */
static void check_continuation(Model *t, const char *type) {
    char rel[128], name[160];
    int want[16];
    snprintf(rel, sizeof rel, DIR "/gemma3-%s.continuation.txt", type);
    snprintf(name, sizeof name, "gemma3-%s: greedy continuation after a batched prefill equals llama.cpp's",
             type);
    if (read_ids(rel, want, 16) != 16) {
        check(0, name, "%s missing", rel);
        return;
    }
    model_prefill(t, tokens, N_POS, 0);
    int got[16], same = 1;
    for (int i = 0; i < 16; i++) {
        got[i] = argmax(model_logits(t), t->config.vocab_size);
        same &= got[i] == want[i];
        if (i < 15) model_forward(t, got[i], N_POS + i);
    }
    check(same, name, "got %d %d %d ... %d, want %d %d %d ... %d", got[0], got[1], got[2], got[15], want[0],
          want[1], want[2], want[15]);
}

/* Fast path against llama.cpp's own run, reference path against its run on
 * the dequantised weights with exact GELU, then the continuation. */
static void check_file(const char *type) {
    char rel[128], ref[128], name[160], err[256];
    snprintf(rel, sizeof rel, DIR "/gemma3-%s.gguf", type);
    size_t size;
    void *data = read_file_in(models_dir, rel, &size);
    Model t;
    snprintf(name, sizeof name, "gemma3-%s loads", type);
    int rc = data ? load(&t, data, size, err, sizeof err) : -1;
    check(rc == 0, name, "%s", data ? err : "file missing");
    if (rc != 0) {
        free(data);
        return;
    }
    int f32 = strcmp(type, "F32") == 0;
    if (f32) {
        compare(&t, "gemma3-F32 vs llama.cpp with exact GELU", DIR "/gemma3-F32.exactgelu.logits.f32", 1e-4,
                1e-4, 64);
        compare(&t, "gemma3-F32 vs stock llama.cpp (fp16 GELU table)", DIR "/gemma3-F32.logits.f32", 3e-3,
                4e-4, 64);
    } else {
        snprintf(ref, sizeof ref, DIR "/gemma3-%s.logits.f32", type);
        snprintf(name, sizeof name, "gemma3-%s fast path (%s kernels) vs llama.cpp", type,
                 kernels_active()->name);
        compare(&t, name, ref, 0.15, 0.03, 55);
        model_set_reference(&t, 1);
        snprintf(ref, sizeof ref, DIR "/gemma3-%s.deqf32.exactgelu.logits.f32", type);
        snprintf(name, sizeof name, "gemma3-%s dequantised path vs llama.cpp dequantised-F32 exact GELU",
                 type);
        compare(&t, name, ref, 1e-4, 1e-4, 64);
        model_set_reference(&t, 0);
    }
    check_continuation(&t, type);
    model_destroy(&t);
    free(data);
}

/* Prefill (batches of 16 over a ring of 31 positions) gives the same bits as
 * one position at a time, for every KV type and kernel set. */
static void test_prefill_matches_forward(const void *data, size_t size) {
    int top = isa_widest();
    for (int level = ISA_SSE2; level <= top; level++) {
        kernels_use(level);
        for (int k = 0; k < 3; k++) {
            uint32_t kv = (const uint32_t[]){GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0}[k];
            Model a, b;
            char err[256], name[160];
            snprintf(name, sizeof name,
                     "gemma3-Q8_0, %s kernels, %s KV: prefill of 64 equals single positions",
                     kernels_active()->name, kv_type_name(kv));
            if (model_create(&a, data, size, NULL, err, sizeof err) ||
                model_create(&b, data, size, NULL, err, sizeof err)) {
                check(0, name, "%s", err);
                continue;
            }
            model_set_kv_type(&a, kv, err, sizeof err);
            model_set_kv_type(&b, kv, err, sizeof err);
            int vocab = a.config.vocab_size;
            model_prefill(&a, tokens, N_POS, 0);
            const float *one = NULL;
            for (int i = 0; i < N_POS; i++) one = model_forward(&b, tokens[i], i);
            int same = memcmp(one, model_logits(&a), (size_t)vocab * sizeof(float)) == 0;
            same &= memcmp(model_forward(&a, 7, N_POS), model_forward(&b, 7, N_POS),
                           (size_t)vocab * sizeof(float)) == 0;
            check(same, name, "logits differ");
            model_destroy(&a);
            model_destroy(&b);
        }
    }
    kernels_use(ISA_SSE2);
}

/* ------------------------------------------- each feature switched off */

/* The F32 model with one feature switched off must miss the exact-GELU
 * logits by far more than the 1e-4 tolerance. */
static void expect_fails(Model *t, const char *what) {
    char name[160];
    LogitsDiff d;
    snprintf(name, sizeof name, "feature matters: %s -> the logits check fails", what);
    if (diff_logits(t, DIR "/gemma3-F32.exactgelu.logits.f32", &d)) {
        check(0, name, "reference missing");
        return;
    }
    check(d.max > 1e-2, name, "max %.3g mean %.3g top1 %d/64: still within tolerance", d.max, d.mean, d.top1);
}

typedef void poke_fn(GgufModel *m);
static void no_embed_scale(GgufModel *m) {
    m->embed_scale = 1.0f;
}
static void no_qk_norm(GgufModel *m) {
    for (int l = 0; l < m->config.n_layers; l++) m->layers[l].q_norm.data = m->layers[l].k_norm.data = NULL;
}
static void no_post_norms(GgufModel *m) {
    for (int l = 0; l < m->config.n_layers; l++)
        m->layers[l].post_attn_norm.data = m->layers[l].post_ffn_norm.data = NULL;
}
static void silu_not_gelu(GgufModel *m) {
    m->ffn_gelu = 0;
}
static void scale_by_dim_over_heads(GgufModel *m) {
    m->attn_scale = 1.0f / sqrtf((float)(m->config.dim / m->config.n_heads));
}
static void last_layer_local(GgufModel *m) {
    m->layers[m->config.n_layers - 1].local = 1; /* it keeps every position: no ring to change */
}
static void neox_off(GgufModel *m) {
    m->rope_neox = 0;
}

/* The file with one metadata key set (added when absent), as llama.cpp's
 * sanity checks did. NULL when it cannot be made. */
static uint8_t *with_key(const GgufLayout *L, const char *key, uint32_t type, const void *value,
                         size_t *size) {
    GgufEdit e = {key, GGUF_EDIT_SET, type, value, 4};
    return gguf_layout_rebuild(L, &e, 1, size);
}

static void test_features(const void *data, size_t size) {
    static const struct {
        const char *what;
        poke_fn *poke;
    } pokes[] = {
        {"input embedding not scaled by sqrt(dim)", no_embed_scale},
        {"no q/k head norms", no_qk_norm},
        {"no post-attention / post-FFN norms", no_post_norms},
        {"SiLU instead of tanh GELU", silu_not_gelu},
        {"attention scale 1/sqrt(dim/heads) instead of 1/sqrt(key_length)", scale_by_dim_over_heads},
        {"no global layer (layer 5 local)", last_layer_local},
        {"RoPE on adjacent pairs instead of NeoX halves", neox_off},
    };
    char err[256];
    for (size_t i = 0; i < sizeof pokes / sizeof *pokes; i++) {
        Model t;
        if (load(&t, data, size, err, sizeof err)) {
            check(0, pokes[i].what, "%s", err);
            continue;
        }
        pokes[i].poke(gguf_model_of(&t));
        expect_fails(&t, pokes[i].what);
        model_destroy(&t);
    }
    /* Metadata variants (the README's sanity checks). */
    GgufLayout L;
    char path[1024];
    snprintf(path, sizeof path, "%s/" DIR "/gemma3-F32.gguf", models_dir);
    if (gguf_layout_read(&L, path, err, sizeof err)) {
        check(0, "gemma3 metadata variants", "%s", err);
        return;
    }
    static const struct {
        const char *what, *key;
        uint32_t type, u;
        float f;
        int must_fail;
    } variants[] = {
        {"window removed (sliding_window = context 128)", "gemma3.attention.sliding_window", GGUF_TYPE_UINT32,
         128, 0, 1},
        {"no sliding window at all (sliding_window = 0)", "gemma3.attention.sliding_window", GGUF_TYPE_UINT32,
         0, 0, 1},
        {"window one larger (17)", "gemma3.attention.sliding_window", GGUF_TYPE_UINT32, 17, 0, 1},
        {"local layers with the global RoPE base", "gemma3.rope.freq_base_swa", GGUF_TYPE_FLOAT32, 0, 1e6f,
         1},
        {"sliding_window_pattern 7 (no global layer)", "gemma3.attention.sliding_window_pattern",
         GGUF_TYPE_UINT32, 7, 0, 1},
        {"sliding_window_pattern 3", "gemma3.attention.sliding_window_pattern", GGUF_TYPE_UINT32, 3, 0, 1},
        {"explicit sliding_window_pattern 6 (the default)", "gemma3.attention.sliding_window_pattern",
         GGUF_TYPE_UINT32, 6, 0, 0},
    };
    for (size_t i = 0; i < sizeof variants / sizeof *variants; i++) {
        size_t n;
        uint8_t *file = variants[i].type == GGUF_TYPE_UINT32
                            ? with_key(&L, variants[i].key, GGUF_TYPE_UINT32, &variants[i].u, &n)
                            : with_key(&L, variants[i].key, GGUF_TYPE_FLOAT32, &variants[i].f, &n);
        Model t;
        if (load(&t, file, n, err, sizeof err)) {
            check(0, variants[i].what, "%s", err);
        } else if (variants[i].must_fail) {
            expect_fails(&t, variants[i].what);
            model_destroy(&t);
        } else {
            compare(&t, variants[i].what, DIR "/gemma3-F32.exactgelu.logits.f32", 1e-4, 1e-4, 64);
            model_destroy(&t);
        }
        free(file);
    }
    /* Softcapping, when present, is applied: c * tanh(logits / c) of the uncapped logits. */
    const float cap = 1.5f;
    size_t n;
    uint8_t *file = with_key(&L, "gemma3.final_logit_softcapping", GGUF_TYPE_FLOAT32, &cap, &n);
    Model plain, capped;
    if (load(&plain, data, size, err, sizeof err) == 0 && load(&capped, file, n, err, sizeof err) == 0) {
        int vocab = plain.config.vocab_size;
        double worst = 0, moved = 0;
        for (int pos = 0; pos < 8; pos++) {
            const float *a = model_forward(&plain, tokens[pos], pos);
            const float *b = model_forward(&capped, tokens[pos], pos);
            for (int i = 0; i < vocab; i++) {
                double e = fabs((double)b[i] - cap * tanhf(a[i] / cap)), m = fabs((double)b[i] - a[i]);
                worst = e > worst ? e : worst;
                moved = m > moved ? m : moved;
            }
        }
        check(worst < 1e-5 && moved > 0.1, "final_logit_softcapping 1.5 gives 1.5 tanh(logits / 1.5)",
              "worst %.3g, moved %.3g", worst, moved);
        model_destroy(&plain);
        model_destroy(&capped);
    } else {
        check(0, "final_logit_softcapping", "%s", err);
    }
    free(file);
    gguf_layout_free(&L);
}

/* ------------------------------------------------------ memory, bad input */

static void test_memory(const void *data, size_t size) {
    char err[256];
    Model t;
    if (load(&t, data, size, err, sizeof err)) {
        check(0, "gemma3 memory", "%s", err);
        return;
    }
    ModelShape shape;
    int rc = model_shape_read(&shape, data, size);
    shape.kv_type = GGML_TYPE_F32;
    /* 5 local layers of a ring of 16 + 63 (a prefill batch of up to GGUF_PREFILL_WINDOW_MAX = 64 rows) plus
     * 15 mirrored slots, 1 global of 128; one kv head of 128 floats, keys and values. */
    uint64_t want = 2 * (5 * 94 + 128) * 128 * 4;
    check(rc == 0 && model_kv_bytes(&t) == want && model_shape_kv_bytes(&shape, 128) == want,
          "gemma3 ctx 128: local layers keep a ring of 79 positions (+15 mirrored), KV cache 598 rows",
          "model %llu, estimate %llu, want %llu", (unsigned long long)model_kv_bytes(&t),
          (unsigned long long)model_shape_kv_bytes(&shape, 128), (unsigned long long)want);
    check(model_shape_state_bytes(&shape, 128) == model_state_bytes(&t), "gemma3: estimate equals the load",
          "estimate %llu, load %llu", (unsigned long long)model_shape_state_bytes(&shape, 128),
          (unsigned long long)model_state_bytes(&t));
    char details[256];
    gguf_model_arch_details(gguf_model_of(&t), details, sizeof details);
    check(strstr(details, "sliding window 16 on 5 of 6 layers (pattern 6)") &&
              strstr(details, "head_dim 128"),
          "gemma3 details name window, pattern and head_dim", "%s", details);
    model_destroy(&t);
    /* The Gemma 3 1B shape at ctx 8192: 22 local layers hold 512 + 63 + 511 positions, 4 global 8192. */
    /* (the KV cache depends on these fields alone) */
    ModelShape g1b = {.runtime = MODEL_RUNTIME_GGUF,
                      .layers = 26,
                      .kv_dim = 256,
                      .head_size = 256,
                      .kv_type = GGML_TYPE_F16};
    g1b.swa_window = 512, g1b.swa_pattern = 6;
    uint64_t bounded = model_shape_kv_bytes(&g1b, 8192);
    g1b.swa_window = 0;
    uint64_t full = model_shape_kv_bytes(&g1b, 8192);
    check(bounded == 2 * (22ull * 1086 + 4 * 8192) * 256 * 2,
          "Gemma 3 1B shape, ctx 8192: f16 KV cache bounded", "%.1f MiB with the window vs %.1f MiB without",
          bounded / 1048576.0, full / 1048576.0);
    printf("# Gemma 3 1B shape at ctx 8192, f16 KV cache: %.1f MiB (every layer full: %.1f MiB)\n",
           bounded / 1048576.0, full / 1048576.0);
}

static void expect_refused(const uint8_t *file, size_t n, const char *what, const char *reason) {
    char err[256] = "", name[200];
    Model t;
    snprintf(name, sizeof name, "refused: %s", what);
    int rc = model_create(&t, file, n, NULL, err, sizeof err);
    if (rc == 0) model_destroy(&t);
    check(rc != 0 && strstr(err, reason) && !strchr(err, '\n'), name, "rc %d, reason \"%s\"", rc, err);
}

static void test_bad_input(void) {
    GgufLayout L;
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/" DIR "/gemma3-Q4_K.gguf", models_dir);
    if (gguf_layout_read(&L, path, err, sizeof err)) {
        check(0, "gemma3 bad input", "%s", err);
        return;
    }
    uint32_t big = 129;
    size_t n;
    uint8_t *file = with_key(&L, "gemma3.attention.sliding_window", GGUF_TYPE_UINT32, &big, &n);
    expect_refused(file, n, "sliding window 129 > context 128",
                   "gemma3.attention.sliding_window = 129 is larger than the context (128)");
    ModelShape shape;
    check(model_shape_read(&shape, file, n) != 0, "estimate refuses a window larger than the context",
          "read");
    free(file);
    static const char *const required[] = {"blk.0.post_ffw_norm.weight", "blk.3.post_attention_norm.weight",
                                           "blk.5.attn_q_norm.weight", "blk.2.attn_k_norm.weight"};
    for (size_t i = 0; i < sizeof required / sizeof *required; i++) {
        for (int k = 0; k < L.n_tensors; k++) {
            if (strcmp(L.tensors[k].name, required[i]) != 0) continue;
            uint8_t *copy = malloc(L.size);
            memcpy(copy, L.data, L.size);
            /* Renamed: "...weight" -> "...weighu", so the tensor is missing. */
            size_t name_end = L.tensors[k].ndims_at - 1;
            copy[name_end]++;
            char reason[128];
            snprintf(reason, sizeof reason, "tensor %s is missing", required[i]);
            expect_refused(copy, L.size, required[i], reason);
            free(copy);
        }
    }
    gguf_layout_free(&L);
}

int main(void) {
    models_dir = models_dir_from_env();
    if (read_ids(DIR "/gemma3.tokens.txt", tokens, N_POS) != N_POS) {
        printf("SKIP: %s/" DIR " missing\n", models_dir);
        return 77;
    }
    static const char *const types[] = {"F32", "Q8_0", "Q4_K"};
    for (int i = 0; i < 3; i++) check_file(types[i]);
    /* The quantised files again with the wider kernel sets (SSE2 above). */
    for (int level = ISA_AVX2; level <= (int)isa_widest(); level++) {
        kernels_use(level);
        for (int i = 1; i < 3; i++) check_file(types[i]);
    }
    kernels_use(ISA_SSE2);
    size_t f32_size, q8_size;
    void *f32 = read_file_in(models_dir, DIR "/gemma3-F32.gguf", &f32_size);
    void *q8 = read_file_in(models_dir, DIR "/gemma3-Q8_0.gguf", &q8_size);
    if (f32 && q8) {
        test_prefill_matches_forward(q8, q8_size);
        test_features(f32, f32_size);
        test_memory(f32, f32_size);
    } else {
        check(0, "gemma3 files", "missing");
    }
    test_bad_input();
    free(f32);
    free(q8);
    return failures ? 1 : 0;
}
