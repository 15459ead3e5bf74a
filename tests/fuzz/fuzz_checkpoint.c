/* fuzz_checkpoint.c - llama2.c checkpoint parsing (v0, ak42 v1/v2) and, when
 * a file loads with a small run state, a few forward steps and a prefill. */
#include <stdint.h>

#include "llm/format/checkpoint.h"
#include "llm/model/model.h"
#include "tests/fuzz/fuzz_common.h"

/* Inputs whose run state would need more than this are skipped after parsing
 * (the loader allocates it from header dims, unbounded by the file size). */
#define STATE_LIMIT (64u << 20)
/* Keep a forward step cheap: skip models with more work per token. */
#define WORK_LIMIT (8u << 20)

static uint64_t state_estimate(const ModelConfig *c) {
    uint64_t B = LLAMA2C_MAX_BATCH, L = c->n_layers, S = c->seq_len;
    uint64_t per_batch = 4 * (uint64_t)c->dim + 2 * (uint64_t)c->hidden_dim;
    return 4 * (B * per_batch * 2 + (uint64_t)c->n_heads * S + (uint64_t)c->vocab_size +
                2 * L * S * (uint64_t)c->kv_dim + S * (uint64_t)c->head_size);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The loader wants fp32 data 4-byte aligned, as a file read by malloc is. */
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    char err[256];
    memset(err, 0x55, sizeof err);
    ModelConfig cfg;
    Llama2cWeights w;
    if (checkpoint_parse(&cfg, &w, buf, size, err, sizeof err) != 0) {
        fuzz_check_reason(err, sizeof err);
        free(buf);
        return 0;
    }
    /* Parsed: every dim is positive, consistent, and the file size matches. */
    FUZZ_ASSERT(cfg.dim > 0 && cfg.hidden_dim > 0 && cfg.n_layers > 0 && cfg.vocab_size > 0 &&
                    cfg.seq_len > 0,
                "accepted a non-positive dimension");
    FUZZ_ASSERT(cfg.dim % cfg.n_heads == 0 && cfg.n_heads % cfg.n_kv_heads == 0, "accepted bad head counts");
    uint64_t work = (uint64_t)cfg.n_layers * cfg.dim * (2u * cfg.dim + 3u * cfg.hidden_dim) +
                    (uint64_t)cfg.vocab_size * cfg.dim + (uint64_t)cfg.n_layers * cfg.seq_len * cfg.dim;
    if (state_estimate(&cfg) > STATE_LIMIT || work > WORK_LIMIT) {
        free(buf);
        return 0;
    }

    Model t;
    memset(err, 0x55, sizeof err);
    if (model_create(&t, buf, size, NULL, err, sizeof err) != 0) {
        fuzz_check_reason(err, sizeof err);
        free(buf);
        return 0;
    }
    const ModelConfig *c = &t.config;
    FUZZ_ASSERT(model_forward(&t, -1, 0) == NULL, "forward accepted token -1");
    FUZZ_ASSERT(model_forward(&t, c->vocab_size, 0) == NULL, "forward accepted token vocab_size");
    FUZZ_ASSERT(model_forward(&t, 0, c->seq_len) == NULL, "forward accepted pos seq_len");
    int steps = c->seq_len < 3 ? c->seq_len : 3;
    for (int pos = 0; pos < steps; pos++) {
        int token = (int)(((unsigned)pos * 7919u + size) % (unsigned)c->vocab_size);
        FUZZ_ASSERT(model_forward(&t, token, pos) != NULL, "forward refused a valid token");
    }
    int tokens[LLAMA2C_MAX_BATCH + 2];
    int n = c->seq_len < (int)(sizeof tokens / sizeof tokens[0]) ? c->seq_len
                                                                 : (int)(sizeof tokens / sizeof tokens[0]);
    for (int i = 0; i < n; i++) tokens[i] = (i * 31 + 1) % c->vocab_size;
    FUZZ_ASSERT(model_prefill(&t, tokens, n, 0) == 0, "prefill refused valid tokens");
    FUZZ_ASSERT(model_prefill(&t, tokens, n, c->seq_len - n + 1) != 0, "prefill ran past seq_len");
    model_destroy(&t);
    free(buf);
    return 0;
}
