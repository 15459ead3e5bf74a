/* test_model_estimate.c - model_state_bytes_estimate against real
 * loads: for every shared llama2.c checkpoint and GGUF model the estimate
 * equals model_state_bytes() after model_create; malformed,
 * truncated and unsupported files give -1. */
#include <string.h>

#include "llm/tensor/ggml_types.h"
#include "llm/model/model_estimate.h"
#include "llm/model/model.h"
#include "tests/host/gguf_layout.h"
#include "tests/host/llm_test_util.h"

static void exact(const char *name) {
    size_t size;
    void *data = read_file(models_path(name), &size);
    if (!data) {
        check(0, name, "cannot read %s", models_path(name));
        return;
    }
    Model t;
    char err[256];
    int64_t estimate = model_state_bytes_estimate(data, size);
    if (model_create(&t, data, size, NULL, err, sizeof err) != 0) {
        check(0, name, "does not load: %s", err);
    } else {
        check(estimate == (int64_t)model_state_bytes(&t), name, "estimate %lld, actual %zu",
              (long long)estimate, model_state_bytes(&t));
        model_destroy(&t);
    }
    /* Cut inside the header / metadata: unknown. */
    char label[160];
    snprintf(label, sizeof label, "%s: truncated headers give -1", name);
    int ok = 1;
    for (size_t cut = 0; cut < 64 && cut < size; cut += 3) ok &= model_state_bytes_estimate(data, cut) == -1;
    check(ok, label, "a truncated header gave an estimate");
    free(data);
}

/* model_create at chosen contexts: the run state model_state_bytes
 * predicts, the KV cache 2 * layers * ctx * kv_dim elements, the context
 * model_ctx_that_fits picks for a budget, and the refusals. */
static void context_choices(const char *name) {
    size_t size;
    void *data = read_file(models_path(name), &size);
    ModelShape shape;
    char label[160], err[256];
    if (!data || model_shape_read(&shape, data, size) != 0) {
        check(0, name, "no shape");
        free(data);
        return;
    }
    const int trained = shape.trained_ctx;
    const int contexts[] = {1, 7, 100, trained - 1, trained};
    for (size_t i = 0; i < sizeof contexts / sizeof contexts[0]; i++) {
        Model t;
        snprintf(label, sizeof label, "%s at context %d: run state as estimated", name, contexts[i]);
        if (model_create(&t, data, size, &(ModelOptions){contexts[i], NULL}, err, sizeof err) != 0) {
            check(0, label, "does not load: %s", err);
            continue;
        }
        check(t.config.seq_len == contexts[i] &&
                  model_state_bytes(&t) == model_shape_state_bytes(&shape, contexts[i]),
              label, "ctx %d, state %zu, estimate %llu", t.config.seq_len, model_state_bytes(&t),
              (unsigned long long)model_shape_state_bytes(&shape, contexts[i]));
        model_destroy(&t);
    }
    snprintf(label, sizeof label, "%s: KV cache bytes", name);
    /* GGUF: the default f16 cache, 2 bytes an element; llama2.c: fp32. */
    uint64_t kv = 2 * shape.layers * 100 * shape.kv_dim * (shape.runtime == MODEL_RUNTIME_GGUF ? 2 : 4);
    check(model_shape_kv_bytes(&shape, 100) == kv, label, "%llu, expected %llu",
          (unsigned long long)model_shape_kv_bytes(&shape, 100), (unsigned long long)kv);
    Model t;
    const int refused[] = {trained + 1, -1, 999999999};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        snprintf(label, sizeof label, "%s: context %d refused with a reason", name, refused[i]);
        err[0] = 0;
        check(model_create(&t, data, size, &(ModelOptions){refused[i], NULL}, err, sizeof err) == -1 &&
                  strstr(err, "trained context") && t.runtime == MODEL_RUNTIME_NONE && !model_state_bytes(&t),
              label, "err '%s'", err);
    }
    /* Budgets: exactly a context's run state, a byte less, too little for one position. */
    uint64_t at100 = model_shape_state_bytes(&shape, 100);
    snprintf(label, sizeof label, "%s: the context that fits a budget", name);
    check(model_ctx_that_fits(&shape, trained, at100) == 100 &&
              model_ctx_that_fits(&shape, trained, at100 - 1) == 99 &&
              model_ctx_that_fits(&shape, 50, at100) == 50 &&
              model_ctx_that_fits(&shape, trained, model_shape_state_bytes(&shape, 1) - 1) == 0 &&
              model_ctx_that_fits(&shape, 999999999, UINT64_MAX) == 999999999,
          label, "%d %d %d", model_ctx_that_fits(&shape, trained, at100),
          model_ctx_that_fits(&shape, trained, at100 - 1), model_ctx_that_fits(&shape, 50, at100));
    free(data);
}

