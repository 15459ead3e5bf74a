/* test_prefill_batch.c - batched prefill against one position at a time,
 * for every weight type (gguf-tests/synthA-TYPE.gguf) and the gemma3,
 * qwen3moe and smollm3 files of gguf-arch2, every kernel set this
 * CPU runs (scalar, SSE2, AVX2, AVX-512) and batches of 1, 7, 16, 64 and
 * 128 positions (128 for fp32 weights only, whose run state holds it;
 * gemma3's sliding window caps it at 64), with an f16 KV
 * cache (and q8_0 and f32 ones on synthA-Q4_0 and gemma3): the KV cache of
 * every layer and position, the last logits and the next position's logits
 * must be the same bits. The cache catches a batch whose attention looks
 * ahead: a position that saw later positions of its batch writes different
 * keys and values from the second layer on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/compute/cpu_features.h"
#include "llm/model/gguf_model.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/compute/kernel_sets.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tests/host/check.h"
#include "tests/host/llm_test_util.h"
#include "tests/host/ref_logits.h"

/* Longer than a quantised model's largest batch (64), so it ends on a
 * partial batch; fp32's 128 runs it as one batch (a longer prompt would
 * double the time of the slowest host test). */
enum { PROMPT = 71 };

static const char *models_dir;
static int ids_for_test[PROMPT]; /* the prompt: token ids below 500 */

/* Both caches of positions 0..n-1 of every layer and key/value head equal. */
static int same_cache(const GgufModel *a, const GgufModel *b, int n) {
    const ModelConfig *c = &a->config;
    for (int l = 0; l < c->n_layers; l++)
        for (int kv = 0; kv < c->n_kv_heads; kv++) {
            size_t at = kv_offset(a, l, kv, 0), bytes = (size_t)n * a->kv_head_bytes;
            if (memcmp(a->key_cache + at, b->key_cache + at, bytes) ||
                memcmp(a->value_cache + at, b->value_cache + at, bytes))
                return 0;
        }
    return 1;
}

/* One model file on the active kernel set: single positions on `one`, then
 * each batch size's prefill on `batched`. */
static void compare_batches(const char *file, Model *one, Model *batched, const int *ids) {
    int vocab = one->config.vocab_size;
    float *last = malloc(2 * (size_t)vocab * sizeof(float)), *next = last + vocab;
    const float *logits = NULL;
    for (int i = 0; i < PROMPT; i++) logits = model_forward(one, ids[i], i);
    memcpy(last, logits, (size_t)vocab * sizeof(float));
    memcpy(next, model_forward(one, ids[1], PROMPT), (size_t)vocab * sizeof(float));
    static const int batches[] = {1, 7, 16, 64, 128};
    int previous = 0;
    for (size_t k = 0; k < sizeof batches / sizeof *batches; k++) {
        /* 128 only where the run state holds it (fp32 weights): the name
         * gives the batch that runs. */
        gguf_model_set_prefill_batch(gguf_model_of(batched), batches[k]);
        int batch = gguf_model_prefill_batch(gguf_model_of(batched));
        if (batch == previous) continue;
        previous = batch;
        char name[200];
        snprintf(name, sizeof name, "%s, %s kernels: prefill of %d in batches of %d equals single positions",
                 file, kernels_active()->name, PROMPT, batch);
        if (model_prefill(batched, ids, PROMPT, 0) != 0) {
            check(0, name, "prefill failed");
            continue;
        }
        int cache = same_cache(gguf_model_of(batched), gguf_model_of(one), PROMPT);
        int last_same = memcmp(model_logits(batched), last, (size_t)vocab * sizeof(float)) == 0;
        int next_same =
            memcmp(model_forward(batched, ids[1], PROMPT), next, (size_t)vocab * sizeof(float)) == 0;
        check(cache && last_same && next_same, name, "differs: KV cache %s, last logits %s, next logits %s",
              cache ? "same" : "DIFFERS", last_same ? "same" : "DIFFER", next_same ? "same" : "DIFFER");
    }
    free(last);
}

