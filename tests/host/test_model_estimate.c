/* test_model_estimate.c - transformer_state_bytes_estimate against real
 * loads: for every shared llama2.c checkpoint and GGUF model the estimate
 * equals transformer_state_bytes() after transformer_load; malformed,
 * truncated and unsupported files give -1. */
#include <string.h>

#include "llm/model_estimate.h"
#include "llm/transformer.h"
#include "tests/host/gguf_layout.h"
#include "tests/host/llm_test_util.h"

static void exact(const char *name) {
    size_t size;
    void *data = read_file(models_path(name), &size);
    if (!data) {
        check(0, name, "cannot read %s", models_path(name));
        return;
    }
    Transformer t;
    char err[256];
    int64_t estimate = transformer_state_bytes_estimate(data, size);
    if (transformer_load(&t, data, size, err, sizeof err) != 0) {
        check(0, name, "does not load: %s", err);
    } else {
        check(estimate == (int64_t)transformer_state_bytes(&t), name, "estimate %lld, actual %zu",
              (long long)estimate, transformer_state_bytes(&t));
        transformer_free(&t);
    }
    /* Cut inside the header / metadata: unknown. */
    char label[160];
    snprintf(label, sizeof label, "%s: truncated headers give -1", name);
    int ok = 1;
    for (size_t cut = 0; cut < 64 && cut < size; cut += 3)
        ok &= transformer_state_bytes_estimate(data, cut) == -1;
    check(ok, label, "a truncated header gave an estimate");
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
    };
    size_t probe;
    void *p = read_file(models_path(models[0]), &probe);
    if (!p) {
        printf("SKIP: %s not found (set MODELS_DIR)\n", models_path(models[0]));
        return 77;
    }
    free(p);
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) exact(models[i]);

    check(transformer_state_bytes_estimate(NULL, 100) == -1, "NULL gives -1", "no");
    static const char garbage[] = "this is not a model at all, just text of some length .......";
    check(transformer_state_bytes_estimate(garbage, sizeof garbage) == -1, "text gives -1", "no");
    check(transformer_state_bytes_estimate("GGUF\x01\0\0\0", 8) == -1, "GGUF v1 header gives -1", "no");

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
            check(file && transformer_state_bytes_estimate(file, size) == -1, labels[i], "gave an estimate");
            free(file);
        }
        /* A larger context: the KV cache grows, capped at 8192 positions like the loader. */
        uint32_t ctx = 100000;
        GgufEdit big = {"llama.context_length", GGUF_EDIT_SET, GGUF_TYPE_UINT32, &ctx, 4};
        size_t size;
        uint8_t *file = gguf_layout_rebuild(&L, &big, 1, &size);
        Transformer t;
        if (file && transformer_load(&t, file, size, err, sizeof err) == 0) {
            check(transformer_state_bytes_estimate(file, size) == (int64_t)transformer_state_bytes(&t),
                  "context_length 100000 (capped) estimated exactly", "estimate %lld, actual %zu",
                  (long long)transformer_state_bytes_estimate(file, size), transformer_state_bytes(&t));
            transformer_free(&t);
        } else {
            check(0, "context_length 100000 (capped) estimated exactly", "does not load: %s", err);
        }
        free(file);
        uint64_t huge = UINT64_MAX;
        memcpy(L.data + 16, &huge, 8);
        check(transformer_state_bytes_estimate(L.data, L.size) == -1, "metadata count 2^64-1 gives -1", "no");
        free(arch.p);
        gguf_layout_free(&L);
    } else {
        check(0, "stories260K.gguf layout", "%s", err);
    }
    return failures ? 1 : 0;
}
