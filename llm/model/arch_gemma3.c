/* arch_gemma3.c - the gemma3 architecture as llama.cpp computes it
 * (../shared/models/gguf-arch2/README.md): input embedding times sqrt(dim),
 * per-head q/k RMSNorm, RMSNorm on the attention and FFN outputs before each
 * residual add, GeGLU with tanh GELU, sliding-window attention on the local
 * layers (llm/model/sliding_window.c) with their own RoPE base, optional final
 * logit softcapping. The forward pass (gguf_forward.c) reads the
 * fields this file sets. */
#include "llm/model/arch_gemma3.h"

#include "lib/format.h"
#include "lib/math.h"
#include "lib/string.h"
#include "llm/compute/kernels.h"
#include "llm/model/sliding_window.h"
#include "llm/model/gguf_runtime.h"

/* llama.cpp's default when attention.sliding_window_pattern is absent: five
 * local layers, then one global. */
#define GEMMA3_DEFAULT_PATTERN 6
#define GEMMA3_DEFAULT_LOCAL_BASE 10000.0f

void gguf_arch_defaults(GgufModel *m) {
    m->swa_window = 0, m->swa_pattern = 0;
    m->rope_base_local = m->config.rope_theta;
    m->embed_scale = 1.0f;
    m->softcap = 0.0f;
    m->ffn_gelu = 0;
    m->attn_scale = 1.0f / sqrtf((float)m->config.head_size);
}

int gemma3_read_window(const GgufFile *f, GgufHparams *h, char *err, size_t n) {
    uint32_t u;
    h->swa_window = 0, h->swa_pattern = 0;
    if (gguf_get_u32(f, "gemma3.attention.sliding_window", &u) != 0 || u == 0) return 0;
    if (u > (uint32_t)h->trained_ctx) {
        snprintf(err, n, "gguf: gemma3.attention.sliding_window = %u is larger than the context (%d)", u,
                 h->trained_ctx);
        return -1;
    }
    h->swa_window = (int)u;
    /* Read as a number only: an array-valued key leaves the default, as in llama.cpp. */
    h->swa_pattern = GEMMA3_DEFAULT_PATTERN;
    if (gguf_get_u32(f, "gemma3.attention.sliding_window_pattern", &u) == 0) {
        if (u > (1u << 24)) {
            snprintf(err, n, "gguf: gemma3.attention.sliding_window_pattern = %u is out of range", u);
            return -1;
        }
        h->swa_pattern = (int)u;
    }
    return 0;
}

int gemma3_read_hparams(GgufModel *m, char *err, size_t n) {
    const ModelConfig *c = &m->config;
    float f;
    m->embed_scale = sqrtf((float)c->dim);
    m->ffn_gelu = 1;
    /* llama.cpp's quirk: the 62-layer model (Gemma 3 27B) scales by dim/heads. */
    if (c->n_layers == 62) m->attn_scale = 1.0f / sqrtf((float)(c->dim / c->n_heads));
    if (m->swa_window) {
        /* Not derived from rope.freq_base: 10000 unless the file says otherwise. */
        m->rope_base_local = GEMMA3_DEFAULT_LOCAL_BASE;
        if (gguf_get_f32(&m->file, "gemma3.rope.freq_base_swa", &f) == 0) m->rope_base_local = f;
        if (!(m->rope_base_local > 1.0f && m->rope_base_local < 1e12f)) {
            snprintf(err, n, "gguf: gemma3.rope.freq_base_swa is out of range");
            return -1;
        }
    }
    if (gguf_get_f32(&m->file, "gemma3.final_logit_softcapping", &f) == 0 && f != 0.0f) {
        if (!(f > 0.0f && f < 1e6f)) {
            snprintf(err, n, "gguf: gemma3.final_logit_softcapping is out of range");
            return -1;
        }
        m->softcap = f;
    }
    return 0;
}

/* gelu(a) = 0.5 a (1 + tanh(u)) = a sigmoid(2u), u = sqrt(2/pi) a (1 + 0.044715 a^2), and
 * a sigmoid(2u) = silu(2u) / (2 sqrt(2/pi) (1 + 0.044715 a^2)): so the active set's SwiGLU kernel
 * does the exponentials, on 2u and b scaled by that factor (no division by a). */
void gelu_tanh_mul(float *a, float *b, int n) {
    const float two_sqrt_2_over_pi = 2.0f * 0.7978845608f;
    for (int i = 0; i < n; i++) {
        float x = a[i], t = two_sqrt_2_over_pi * (1.0f + 0.044715f * x * x);
        a[i] = x * t;
        b[i] = b[i] / t;
    }
    kernels_active()->swiglu(a, b, n);
}

void logits_softcap(float *x, int n, float cap) {
    for (int i = 0; i < n; i++) x[i] = cap * tanhf(x[i] / cap);
}

void rope_angles_local(const GgufModel *m, int pos, float *cs) {
    for (int i = 0; i < m->n_rot / 2; i++) {
        float angle = (float)pos * m->rope_freq_local[i];
        cs[2 * i] = cosf(angle);
        cs[2 * i + 1] = sinf(angle);
    }
}

void gguf_model_arch_details(const GgufModel *m, char *out, size_t n) {
    if (n) out[0] = 0;
    if (m->arch != GGUF_ARCH_GEMMA3) return;
    const ModelConfig *c = &m->config;
    int k = snprintf(out, n, "gemma3: head_dim %d (dim/heads %d), ", c->head_size, c->dim / c->n_heads);
    if (k < 0 || (size_t)k >= n) return;
    if (!m->swa_window) {
        snprintf(out + k, n - (size_t)k, "no sliding window (every layer global), rope base %.0f",
                 (double)c->rope_theta);
        return;
    }
    int local = 0;
    for (int l = 0; l < c->n_layers; l++) local += swa_layer_is_local(m->swa_window, m->swa_pattern, l);
    int ring = swa_ring_positions(c->seq_len, m->swa_window);
    k += snprintf(out + k, n - (size_t)k,
                  "sliding window %d on %d of %d layers (pattern %d), rope base %.0f local / %.0f global, "
                  "local KV cache ",
                  m->swa_window, local, c->n_layers, m->swa_pattern, (double)m->rope_base_local,
                  (double)c->rope_theta);
    if (k < 0 || (size_t)k >= n) return;
    if (ring)
        snprintf(out + k, n - (size_t)k, "a ring of %d positions", ring);
    else
        snprintf(out + k, n - (size_t)k, "the whole context (%d positions)", c->seq_len);
    if (m->softcap > 0.0f) {
        size_t len = strlen(out);
        snprintf(out + len, n - len, ", final logit softcap %g", (double)m->softcap);
    }
}
