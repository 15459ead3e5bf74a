/* gguf_convert - llama2.c fp32 checkpoint (v0 or v1) to a GGUF llama model
 * with every matrix (token embedding and classifier included) stored as
 * F32, Q8_0, Q4_0, Q4_K or Q6_K, or the Q4_K_M mix (Q4_K, with Q6_K for
 * the classifier and for attn_v and ffn_down in the first and last eighth
 * of the layers and every third layer between, as llama.cpp's Q4_K_M
 * does); norms stay F32. No
 * vocabulary is written (use llmrun -z tokenizer.bin with the result).
 *
 *   gguf_convert IN.bin OUT.gguf [--type F32|Q8_0|Q4_0|Q4_K|Q6_K|Q4_K_M]
 *
 * llama2.c's wq/wk already rotate adjacent pairs, which is what GGUF llama
 * models expect, so they are copied unpermuted. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/checkpoint.h"
#include "llm/ggml_types.h"
#include "llm/gguf.h"

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

static void quant_q8_0(BlockQ8_0 *out, const float *x, uint64_t n) {
    for (uint64_t b = 0; b < n / 32; b++, x += 32) {
        float amax = 0;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
        float d = amax / 127.0f, id = d ? 1.0f / d : 0.0f;
        out[b].d = ggml_fp32_to_fp16(d);
        for (int j = 0; j < 32; j++) out[b].qs[j] = (int8_t)roundf(x[j] * id);
    }
}

static void quant_q4_0(BlockQ4_0 *out, const float *x, uint64_t n) {
    for (uint64_t b = 0; b < n / 32; b++, x += 32) {
        float amax = 0, max = 0;
        for (int j = 0; j < 32; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]), max = x[j];
        float d = max / -8.0f, id = d ? 1.0f / d : 0.0f;
        out[b].d = ggml_fp32_to_fp16(d);
        for (int j = 0; j < 16; j++) {
            int lo = (int)(x[j] * id + 8.5f), hi = (int)(x[j + 16] * id + 8.5f);
            lo = lo > 15 ? 15 : lo < 0 ? 0 : lo;
            hi = hi > 15 ? 15 : hi < 0 ? 0 : hi;
            out[b].qs[j] = (uint8_t)(lo | hi << 4);
        }
    }
}

/* Q4_K: per 32 values an affine 4-bit grid (scale, min), the 8 scales and
 * mins stored as 6-bit multiples of the block's d and dmin. */
static void quant_q4_k(BlockQ4_K *out, const float *x, uint64_t n) {
    for (uint64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float scale[8], minv[8], max_scale = 0, max_min = 0;
        for (int j = 0; j < 8; j++) {
            float lo = 0, hi = 0;
            for (int l = 0; l < 32; l++) lo = fminf(lo, x[32 * j + l]), hi = fmaxf(hi, x[32 * j + l]);
            scale[j] = (hi - lo) / 15.0f;
            minv[j] = -lo;
            max_scale = fmaxf(max_scale, scale[j]);
            max_min = fmaxf(max_min, minv[j]);
        }
        uint16_t dh = ggml_fp32_to_fp16(max_scale / 63.0f), mh = ggml_fp32_to_fp16(max_min / 63.0f);
        float d = ggml_fp16_to_fp32(dh), dmin = ggml_fp16_to_fp32(mh);
        int sc[8], mn[8];
        for (int j = 0; j < 8; j++) {
            sc[j] = d ? (int)lroundf(scale[j] / d) : 0;
            mn[j] = dmin ? (int)lroundf(minv[j] / dmin) : 0;
            sc[j] = sc[j] > 63 ? 63 : sc[j];
            mn[j] = mn[j] > 63 ? 63 : mn[j];
        }
        out[b].d = dh;
        out[b].dmin = mh;
        for (int j = 0; j < 4; j++) {
            out[b].scales[j] = (uint8_t)(sc[j] | ((sc[j + 4] >> 4) << 6));
            out[b].scales[j + 4] = (uint8_t)(mn[j] | ((mn[j + 4] >> 4) << 6));
            out[b].scales[j + 8] = (uint8_t)((sc[j + 4] & 0xf) | ((mn[j + 4] & 0xf) << 4));
        }
        uint8_t q[QK_K];
        for (int j = 0; j < 8; j++) {
            float s = d * (float)sc[j], m = dmin * (float)mn[j];
            for (int l = 0; l < 32; l++) {
                int v = s ? (int)lroundf((x[32 * j + l] + m) / s) : 0;
                q[32 * j + l] = (uint8_t)(v > 15 ? 15 : v < 0 ? 0 : v);
            }
        }
        for (int c = 0; c < 4; c++)
            for (int l = 0; l < 32; l++)
                out[b].qs[32 * c + l] = (uint8_t)(q[64 * c + l] | q[64 * c + 32 + l] << 4);
    }
}

