/* gguf_hparams.c - a GGUF model's hyper-parameters with llama.cpp's
 * defaults for absent keys (see gguf_hparams.h). */
#include "llm/model/gguf_hparams.h"

#include "lib/format.h"
#include "lib/string.h"
#include "llm/model/arch_gemma3.h"
#include "llm/model/moe.h"

/* llama.cpp's default when context_length is absent. */
#define GGUF_DEFAULT_CONTEXT 2048
#define GGUF_MAX_DIM (1 << 24)
#define GGUF_MAX_LAYERS 1024
#define GGUF_MAX_HEADS 4096
#define GGUF_MAX_HEAD_SIZE 1024

static int get_dim(const GgufFile *f, const char *arch, const char *key, int required, int fallback, int *out,
                   char *err, size_t n) {
    char name[96];
    uint32_t v;
    snprintf(name, sizeof name, "%s.%s", arch, key);
    if (gguf_get_u32(f, name, &v) != 0) {
        if (gguf_find_key(f, name)) {
            snprintf(err, n, "gguf: %s has a bad type or value", name);
            return -1;
        }
        if (required) {
            snprintf(err, n, "gguf: missing %s", name);
            return -1;
        }
        *out = fallback;
        return 0;
    }
    if (v < 1 || v > GGUF_MAX_DIM) {
        snprintf(err, n, "gguf: %s = %u is out of range", name, v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int read_arch(const GgufFile *f, GgufHparams *h, char *err, size_t n) {
    GgufString arch;
    if (gguf_get_string(f, "general.architecture", &arch) != 0) {
        snprintf(err, n, "gguf: general.architecture is missing");
        return -1;
    }
    h->arch = gguf_arch_from_name(arch.ptr, arch.len);
    if (h->arch) return 0;
    char names[80] = "";
    for (int i = 1; i < GGUF_ARCH_COUNT; i++) {
        size_t used = strlen(names);
        snprintf(names + used, sizeof names - used, "%s%s", i > 1 ? ", " : "", gguf_arch_name(i));
    }
    snprintf(err, n, "gguf: architecture '%.*s' is not supported (%s)", (int)(arch.len > 40 ? 40 : arch.len),
             arch.ptr, names);
    return -1;
}

static int read_vocab(const GgufFile *f, GgufHparams *h, char *err, size_t n) {
    const GgufTensorInfo *emb = gguf_find_tensor(f, "token_embd.weight");
    if (!emb || emb->n_dims != 2 || emb->ne[1] > GGUF_MAX_DIM) {
        snprintf(err, n, "gguf: tensor token_embd.weight is missing or not 2-D");
        return -1;
    }
    h->vocab = (int)emb->ne[1];
    return 0;
}

int gguf_hparams_read(const GgufFile *f, GgufHparams *h, char *err, size_t n) {
    memset(h, 0, sizeof *h);
    if (read_arch(f, h, err, n)) return -1;
    const char *a = gguf_arch_name(h->arch);
    int value_len;
    if (get_dim(f, a, "embedding_length", 1, 0, &h->dim, err, n) ||
        get_dim(f, a, "feed_forward_length", 1, 0, &h->hidden, err, n) ||
        get_dim(f, a, "block_count", 1, 0, &h->layers, err, n) ||
        get_dim(f, a, "attention.head_count", 1, 0, &h->heads, err, n) ||
        get_dim(f, a, "context_length", 0, GGUF_DEFAULT_CONTEXT, &h->trained_ctx, err, n))
        return -1;
    if (get_dim(f, a, "attention.head_count_kv", 0, h->heads, &h->kv_heads, err, n) ||
        get_dim(f, a, "attention.key_length", 0, h->dim / h->heads, &h->head_size, err, n) ||
        get_dim(f, a, "attention.value_length", 0, h->head_size, &value_len, err, n) ||
        get_dim(f, a, "rope.dimension_count", 0, h->head_size, &h->n_rot, err, n))
        return -1;
    if (h->layers > GGUF_MAX_LAYERS || h->heads > GGUF_MAX_HEADS || h->kv_heads > h->heads ||
        h->heads % h->kv_heads) {
        snprintf(err, n, "gguf: %d heads cannot share %d kv heads", h->heads, h->kv_heads);
        return -1;
    }
    int key_len = h->head_size, rot = h->n_rot;
    if (key_len != value_len || key_len < 2 || key_len % 2 || key_len > GGUF_MAX_HEAD_SIZE || rot > key_len ||
        rot % 2) {
        snprintf(err, n, "gguf: head sizes key %d / value %d / rope %d are not supported", key_len, value_len,
                 rot);
        return -1;
    }
    if (h->arch == GGUF_ARCH_QWEN3MOE && moe_read_hparams(f, a, h, err, n)) return -1;
    if (h->arch == GGUF_ARCH_GEMMA3 && gemma3_read_window(f, h, err, n)) return -1;
    return read_vocab(f, h, err, n);
}
