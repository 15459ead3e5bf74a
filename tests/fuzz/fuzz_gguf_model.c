/* fuzz_gguf_model.c - the GGUF model builder: a file's bytes through
 * model_create (llm/model/gguf_load.c read_hparams, build, bind;
 * moe.c, arch_gemma3.c, the state allocator), then one forward step and a
 * two-position prefill, for every architecture the reader knows. Seeds are
 * tiny complete models (make_corpus.sh): mutations reach the shape checks,
 * tensor binding and the first matmuls. The context is kept small so that a
 * huge declared context_length cannot make the state allocation the finding. */
#include <stdint.h>

#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tests/fuzz/fuzz_common.h"

#define FUZZ_CTX 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    Model t;
    char err[256];
    memset(err, 0x55, sizeof err);
    /* The trained context may be shorter than FUZZ_CTX: then the model's own. */
    int rc = model_create(&t, buf, size, &(ModelOptions){FUZZ_CTX, NULL}, err, sizeof err);
    if (rc != 0) {
        memset(err, 0x55, sizeof err);
        rc = model_create(&t, buf, size, &(ModelOptions){0, NULL}, err, sizeof err);
        if (rc == 0 && t.config.seq_len > 4 * FUZZ_CTX) { /* a big trained context: not this input's point */
            model_destroy(&t);
            free(buf);
            return 0;
        }
    }
    if (rc != 0) {
        fuzz_check_reason(err, sizeof err);
        free(buf);
        return 0;
    }
    const ModelConfig *c = &t.config;
    FUZZ_ASSERT(c->vocab_size > 0 && c->seq_len > 0 && c->n_layers > 0 && c->dim > 0,
                "model without a shape");
    float *logits = model_forward(&t, c->vocab_size - 1, 0);
    FUZZ_ASSERT(logits != NULL, "forward refused an in-range token");
    volatile float sink = logits[0] + logits[c->vocab_size - 1];
    (void)sink;
    FUZZ_ASSERT(model_forward(&t, c->vocab_size, 0) == NULL, "out-of-range token accepted");
    FUZZ_ASSERT(model_forward(&t, 0, c->seq_len) == NULL, "out-of-range position accepted");
    if (c->seq_len >= 3) {
        int tokens[2] = {0, c->vocab_size - 1};
        FUZZ_ASSERT(model_prefill(&t, tokens, 2, 1) == 0, "prefill refused in-range positions");
    }
    model_destroy(&t);
    free(buf);
    return 0;
}