/* Q6_K: per 16 values a symmetric 6-bit grid (q - 32) with an int8 scale,
 * the 16 scales multiples of the block's fp16 d. */
static void quant_q6_k(BlockQ6_K *out, const float *x, uint64_t n) {
    for (uint64_t b = 0; b < n / QK_K; b++, x += QK_K) {
        float scale[16], max_scale = 0;
        for (int s = 0; s < 16; s++) {
            float amax = 0, max = 0;
            for (int l = 0; l < 16; l++)
                if (fabsf(x[16 * s + l]) > amax) amax = fabsf(x[16 * s + l]), max = x[16 * s + l];
            scale[s] = max / -32.0f; /* the largest value lands on -32 */
            if (fabsf(scale[s]) > fabsf(max_scale)) max_scale = scale[s];
        }
        uint16_t dh = ggml_fp32_to_fp16(max_scale / -128.0f);
        float d = ggml_fp16_to_fp32(dh);
        uint8_t q[QK_K];
        for (int s = 0; s < 16; s++) {
            int sc = d ? (int)lroundf(scale[s] / d) : 0;
            sc = sc > 127 ? 127 : sc < -128 ? -128 : sc;
            out[b].scales[s] = (int8_t)sc;
            float step = d * (float)sc;
            for (int l = 0; l < 16; l++) {
                int v = step ? (int)lroundf(x[16 * s + l] / step) : 0;
                v = v > 31 ? 31 : v < -32 ? -32 : v;
                q[16 * s + l] = (uint8_t)(v + 32);
            }
        }
        out[b].d = dh;
        for (int h = 0; h < 2; h++) {
            uint8_t *ql = out[b].ql + 64 * h, *qh = out[b].qh + 32 * h;
            const uint8_t *y = q + 128 * h;
            for (int l = 0; l < 32; l++) {
                ql[l] = (uint8_t)((y[l] & 0xf) | (y[l + 64] & 0xf) << 4);
                ql[l + 32] = (uint8_t)((y[l + 32] & 0xf) | (y[l + 96] & 0xf) << 4);
                qh[l] = (uint8_t)((y[l] >> 4) | (y[l + 32] >> 4) << 2 | (y[l + 64] >> 4) << 4 |
                                  (y[l + 96] >> 4) << 6);
            }
        }
    }
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
static void kv_f32(FILE *f, const char *key, float v) {
    putstr(f, key);
    put32(f, GGUF_TYPE_FLOAT32);
    put(f, &v, 4);
}
static void pad(FILE *f, uint64_t *pos) {
    static const uint8_t zeros[32];
    uint64_t n = (32 - *pos % 32) % 32;
    put(f, zeros, (size_t)n);
    *pos += n;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: gguf_convert IN.bin OUT.gguf [--type F32|Q8_0|Q4_0|Q4_K|Q6_K|Q4_K_M]\n");
        return 2;
    }
    uint32_t qtype = GGML_TYPE_F32;
    int k_mix = 0; /* Q4_K_M: Q6_K for the sensitive tensors */
    for (int i = 3; i < argc; i++) {
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
    FILE *in = fopen(argv[1], "rb");
    if (!in) die("cannot open", argv[1]);
    fseek(in, 0, SEEK_END);
    long size = ftell(in);
    fseek(in, 0, SEEK_SET);
    void *data = malloc(size > 0 ? (size_t)size : 1);
    if (!data || size <= 0 || fread(data, 1, (size_t)size, in) != (size_t)size) die("cannot read", argv[1]);
    fclose(in);
    TransformerConfig c;
    TransformerWeights w;
    char err[256];
    if (checkpoint_parse(&c, &w, data, (size_t)size, err, sizeof err) != 0) die(argv[1], err);
    if (c.version == 2) die("int8 (version 2) checkpoints are not supported; convert the fp32 file", NULL);
    uint64_t D = c.dim, H = c.hidden_dim, KV = c.kv_dim, V = c.vocab_size;
    if (qtype != GGML_TYPE_F32) {
        uint64_t blk = ggml_type_info(qtype)->block_elems;
        if (D % blk || H % blk)
            die("dim and hidden_dim must be multiples of the block size of", ggml_type_name(qtype));
    }

    OutTensor *ts = calloc((size_t)(3 + 9 * c.n_layers), sizeof(OutTensor));
    int nt = 0;
#define ADD(NAME, TYPE, NE0, NE1, SRC)                                                                       \
    do {                                                                                                     \
        OutTensor *o = &ts[nt++];                                                                            \
        snprintf(o->name, sizeof o->name, "%s", NAME);                                                       \
        o->type = TYPE, o->ne0 = NE0, o->ne1 = NE1, o->src = SRC;                                            \
    } while (0)
    ADD("token_embd.weight", qtype, D, V, w.token_embedding);
    ADD("output_norm.weight", GGML_TYPE_F32, D, 0, w.rms_final);
    uint32_t high = k_mix ? GGML_TYPE_Q6_K : qtype;
    if (!c.shared_classifier) ADD("output.weight", high, D, V, w.wcls);
    char name[64];
    for (int l = 0; l < c.n_layers; l++) {
        /* llama.cpp's use_more_bits: the first and last eighth, and every
         * third layer in between */
        int more = l < c.n_layers / 8 || l >= 7 * c.n_layers / 8 || (l - c.n_layers / 8) % 3 == 2;
        uint32_t sensitive = k_mix && more ? GGML_TYPE_Q6_K : qtype;
#define LAYER(SUFFIX, TYPE, NE0, NE1, SRC)                                                                   \
    snprintf(name, sizeof name, "blk.%d." SUFFIX, l);                                                        \
    ADD(name, TYPE, NE0, NE1, SRC);
        LAYER("attn_norm.weight", GGML_TYPE_F32, D, 0, w.rms_att + l * D)
        LAYER("attn_q.weight", qtype, D, D, w.wq + l * D * D)
        LAYER("attn_k.weight", qtype, D, KV, w.wk + l * D * KV)
        LAYER("attn_v.weight", sensitive, D, KV, w.wv + l * D * KV)
        LAYER("attn_output.weight", qtype, D, D, w.wo + l * D * D)
        LAYER("ffn_norm.weight", GGML_TYPE_F32, D, 0, w.rms_ffn + l * D)
        LAYER("ffn_gate.weight", qtype, D, H, w.w1 + l * D * H)
        LAYER("ffn_down.weight", sensitive, H, D, w.w2 + l * H * D)
        LAYER("ffn_up.weight", qtype, D, H, w.w3 + l * D * H)
    }
    uint64_t offset = 0;
    for (int i = 0; i < nt; i++) {
        ts[i].offset = offset;
        ts[i].bytes = ggml_row_bytes(ts[i].type, ts[i].ne0) * (ts[i].ne1 ? ts[i].ne1 : 1);
        offset += (ts[i].bytes + 31) / 32 * 32;
    }

    FILE *out = fopen(argv[2], "wb");
    if (!out) die("cannot create", argv[2]);
    put32(out, GGUF_MAGIC);
    put32(out, 3);
    put64(out, (uint64_t)nt);
    put64(out, 10);
    putstr(out, "general.architecture");
    put32(out, GGUF_TYPE_STRING);
    putstr(out, "llama");
    kv_u32(out, "general.file_type",
           qtype == GGML_TYPE_F32    ? 0
           : qtype == GGML_TYPE_Q8_0 ? 7
           : qtype == GGML_TYPE_Q4_0 ? 2
           : qtype == GGML_TYPE_Q6_K ? 18
           : k_mix                   ? 15
                                     : 14);
    kv_u32(out, "llama.context_length", (uint32_t)c.seq_len);
    kv_u32(out, "llama.embedding_length", (uint32_t)c.dim);
    kv_u32(out, "llama.feed_forward_length", (uint32_t)c.hidden_dim);
    kv_u32(out, "llama.block_count", (uint32_t)c.n_layers);
    kv_u32(out, "llama.attention.head_count", (uint32_t)c.n_heads);
    kv_u32(out, "llama.attention.head_count_kv", (uint32_t)c.n_kv_heads);
    kv_u32(out, "llama.rope.dimension_count", (uint32_t)c.head_size);
    kv_f32(out, "llama.attention.layer_norm_rms_epsilon", 1e-5f);
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
        if (ts[i].type == GGML_TYPE_F32)
            memcpy(buf, ts[i].src, (size_t)ts[i].bytes);
        else if (ts[i].type == GGML_TYPE_Q8_0)
            quant_q8_0(buf, ts[i].src, count);
        else if (ts[i].type == GGML_TYPE_Q4_0)
            quant_q4_0(buf, ts[i].src, count);
        else if (ts[i].type == GGML_TYPE_Q6_K)
            quant_q6_k(buf, ts[i].src, count);
        else
            quant_q4_k(buf, ts[i].src, count);
        put(out, buf, (size_t)ts[i].bytes);
        pos += ts[i].bytes;
        pad(out, &pos);
        free(buf);
    }
    if (fclose(out) != 0) die("write error on", argv[2]);
    fprintf(stderr, "gguf_convert: wrote %s: %d tensors, %s, %.1f MB\n", argv[2], nt,
            k_mix ? "Q4_K_M" : ggml_type_name(qtype), (double)pos / 1e6);
    free(ts);
    free(data);
    return 0;
}
