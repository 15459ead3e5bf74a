/* gguf_convert - makes quantised GGUF llama models:
 *
 *   gguf_convert IN.bin  OUT.gguf [--type T] [--tokenizer tokenizer.bin]
 *       a llama2.c fp32 checkpoint (v0 or v1); with its tokenizer.bin, the
 *       vocabulary is written as llama.cpp reads a SentencePiece one
 *       (tokenizer.ggml.model "llama", tokens, scores, token types, BOS and
 *       EOS), so llama.cpp loads the file; without it there is none (use
 *       llmrun -z tokenizer.bin)
 *   gguf_convert IN.gguf OUT.gguf [--type T]   requantises a GGUF file: its
 *       metadata (vocabulary, chat template...) is copied as it is, every
 *       matrix is dequantised and quantised to T (kept as it is when it is
 *       already T), vectors (norms, biases) stay as they are
 *
 * T: F32, Q8_0, Q4_0, Q4_K, Q6_K (every matrix, like llama-quantize --pure)
 * or Q4_K_M (llama.cpp's mix, tools/gguf_mix.h). A matrix whose rows are not
 * a whole number of T's blocks falls back to Q8_0, or stays as it is.
 *
 * llama2.c's wq/wk already rotate adjacent pairs, which is what GGUF llama
 * models expect, so they are copied unpermuted. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/format/checkpoint.h"
#include "llm/tensor/ggml_types.h"
#include "llm/format/gguf.h"
#include "tools/file_util.h"
#include "tools/gen_gguf_vocab.h"
#include "tools/ggml_quantize.h"
#include "tools/gguf_mix.h"

typedef struct {
    char name[64];
    uint32_t type;
    uint64_t ne0, ne1; /* ne1 0: vector */
    const float *src;
    uint64_t offset, bytes;
} OutTensor;

