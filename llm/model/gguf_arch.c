/* gguf_arch.c - reports of the architecture features (gguf_arch.h). */
#include "llm/model/gguf_arch.h"

#include "lib/format.h"
#include "lib/string.h"
#include "llm/model/gguf_model.h"
#include "llm/model/gguf_runtime.h"

const char *gguf_model_features(const GgufModel *m, char *out, size_t n) {
    size_t len = 0;
    if (n) out[0] = 0;
    if (!m || n == 0) return out;
    if (m->n_experts)
        len += (size_t)snprintf(out, n, "experts %d, %d used per token (expert ffn %d)", m->n_experts,
                                m->n_experts_used, m->expert_ffn);
    if (m->nope_period) {
        len += (size_t)snprintf(out + len, len < n ? n - len : 0, "%sNoPE layers", len ? "; " : "");
        for (int l = 0; l < m->config.n_layers && len < n; l++)
            if (!gguf_layer_has_rope(m, l)) len += (size_t)snprintf(out + len, n - len, " %d", l);
        if (len < n) snprintf(out + len, n - len, " (RoPE skipped on every %dth layer)", m->nope_period);
    }
    if (m->rope_freqs && len < n)
        len += (size_t)snprintf(out + len, n - len, "%sper-frequency RoPE factors (rope_freqs)",
                                len ? "; " : "");
    if (len + 2 < n) { /* the architecture's own facts (gemma3's window, head_dim) on the same line */
        size_t at = len ? len + 2 : 0;
        gguf_model_arch_details(m, out + at, n - at);
        if (len && out[at]) out[len] = ';', out[len + 1] = ' ';
    }
    return out;
}

void gguf_model_disable_feature(GgufModel *m) {
    m->feature_off = 1;
    if (m->rope_freqs) {
        m->rope_freqs = NULL;
        gguf_rope_frequencies(m);
    }
}

uint64_t gguf_model_param_count(const GgufModel *m) {
    /* the experts' tensors are 3-D: the config alone does not give them */
    if (!m->n_experts) return model_config_params(&m->config);
    const GgufFile *f = &m->file;
    uint64_t total = 0;
    for (uint64_t i = 0; i < f->n_tensors; i++) {
        const GgufTensorInfo *ti = &f->tensors[i];
        total += ti->ne[0] * ti->ne[1] * ti->ne[2] * ti->ne[3];
    }
    return total;
}
