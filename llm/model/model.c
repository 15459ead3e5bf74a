/* model.c - the model interface (model.h): the one place that picks a
 * runtime, by the file's magic at create and by m->runtime after. */
#include "llm/model/model.h"

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/format/gguf.h"
#include "llm/model/gguf_arch.h"
#include "llm/model/gguf_runtime.h"
#include "llm/model/llama2c.h"
#include "llm/tensor/ggml_types.h"

int model_context(int trained, int requested, char *err, size_t err_size) {
    if (requested < 0 || requested > trained) {
        snprintf(err, err_size, "context %d is outside the model's trained context (1..%d)", requested,
                 trained);
        return -1;
    }
    return requested ? requested : trained;
}

static int create_llama2c(Model *m, const void *data, size_t size, int ctx, char *err, size_t err_size) {
    Llama2cModel *t = malloc(sizeof *t);
    if (!t) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    if (llama2c_create(t, data, size, ctx, err, err_size) != 0) {
        free(t);
        return -1;
    }
    m->runtime = MODEL_RUNTIME_LLAMA2C;
    m->impl.llama2c = t;
    m->config = t->config;
    return 0;
}

static int create_gguf(Model *m, const void *data, size_t size, const ModelOptions *o, char *err,
                       size_t err_size) {
    struct GgufModel *g = gguf_model_create(data, size, o->pieces, o->ctx, err, err_size);
    if (!g) return -1;
    m->runtime = MODEL_RUNTIME_GGUF;
    m->impl.gguf = g;
    m->config = *gguf_model_config(g);
    return 0;
}

int model_create(Model *m, const void *data, size_t size, const ModelOptions *options, char *err,
                 size_t err_size) {
    static const ModelOptions defaults = {0, NULL};
    const ModelOptions *o = options ? options : &defaults;
    memset(m, 0, sizeof *m);
    int rc = gguf_is_gguf(data, size) ? create_gguf(m, data, size, o, err, err_size)
                                      : create_llama2c(m, data, size, o->ctx, err, err_size);
    if (rc != 0) memset(m, 0, sizeof *m);
    return rc;
}

void model_destroy(Model *m) {
    if (!m) return;
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        llama2c_destroy(m->impl.llama2c);
        free(m->impl.llama2c);
        break;
    case MODEL_RUNTIME_GGUF:
        gguf_model_destroy(m->impl.gguf);
        break;
    case MODEL_RUNTIME_NONE:
        break;
    }
    memset(m, 0, sizeof *m);
}

float *model_forward(Model *m, int token, int pos) {
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        return llama2c_forward(m->impl.llama2c, token, pos);
    case MODEL_RUNTIME_GGUF:
        return gguf_model_forward(m->impl.gguf, token, pos, 1);
    default:
        return NULL;
    }
}

int model_prefill(Model *m, const int *tokens, int n, int start_pos) {
    const ModelConfig *c = &m->config;
    if (m->runtime == MODEL_RUNTIME_NONE || !tokens || n < 1 || start_pos < 0 || start_pos > c->seq_len - n)
        return -1;
    for (int i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= c->vocab_size) return -1;
    if (m->runtime == MODEL_RUNTIME_LLAMA2C) return llama2c_prefill(m->impl.llama2c, tokens, n, start_pos);
    gguf_model_prefill(m->impl.gguf, tokens, n, start_pos);
    return 0;
}

float *model_logits(const Model *m) {
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        return m->impl.llama2c->state.logits;
    case MODEL_RUNTIME_GGUF:
        return gguf_model_logits(m->impl.gguf);
    default:
        return NULL;
    }
}

uint32_t model_kv_type(const Model *m) {
    return m->runtime == MODEL_RUNTIME_GGUF ? gguf_model_kv_type(m->impl.gguf) : GGML_TYPE_F32;
}

uint64_t model_kv_bytes(const Model *m) {
    const ModelConfig *c = &m->config;
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        return 2 * (uint64_t)c->n_layers * (uint64_t)c->seq_len * (uint64_t)c->kv_dim * sizeof(float);
    case MODEL_RUNTIME_GGUF:
        return gguf_model_kv_bytes(m->impl.gguf);
    default:
        return 0;
    }
}

int model_kv_fixed(const Model *m, char *why, size_t n) {
    if (m->runtime == MODEL_RUNTIME_GGUF) return 0;
    snprintf(why, n, "%s",
             m->runtime == MODEL_RUNTIME_LLAMA2C ? "llama2.c checkpoints keep an fp32 KV cache" : "no model");
    return 1;
}