static void die(const char *msg, const char *arg) {
    fprintf(stderr, "gguf_convert: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    exit(1);
}

static void put(FILE *f, const void *p, size_t n) {
    if (fwrite(p, 1, n, f) != n) die("write error", NULL);
}
static void put32(FILE *f, uint32_t v) {
    put(f, &v, 4);
}
static void put64(FILE *f, uint64_t v) {
    put(f, &v, 8);
}
static void putstr(FILE *f, const char *s) {
    put64(f, strlen(s));
    put(f, s, strlen(s));
}
static void kv_u32(FILE *f, const char *key, uint32_t v) {
    putstr(f, key);
    put32(f, GGUF_TYPE_UINT32);
    put32(f, v);
}
static void pad(FILE *f, uint64_t *pos) {
    static const uint8_t zeros[32];
    uint64_t n = (32 - *pos % 32) % 32;
    put(f, zeros, (size_t)n);
    *pos += n;
}

/* A llama2.c fp32 checkpoint to GGUF. */
static int convert_checkpoint(const void *data, size_t size, const char *in_path, const char *out_path,
                              uint32_t qtype, int k_mix, const char *tokenizer_path) {
    ModelConfig c;
    Llama2cWeights w;
    char err[256];
    if (checkpoint_parse(&c, &w, data, size, err, sizeof err) != 0) die(in_path, err);
    if (c.version == 2) die("int8 (version 2) checkpoints are not supported; convert the fp32 file", NULL);
    uint64_t D = c.dim, H = c.hidden_dim, KV = c.kv_dim, V = c.vocab_size;
    OutTensor *ts = calloc((size_t)(3 + 9 * c.n_layers), sizeof(OutTensor));
    int nt = 0;
#define ADD(NAME, NE0, NE1, SRC)                                                                             \
    do {                                                                                                     \
        OutTensor *o = &ts[nt++];                                                                            \
        snprintf(o->name, sizeof o->name, "%s", NAME);                                                       \
        o->type = NE1 ? matrix_type(o->name, strlen(o->name), NE0, qtype, k_mix, c.n_layers,                 \
                                    c.shared_classifier, GGML_TYPE_F32)                                      \
                      : GGML_TYPE_F32;                                                                       \
        o->ne0 = NE0, o->ne1 = NE1, o->src = SRC;                                                            \
    } while (0)
    ADD("token_embd.weight", D, V, w.token_embedding);
    ADD("output_norm.weight", D, 0, w.rms_final);
    if (!c.shared_classifier) ADD("output.weight", D, V, w.wcls);
    char name[64];
    for (int l = 0; l < c.n_layers; l++) {
#define LAYER(SUFFIX, NE0, NE1, SRC)                                                                         \
    snprintf(name, sizeof name, "blk.%d." SUFFIX, l);                                                        \
    ADD(name, NE0, NE1, SRC);
        LAYER("attn_norm.weight", D, 0, w.rms_att + l * D)
        LAYER("attn_q.weight", D, D, w.wq + l * D * D)
        LAYER("attn_k.weight", D, KV, w.wk + l * D * KV)
        LAYER("attn_v.weight", D, KV, w.wv + l * D * KV)
        LAYER("attn_output.weight", D, D, w.wo + l * D * D)
        LAYER("ffn_norm.weight", D, 0, w.rms_ffn + l * D)
        LAYER("ffn_gate.weight", D, H, w.w1 + l * D * H)
        LAYER("ffn_down.weight", H, D, w.w2 + l * H * D)
        LAYER("ffn_up.weight", D, H, w.w3 + l * D * H)
    }
    uint64_t offset = 0;
    for (int i = 0; i < nt; i++) {
        ts[i].offset = offset;
        ts[i].bytes = ggml_row_bytes(ts[i].type, ts[i].ne0) * (ts[i].ne1 ? ts[i].ne1 : 1);
        offset += (ts[i].bytes + 31) / 32 * 32;
    }

    FILE *out = fopen(out_path, "wb");
    if (!out) die("cannot create", out_path);
    MetaBuf meta = {0};
    kv_string(&meta, "general.architecture", "llama");
    kv_string(&meta, "general.name", "llama2.c checkpoint");
    kv_uint32(&meta, "general.file_type", file_type(qtype, k_mix));
    kv_uint32(&meta, "general.quantization_version", 2);
    if (tokenizer_path) {
        int n = vocab_llama2(&meta, tokenizer_path);
        if (n == 0) die("cannot read a llama2.c tokenizer from", tokenizer_path);
        if (n != c.vocab_size) {
            fprintf(stderr, "gguf_convert: %s has %d tokens, the checkpoint's vocabulary %d\n",
                    tokenizer_path, n, c.vocab_size);
            exit(1);
        }
    }
    kv_uint32(&meta, "llama.vocab_size", (uint32_t)c.vocab_size);
    kv_uint32(&meta, "llama.context_length", (uint32_t)c.seq_len);
    kv_uint32(&meta, "llama.embedding_length", (uint32_t)c.dim);
    kv_uint32(&meta, "llama.feed_forward_length", (uint32_t)c.hidden_dim);
    kv_uint32(&meta, "llama.block_count", (uint32_t)c.n_layers);
    kv_uint32(&meta, "llama.attention.head_count", (uint32_t)c.n_heads);
    kv_uint32(&meta, "llama.attention.head_count_kv", (uint32_t)c.n_kv_heads);
    kv_uint32(&meta, "llama.rope.dimension_count", (uint32_t)c.head_size);
    kv_float32(&meta, "llama.rope.freq_base", 10000.0f); /* llama2.c's */
    kv_float32(&meta, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
    put32(out, GGUF_MAGIC);
    put32(out, 3);
    put64(out, (uint64_t)nt);
    put64(out, meta.n_kv);
    put(out, meta.data, meta.len);
    free(meta.data);
    uint64_t pos = 4 + 4 + 8 + 8;
    for (int i = 0; i < nt; i++) {
        putstr(out, ts[i].name);
        put32(out, ts[i].ne1 ? 2 : 1);
        put64(out, ts[i].ne0);
        if (ts[i].ne1) put64(out, ts[i].ne1);
        put32(out, ts[i].type);
        put64(out, ts[i].offset);
    }
    pos = (uint64_t)ftell(out);
    pad(out, &pos);
    for (int i = 0; i < nt; i++) {
        uint64_t count = ts[i].ne0 * (ts[i].ne1 ? ts[i].ne1 : 1);
        void *buf = malloc((size_t)ts[i].bytes);
        if (!buf) die("out of memory", NULL);
        quantize_values(ts[i].type, buf, ts[i].src, count);
        put(out, buf, (size_t)ts[i].bytes);
        pos += ts[i].bytes;
        pad(out, &pos);
        free(buf);
    }
    if (fclose(out) != 0) die("write error on", out_path);
    fprintf(stderr, "gguf_convert: wrote %s: %d tensors, %s, %.1f MB\n", out_path, nt,
            k_mix ? "Q4_K_M" : ggml_type_name(qtype), (double)pos / 1e6);
    free(ts);
    return 0;
}

/* ---------------------------------------------------------------- GGUF in */

/* The type tensor t gets: vectors keep theirs; matrices get qtype (Q6_K
 * where Q4_K_M wants more bits), or Q8_0 / their own type when their rows
 * do not split into the new type's blocks. */
static uint32_t new_type(const GgufTensorInfo *t, uint32_t qtype, int k_mix, int n_layers, int tied) {
    if (t->n_dims < 2) return t->type;
    return matrix_type(t->name.ptr, (size_t)t->name.len, t->ne[0], qtype, k_mix, n_layers, tied, t->type);
}

static void pad_to(FILE *f, uint64_t *pos, uint32_t alignment) {
    static const uint8_t zeros[256];
    uint64_t n = (alignment - *pos % alignment) % alignment;
    while (n) {
        size_t k = n < sizeof zeros ? (size_t)n : sizeof zeros;
        put(f, zeros, k);
        *pos += k, n -= k;
    }
}

/* Requantises a GGUF file: the metadata pairs are copied byte for byte
 * (general.file_type rewritten), the tensors written in the same order
 * with their new types, at the file's own alignment. */
static int requantize_gguf(const void *data, size_t size, const char *in_path, const char *out_path,
                           uint32_t qtype, int k_mix) {
    GgufFile f;
    char err[256];
    if (gguf_create(&f, data, size, err, sizeof err) != 0) die(in_path, err);
    if (f.n_tensors == 0) die(in_path, "has no tensors (a vocabulary-only file)");
    int n_layers = 0;
    int tied = 1;
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        GgufString name = f.tensors[i].name;
        int layer = tensor_layer(name.ptr, (size_t)name.len);
        if (layer + 1 > n_layers) n_layers = layer + 1;
        if (gguf_string_eq(name, "output.weight")) tied = 0;
    }
    uint32_t *types = malloc(f.n_tensors * sizeof *types);
    uint64_t *offsets = malloc(f.n_tensors * sizeof *offsets), offset = 0;
    if (!types || !offsets) die("out of memory", NULL);
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const GgufTensorInfo *t = &f.tensors[i];
        if (!t->n_bytes) die("unsupported tensor type in", in_path);
        types[i] = new_type(t, qtype, k_mix, n_layers, tied);
        offsets[i] = offset;
        offset += (ggml_row_bytes(types[i], t->ne[0]) * (t->n_elements / t->ne[0]) + f.alignment - 1) /
                  f.alignment * f.alignment;
    }

    FILE *out = fopen(out_path, "wb");
    if (!out) die("cannot create", out_path);
    int has_file_type = gguf_find_key(&f, "general.file_type") != NULL;
    put32(out, GGUF_MAGIC);
    put32(out, 3);
    put64(out, f.n_tensors);
    put64(out, f.n_kv + !has_file_type);
    /* A pair's bytes run from its key's length to the next pair's (the
     * last one's to the first tensor info). */
    for (uint64_t i = 0; i < f.n_kv; i++) {
        const uint8_t *start = (const uint8_t *)f.kv[i].key.ptr - 8;
        const uint8_t *end = i + 1 < f.n_kv ? (const uint8_t *)f.kv[i + 1].key.ptr - 8
                                            : (const uint8_t *)f.tensors[0].name.ptr - 8;
        if (gguf_string_eq(f.kv[i].key, "general.file_type"))
            kv_u32(out, "general.file_type", file_type(qtype, k_mix));
        else
            put(out, start, (size_t)(end - start));
    }
    if (!has_file_type) kv_u32(out, "general.file_type", file_type(qtype, k_mix));
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const GgufTensorInfo *t = &f.tensors[i];
        put64(out, t->name.len);
        put(out, t->name.ptr, (size_t)t->name.len);
        put32(out, t->n_dims);
        for (uint32_t d = 0; d < t->n_dims; d++) put64(out, t->ne[d]);
        put32(out, types[i]);
        put64(out, offsets[i]);
    }
    uint64_t pos = (uint64_t)ftell(out);
    pad_to(out, &pos, f.alignment);
    int changed = 0;
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const GgufTensorInfo *t = &f.tensors[i];
        uint64_t rows = t->n_elements / t->ne[0], bytes = ggml_row_bytes(types[i], t->ne[0]) * rows;
        if (types[i] == t->type) {
            put(out, t->data, (size_t)bytes);
        } else {
            changed++;
            float *row = malloc(t->ne[0] * sizeof *row);
            uint8_t *buf = malloc((size_t)bytes);
            if (!row || !buf) die("out of memory", NULL);
            size_t in_row = (size_t)ggml_row_bytes(t->type, t->ne[0]), out_row = (size_t)(bytes / rows);
            for (uint64_t r = 0; r < rows; r++) {
                ggml_dequantize_row(t->type, (const uint8_t *)t->data + r * in_row, row, (int)t->ne[0]);
                if (quantize_values(types[i], buf + r * out_row, row, t->ne[0]) != 0)
                    die("cannot write type", ggml_type_name(types[i]));
            }
            put(out, buf, (size_t)bytes);
            free(row), free(buf);
        }
        pos += bytes;
        pad_to(out, &pos, f.alignment);
    }
    if (fclose(out) != 0) die("write error on", out_path);
    fprintf(stderr, "gguf_convert: wrote %s: %llu tensors (%d requantised), %s, %.1f MB\n", out_path,
            (unsigned long long)f.n_tensors, changed, k_mix ? "Q4_K_M" : ggml_type_name(qtype),
            (double)pos / 1e6);
    free(types), free(offsets);
    gguf_destroy(&f);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: gguf_convert IN.bin|IN.gguf OUT.gguf [--type F32|Q8_0|Q4_0|Q4_K|Q6_K|Q4_K_M] "
                        "[--tokenizer tokenizer.bin]\n");
        return 2;
    }
    uint32_t qtype = GGML_TYPE_F32;
    int k_mix = 0;                     /* Q4_K_M: Q6_K for the sensitive tensors */
    const char *tokenizer_path = NULL; /* a checkpoint's tokenizer.bin */
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--tokenizer") && i + 1 < argc) {
            tokenizer_path = argv[++i];
            continue;
        }
        if (strcmp(argv[i], "--type") || i + 1 >= argc) die("unknown argument", argv[i]);
        const char *t = argv[++i];
        if (!strcmp(t, "F32"))
            qtype = GGML_TYPE_F32;
        else if (!strcmp(t, "Q8_0"))
            qtype = GGML_TYPE_Q8_0;
        else if (!strcmp(t, "Q4_0"))
            qtype = GGML_TYPE_Q4_0;
        else if (!strcmp(t, "Q4_K"))
            qtype = GGML_TYPE_Q4_K;
        else if (!strcmp(t, "Q6_K"))
            qtype = GGML_TYPE_Q6_K;
        else if (!strcmp(t, "Q4_K_M"))
            qtype = GGML_TYPE_Q4_K, k_mix = 1;
        else
            die("unsupported --type", t);
    }
    size_t size;
    void *data = file_read_all(argv[1], &size);
    if (!data) die("cannot read", argv[1]);
    if (tokenizer_path && gguf_is_gguf(data, size))
        die("--tokenizer is for a llama2.c checkpoint; a GGUF file keeps its own vocabulary", NULL);
    int rc = gguf_is_gguf(data, size)
                 ? requantize_gguf(data, size, argv[1], argv[2], qtype, k_mix)
                 : convert_checkpoint(data, size, argv[1], argv[2], qtype, k_mix, tokenizer_path);
    free(data);
    return rc;
}