/* compare_batches on every kernel set this CPU runs, with a KV cache of kv_type. */
static void compare_on_every_set(const char *file, void *data, size_t size, uint32_t kv_type, int swar) {
    char label[160];
    /* SSE2's gemms in general-purpose registers (what QEMU TCG picks) as a
     * set of their own, below the scalar one. */
    enum { SWAR_LEVEL = ISA_SCALAR - 1 };
    for (int level = swar ? SWAR_LEVEL : ISA_SCALAR; level <= gguf_top_level(); level++) {
        snprintf(label, sizeof label, "%s (%s KV%s)", file, kv_type_name(kv_type),
                 level == SWAR_LEVEL ? ", swar gemm" : "");
        kernels_sse2_gemm_force(level == SWAR_LEVEL ? KERNELS_GEMM_SWAR : KERNELS_GEMM_MEASURE);
        if (level == ISA_SCALAR)
            kernels_use(ISA_SCALAR);
        else
            kernels_use(level == SWAR_LEVEL ? ISA_SSE2 : level);
        Model one, batched;
        char err[256];
        if (model_create(&one, data, size, NULL, err, sizeof err) != 0) {
            check(0, label, "%s", err);
            return;
        }
        if (model_create(&batched, data, size, NULL, err, sizeof err) != 0) {
            check(0, label, "%s", err);
            model_destroy(&one);
            return;
        }
        if (model_set_kv_type(&one, kv_type, err, sizeof err) ||
            model_set_kv_type(&batched, kv_type, err, sizeof err))
            check(0, label, "%s", err);
        else if (one.config.seq_len <= PROMPT || one.config.vocab_size <= 500)
            check(0, label, "context %d or vocabulary %d too small for the test", one.config.seq_len,
                  one.config.vocab_size);
        else
            compare_batches(label, &one, &batched, ids_for_test);
        model_destroy(&one);
        model_destroy(&batched);
    }
}

int main(void) {
    models_dir = models_dir_from_env();
    static const char *const types[] = {"F32",  "F16",  "BF16", "Q8_0", "Q4_0", "Q4_1",   "Q5_0",  "Q5_1",
                                        "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q4_K_M", "Q5_K_M"};
    for (int i = 0; i < PROMPT; i++) ids_for_test[i] = 1 + (i * 7919 + 13) % 500;
    /* Then the architectures whose layers differ: gemma3's sliding-window ring
     * (the prompt is longer than its window of 16), qwen3moe's experts,
     * smollm3's layers without RoPE. */
    static const char *const archs[] = {"gguf-arch2/gemma3-Q4_K.gguf", "gguf-arch2/qwen3moe-Q4_K.gguf",
                                        "gguf-arch2/smollm3-Q8_0.gguf"};
    size_t n_types = sizeof types / sizeof *types, n_archs = sizeof archs / sizeof *archs;
    for (size_t t = 0; t < n_types + n_archs; t++) {
        char file[128];
        if (t < n_types)
            snprintf(file, sizeof file, "gguf-tests/synthA-%s.gguf", types[t]);
        else
            snprintf(file, sizeof file, "%s", archs[t - n_types]);
        size_t size;
        void *data = read_file_in(models_dir, file, &size);
        if (!data) {
            check(0, file, "missing in %s", models_dir);
            continue;
        }
        /* The other cache types on a dense file and the sliding-window one:
         * their attention kernels (q8_0 and f32 tiled) too. */
        int with_other_kv = strstr(file, "synthA-Q4_0") || strstr(file, "gemma3");
        for (int k = 0; k < (with_other_kv ? 3 : 1); k++)
            compare_on_every_set(file, data, size,
                                 (const uint32_t[]){GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_F32}[k],
                                 k == 0 && strstr(file, "synthA-Q4_0") != NULL);
        free(data);
    }
    printf("# kernel sets compared: scalar to %s (the widest this CPU runs)\n", isa_name(gguf_top_level()));
    kernels_use(ISA_SSE2);
    return failures ? 1 : 0;
}