int model_kv_type_check(const Model *m, uint32_t kv_type, char *err, size_t err_size) {
    if (model_kv_fixed(m, err, err_size)) return -1;
    return gguf_model_kv_type_check(m->impl.gguf, kv_type, err, err_size);
}

int model_set_kv_type(Model *m, uint32_t kv_type, char *err, size_t err_size) {
    if (model_kv_fixed(m, err, err_size)) return -1;
    return gguf_model_set_kv_type(m->impl.gguf, kv_type, err, err_size);
}

int model_quantize(Model *m, int group_size, char *err, size_t err_size) {
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        return llama2c_quantize(m->impl.llama2c, group_size, err, err_size);
    case MODEL_RUNTIME_GGUF:
        snprintf(err, err_size, "quantize: GGUF models keep their own tensor types");
        return -1;
    default:
        snprintf(err, err_size, "quantize: no model loaded");
        return -1;
    }
}

int model_can_quantize(const Model *m) {
    return m->runtime == MODEL_RUNTIME_LLAMA2C && !llama2c_is_quantized(m->impl.llama2c);
}

int model_quant_group_size(const Model *m) {
    return m->runtime == MODEL_RUNTIME_LLAMA2C ? m->impl.llama2c->quant_group_size : 0;
}

int model_is_quantized(const Model *m) {
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        return llama2c_is_quantized(m->impl.llama2c);
    case MODEL_RUNTIME_GGUF:
        return strcmp(gguf_model_weight_type(m->impl.gguf), "F32") != 0;
    default:
        return 0;
    }
}

void model_set_reference(Model *m, int on) {
    if (m->runtime == MODEL_RUNTIME_GGUF) gguf_model_set_reference(m->impl.gguf, on);
}

void model_disable_feature(Model *m) {
    if (m->runtime == MODEL_RUNTIME_GGUF) gguf_model_disable_feature(m->impl.gguf);
}

void model_describe(const Model *m, char *out, size_t n) {
    if (n) out[0] = 0;
    if (m->runtime == MODEL_RUNTIME_LLAMA2C) llama2c_describe(m->impl.llama2c, out, n);
    if (m->runtime == MODEL_RUNTIME_GGUF) gguf_model_describe(m->impl.gguf, out, n);
}

const char *model_arch_name(const Model *m) {
    return m->runtime == MODEL_RUNTIME_GGUF ? gguf_model_arch_name(m->impl.gguf) : "llama2.c";
}

const char *model_matmul_name(const Model *m) {
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        return llama2c_matmul_name(m->impl.llama2c);
    case MODEL_RUNTIME_GGUF:
        return gguf_model_weight_type(m->impl.gguf);
    default:
        return "none";
    }
}

const char *model_features(const Model *m, char *out, size_t n) {
    if (m->runtime == MODEL_RUNTIME_GGUF) return gguf_model_features(m->impl.gguf, out, n);
    if (n) out[0] = 0;
    return out;
}

uint64_t model_param_count(const Model *m) {
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        return llama2c_param_count(m->impl.llama2c);
    case MODEL_RUNTIME_GGUF:
        return gguf_model_param_count(m->impl.gguf);
    default:
        return 0;
    }
}

size_t model_state_bytes(const Model *m) {
    switch (m->runtime) {
    case MODEL_RUNTIME_LLAMA2C:
        return m->impl.llama2c->state.bytes;
    case MODEL_RUNTIME_GGUF:
        return gguf_model_state_bytes(m->impl.gguf);
    default:
        return 0;
    }
}

uint32_t model_pieces(const Model *m, uint64_t *bytes) {
    *bytes = 0;
    return m->runtime == MODEL_RUNTIME_GGUF ? gguf_model_pieces(m->impl.gguf, bytes) : 1;
}

int model_has_vocabulary(const Model *m) {
    return m->runtime == MODEL_RUNTIME_GGUF;
}

struct GgufModel *gguf_model_of(const Model *m) {
    return m->runtime == MODEL_RUNTIME_GGUF ? m->impl.gguf : NULL;
}

struct Llama2cModel *llama2c_model_of(const Model *m) {
    return m->runtime == MODEL_RUNTIME_LLAMA2C ? m->impl.llama2c : NULL;
}