int main(void) {
    static const char *const models[] = {
        "stories260K.bin",
        "stories260K_v1.bin",
        "stories260K_q80.bin",
        "stories260K.gguf",
        "llama-2-tiny-random.gguf",
        "gguf-arch/qwen3-tied-Q8_0.gguf",
        "gguf-arch/qwen3-untied-Q4_K.gguf",
        "gguf-arch/qwen2-Q4_K.gguf",
        "gguf-tests/synthA-Q4_K.gguf",
        "gguf-arch2/qwen3moe-Q4_K.gguf",
        "gguf-arch2/smollm3-Q8_0.gguf",
        "gguf-arch2/gemma3-Q4_K.gguf",
    };
    size_t probe;
    void *p = read_file(models_path(models[0]), &probe);
    if (!p) {
        printf("SKIP: %s not found (set MODELS_DIR)\n", models_path(models[0]));
        return 77;
    }
    free(p);
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) exact(models[i]);
    context_choices("stories260K.bin");
    context_choices("stories260K.gguf");

    check(model_state_bytes_estimate(NULL, 100) == -1, "NULL gives -1", "no");
    static const char garbage[] = "this is not a model at all, just text of some length .......";
    check(model_state_bytes_estimate(garbage, sizeof garbage) == -1, "text gives -1", "no");
    check(model_state_bytes_estimate("GGUF\x01\0\0\0", 8) == -1, "GGUF v1 header gives -1", "no");

    /* GGUF edits: unsupported architecture, a missing required key, huge counts. */
    GgufLayout L;
    char err[256];
    if (gguf_layout_read(&L, models_path("stories260K.gguf"), err, sizeof err) == 0) {
        GgufBuf arch = {0};
        gguf_buf_string(&arch, "gpt-neox", 8);
        GgufEdit edits[][1] = {
            {{"general.architecture", GGUF_EDIT_SET, GGUF_TYPE_STRING, arch.p, arch.n}},
            {{"llama.block_count", GGUF_EDIT_DROP, 0, NULL, 0}},
            {{"general.architecture", GGUF_EDIT_DROP, 0, NULL, 0}},
            {{"llama.embedding_length", GGUF_EDIT_SET, GGUF_TYPE_INT32, "\xff\xff\xff\xff", 4}},
        };
        const char *labels[] = {"unsupported architecture gives -1", "missing block_count gives -1",
                                "missing architecture gives -1", "negative embedding_length gives -1"};
        for (int i = 0; i < 4; i++) {
            size_t size;
            uint8_t *file = gguf_layout_rebuild(&L, edits[i], 1, &size);
            check(file && model_state_bytes_estimate(file, size) == -1, labels[i], "gave an estimate");
            free(file);
        }
        /* Absent keys take the defaults gguf_hparams.h documents: context 2048 (what the
         * session's ctx setting is checked against), kv heads = heads and key length =
         * dim / heads (llama.cpp's n_head_kv and n_embd_head_k when their keys are absent). */
        GgufEdit drop[] = {{"llama.context_length", GGUF_EDIT_DROP, 0, NULL, 0},
                           {"llama.attention.head_count_kv", GGUF_EDIT_DROP, 0, NULL, 0}};
        size_t dropped_size;
        uint8_t *dropped = gguf_layout_rebuild(&L, drop, 2, &dropped_size);
        ModelShape d;
        int d_read = dropped && model_shape_read(&d, dropped, dropped_size) == 0;
        check(d_read && d.trained_ctx == 2048 && d.kv_dim == d.dim && d.head_size * d.heads == d.dim,
              "absent context_length / head_count_kv: context 2048, kv heads = heads",
              "read %d, ctx %d, kv_dim %llu, dim %llu", d_read, d_read ? d.trained_ctx : 0,
              d_read ? (unsigned long long)d.kv_dim : 0ull, d_read ? (unsigned long long)d.dim : 0ull);
        free(dropped);
        /* A larger context: the KV cache grows with it, no cap. */
        uint32_t ctx = 100000;
        GgufEdit big = {"llama.context_length", GGUF_EDIT_SET, GGUF_TYPE_UINT32, &ctx, 4};
        size_t size;
        uint8_t *file = gguf_layout_rebuild(&L, &big, 1, &size);
        Model t;
        if (file && model_create(&t, file, size, NULL, err, sizeof err) == 0) {
            check(model_state_bytes_estimate(file, size) == (int64_t)model_state_bytes(&t) &&
                      t.config.seq_len == 100000,
                  "context_length 100000 loads uncapped, estimated exactly",
                  "estimate %lld, actual %zu, ctx %d", (long long)model_state_bytes_estimate(file, size),
                  model_state_bytes(&t), t.config.seq_len);
            model_destroy(&t);
        } else {
            check(0, "context_length 100000 loads uncapped, estimated exactly", "does not load: %s", err);
        }
        free(file);
        /* Llama 3.2 1B's attention shape in the header (16 layers, dim 2048, 32/8 heads, trained for
         * 131072 positions): 32768 positions of fp32 KV cache are 2 GiB, and fit a 2.5 GiB budget. */
        uint32_t one_b[] = {16, 2048, 32, 8, 131072};
        GgufEdit shape_1b[] = {
            {"llama.block_count", GGUF_EDIT_SET, GGUF_TYPE_UINT32, &one_b[0], 4},
            {"llama.embedding_length", GGUF_EDIT_SET, GGUF_TYPE_UINT32, &one_b[1], 4},
            {"llama.attention.head_count", GGUF_EDIT_SET, GGUF_TYPE_UINT32, &one_b[2], 4},
            {"llama.attention.head_count_kv", GGUF_EDIT_SET, GGUF_TYPE_UINT32, &one_b[3], 4},
            {"llama.context_length", GGUF_EDIT_SET, GGUF_TYPE_UINT32, &one_b[4], 4},
            {"llama.rope.dimension_count", GGUF_EDIT_SET, GGUF_TYPE_UINT32, &one_b[2], 4}, /* 64 / 2 */
        };
        file = gguf_layout_rebuild(&L, shape_1b, 5, &size);
        ModelShape shape;
        int read = file && model_shape_read(&shape, file, size) == 0;
        check(read && model_shape_kv_bytes(&shape, 32768) == (1ull << 30),
              "1B shape: 32768 positions of f16 KV cache are 1 GiB", "kv %llu",
              read ? (unsigned long long)model_shape_kv_bytes(&shape, 32768) : 0ull);
        shape.kv_type = GGML_TYPE_F32;
        check(read && shape.trained_ctx == 131072 && model_shape_kv_bytes(&shape, 32768) == (2ull << 30) &&
                  model_ctx_that_fits(&shape, shape.trained_ctx, 5ull << 29) >= 32768 &&
                  model_ctx_that_fits(&shape, shape.trained_ctx, 5ull << 29) < 49152,
              "1B shape: 32768 positions of f32 KV cache are 2 GiB and fit in 2.5 GiB",
              "read %d (kv_dim %llu, layers %llu), kv %llu, fits %d", read, (unsigned long long)shape.kv_dim,
              (unsigned long long)shape.layers,
              read ? (unsigned long long)model_shape_kv_bytes(&shape, 32768) : 0ull,
              read ? model_ctx_that_fits(&shape, shape.trained_ctx, 5ull << 29) : 0);
        free(file);
        uint64_t huge = UINT64_MAX;
        memcpy(L.data + 16, &huge, 8);
        check(model_state_bytes_estimate(L.data, L.size) == -1, "metadata count 2^64-1 gives -1", "no");
        free(arch.p);
        gguf_layout_free(&L);
    } else {
        check(0, "stories260K.gguf layout", "%s", err);
    }
    return failures ? 1 : 0;
}
