/* gen_gguf - writes a random-weight llama GGUF model of a real shape, its
 * quantised blocks produced directly (an 8B model never exists as F32):
 *
 *   gen_gguf OUT.gguf [--shape NAME] [--type T] [--spm tokenizer.bin]
 *            [--split N] [--seed N] [--std X] [--dim N] [--layers N]
 *            [--heads N] [--kv-heads N] [--ffn N] [--vocab N] [--ctx N]
 *            [--tied | --untied] [--layer-std X] [--signed-output-norm]
 *            [--output-from-embd]
 *
 * NAME: llama-3.2-1b, llama-3.2-3b, llama-3.1-8b, stories15M, stories42M,
 * stories110M, qwen3moe-mini, gemma-3-1b (default stories15M; the options
 * after it override its numbers). qwen3moe-mini is Qwen3-30B-A3B scaled
 * down: the qwen3moe architecture, q/k norms, 64 experts of width 512 with 8
 * used, an F32 router, Qwen's vocabulary size. gemma-3-1b is a gemma3 model:
 * head_dim 256, window 512. T: F32, F16, BF16, Q8_0, Q4_0 (every matrix; the default) or Q4_K_M
 * (llama.cpp's mix, tools/gguf_mix.h).
 * The vocabulary is Llama 2's read from a llama2.c tokenizer.bin (--spm),
 * or else a synthetic byte-level BPE one of the shape's size laid out as
 * Llama 3's (tools/gen_gguf_vocab.h). --split N writes N files in
 * llama.cpp's gguf-split layout, OUT-00001-of-0000N.gguf...
 *
 * Weights: every element ~N(0, std) (default 0.02), quantised; norms 1.0.
 * --layer-std X: the layers' matrices ~N(0, X) instead (the embeddings and
 * output keep std), and --signed-output-norm: output_norm.weight random +-1
 * instead of 1.0. Together they make a well-conditioned random model
 * (docs/design.md, "Checked against llama.cpp"): small layers beside the
 * embedding do not amplify rounding from layer to layer, and the random
 * signs keep a tied model from predicting its last token every time.
 * --output-from-embd: an untied model's output.weight holds token_embd's
 * blocks (when both have one type): the conditioning of a tied model, the
 * classifier still read as a tensor of its own.
 * A pool of blocks is quantised once per type and each block of a matrix is
 * a random pick from it, so writing runs at disk speed with a few MiB of
 * RAM, and the same seed gives the same file. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/tensor/ggml_types.h"
#include "tools/gen_gguf_vocab.h"
#include "tools/ggml_quantize.h"
#include "tools/gguf_mix.h"

typedef struct {
    const char *name;
    int dim, layers, heads, kv_heads, ffn, vocab, ctx, tied;
    float rope_base;
    float rope_factor;                     /* Llama 3's rope scaling (rope_freqs.weight); 0: none */
    int experts, experts_used, expert_ffn; /* qwen3moe; 0: a llama model */
    int head_dim;                          /* 0: dim / heads */
    int window;                            /* > 0: a gemma3 model, this sliding window on 5 of 6 layers */
} Shape;

static const Shape SHAPES[] = {
    {"llama-3.2-1b", 2048, 16, 32, 8, 8192, 128256, 131072, 1, 500000.0f, 32.0f, 0, 0, 0, 0, 0},
    {"llama-3.2-3b", 3072, 28, 24, 8, 8192, 128256, 131072, 1, 500000.0f, 32.0f, 0, 0, 0, 0, 0},
    {"llama-3.1-8b", 4096, 32, 32, 8, 14336, 128256, 131072, 0, 500000.0f, 8.0f, 0, 0, 0, 0, 0},
    {"stories15M", 288, 6, 6, 6, 768, 32000, 256, 1, 10000.0f, 0.0f, 0, 0, 0, 0, 0},
    {"stories42M", 512, 8, 8, 8, 1376, 32000, 1024, 1, 10000.0f, 0.0f, 0, 0, 0, 0, 0},
    {"stories110M", 768, 12, 12, 12, 2048, 32000, 1024, 1, 10000.0f, 0.0f, 0, 0, 0, 0, 0},
    {"qwen3moe-mini", 1024, 8, 16, 4, 3072, 151936, 40960, 0, 1000000.0f, 0.0f, 64, 8, 512, 0, 0},
    {"gemma-3-1b", 1152, 26, 4, 1, 6912, 262144, 32768, 1, 1000000.0f, 0.0f, 0, 0, 0, 256, 512},
};

static int head_dim(const Shape *s) {
    return s->head_dim ? s->head_dim : s->dim / s->heads;
}

enum { FILL_RANDOM, FILL_ONES, FILL_ROPE, FILL_SIGNS };

typedef struct {
    char name[48];
    uint64_t ne0, ne1, ne2; /* ne1 0: a vector; ne2 > 1: experts (3-D) */
    uint32_t type;
    int fill, piece;
    uint64_t bytes, offset; /* offset within its piece's data */
} Tensor;

#define ALIGNMENT 32
#define POOL_BLOCKS 8192 /* a power of two */

static void die(const char *msg, const char *arg) {
    fprintf(stderr, "gen_gguf: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    exit(1);
}

static uint64_t rng_next(uint64_t *s) { /* xorshift64* */
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545F4914F6CDD1DULL;
}

static double rng_normal(uint64_t *s) { /* Box-Muller */
    double u1 = ((rng_next(s) >> 11) + 1.0) / 9007199254740993.0,
           u2 = (rng_next(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* POOL_BLOCKS blocks of one type (32 values for F32, F16 and BF16, whose blocks
 * are single values) from N(0, std) values. */
typedef struct {
    uint32_t type, unit_elems, unit_bytes;
    double std;
    uint8_t *blocks;
} Pool;

static const Pool *pool_for(uint32_t type, double std, uint64_t seed) {
    static Pool pools[16];
    static int n_pools;
    for (int i = 0; i < n_pools; i++)
        if (pools[i].type == type && pools[i].std == std) return &pools[i];
    Pool *p = &pools[n_pools++];
    p->type = type, p->std = std;
    p->unit_elems = ggml_type_info(type)->block_elems == 1 ? 32 : ggml_type_info(type)->block_elems;
    p->unit_bytes = (uint32_t)ggml_row_bytes(type, p->unit_elems);
    uint64_t count = (uint64_t)POOL_BLOCKS * p->unit_elems, state = seed * 0x9E3779B97F4A7C15ULL + type + 1;
    float *values = malloc(count * sizeof *values);
    p->blocks = malloc((size_t)POOL_BLOCKS * p->unit_bytes);
    if (!values || !p->blocks) die("out of memory", NULL);
    for (uint64_t i = 0; i < count; i++) values[i] = (float)(std * rng_normal(&state));
    if (quantize_values(type, p->blocks, values, count) != 0) die("cannot write type", ggml_type_name(type));
    free(values);
    return p;
}

/* ---------------------------------------------------------------- output */

static uint8_t *out_buf;
static size_t out_len;
#define OUT_BUF_SIZE (8u << 20)

static void flush_out(FILE *f) {
    if (out_len && fwrite(out_buf, 1, out_len, f) != out_len) die("write error", NULL);
    out_len = 0;
}
static void emit(FILE *f, const void *p, size_t n) {
    if (out_len + n > OUT_BUF_SIZE) flush_out(f);
    if (n > OUT_BUF_SIZE) {
        if (fwrite(p, 1, n, f) != n) die("write error", NULL);
        return;
    }
    memcpy(out_buf + out_len, p, n);
    out_len += n;
}
static void emit_zeros(FILE *f, uint64_t n) {
    static const uint8_t zeros[ALIGNMENT];
    emit(f, zeros, (size_t)n);
}

/* Llama 3's rope scaling as llama.cpp reads it from rope_freqs.weight: a
 * divisor per rotation frequency (1 for short wavelengths, the factor for
 * long ones, a blend between; low/high frequency factors 1 and 4 over an
 * original context of 8192). */
static float rope_divisor(int i, int head_size, float base, float factor) {
    double freq = pow(base, -2.0 * i / head_size), wavelen = 2 * 3.141592653589793 / freq;
    double low_wavelen = 8192 / 1.0, high_wavelen = 8192 / 4.0;
    if (wavelen < high_wavelen) return 1.0f;
    if (wavelen > low_wavelen) return factor;
    double smooth = (8192 / wavelen - 1.0) / (4.0 - 1.0);
    return (float)(1.0 / ((1 - smooth) / factor + smooth));
}

static double layer_std; /* --layer-std; 0: std */

static void write_tensor(FILE *f, const Tensor *t, const Shape *s, double std, uint64_t seed, int index) {
    if (t->fill == FILL_SIGNS) {
        uint64_t state = seed * 0xA0761D6478BD642FULL + (uint64_t)index + 1;
        for (uint64_t i = 0; i < t->ne0; i++) {
            float v = rng_next(&state) >> 63 ? 1.0f : -1.0f;
            emit(f, &v, 4);
        }
    } else if (t->fill == FILL_ONES || t->fill == FILL_ROPE) {
        for (uint64_t i = 0; i < t->ne0; i++) {
            float v = t->fill == FILL_ONES
                          ? 1.0f
                          : rope_divisor((int)i, s->dim / s->heads, s->rope_base, s->rope_factor);
            emit(f, &v, 4);
        }
    } else {
        int in_layer = !strncmp(t->name, "blk.", 4);
        const Pool *p = pool_for(t->type, in_layer && layer_std > 0 ? layer_std : std, seed);
        uint64_t units = t->bytes / p->unit_bytes, state = seed * 0xD1B54A32D192ED03ULL + (uint64_t)index + 1;
        for (uint64_t u = 0; u < units; u++)
            emit(f, p->blocks + (rng_next(&state) >> 51) * p->unit_bytes, p->unit_bytes);
    }
    emit_zeros(f, (ALIGNMENT - t->bytes % ALIGNMENT) % ALIGNMENT);
}

/* ---------------------------------------------------------------- model */

static int n_tensors;
static Tensor tensors[8 + 13 * 512];

static void add(const char *name, uint64_t ne0, uint64_t ne1, int fill, uint32_t qtype, int k_mix,
                const Shape *s) {
    if (n_tensors >= (int)(sizeof tensors / sizeof *tensors)) die("too many layers", NULL);
    Tensor *t = &tensors[n_tensors++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->ne0 = ne0, t->ne1 = ne1, t->fill = fill;
    t->type = ne1 ? matrix_type(name, strlen(name), ne0, qtype, k_mix, s->layers, s->tied, GGML_TYPE_F32)
                  : GGML_TYPE_F32;
    t->bytes = ggml_row_bytes(t->type, ne0) * (ne1 ? ne1 : 1);
    t->ne2 = 1;
}

/* A 3-D tensor of `experts` matrices of ne1 rows of ne0. */
static void add_experts(const char *name, uint64_t ne0, uint64_t ne1, uint64_t experts, uint32_t qtype,
                        int k_mix, const Shape *s) {
    add(name, ne0, ne1, FILL_RANDOM, qtype, k_mix, s);
    tensors[n_tensors - 1].ne2 = experts;
    tensors[n_tensors - 1].bytes *= experts;
}

static void add_tensors(const Shape *s, uint32_t qtype, int k_mix, int signed_output_norm) {
    uint64_t D = (uint64_t)s->dim, F = (uint64_t)s->ffn, V = (uint64_t)s->vocab;
    uint64_t HD = (uint64_t)head_dim(s), Q = HD * (uint64_t)s->heads, KV = HD * (uint64_t)s->kv_heads;
    add("token_embd.weight", D, V, FILL_RANDOM, qtype, k_mix, s);
    if (s->rope_factor > 0) add("rope_freqs.weight", HD / 2, 0, FILL_ROPE, qtype, k_mix, s);
    char name[48];
    for (int l = 0; l < s->layers; l++) {
#define LAYER(SUFFIX, NE0, NE1, FILL)                                                                        \
    snprintf(name, sizeof name, "blk.%d." SUFFIX, l);                                                        \
    add(name, NE0, NE1, FILL, qtype, k_mix, s);
        LAYER("attn_norm.weight", D, 0, FILL_ONES)
        LAYER("attn_q.weight", D, Q, FILL_RANDOM)
        LAYER("attn_k.weight", D, KV, FILL_RANDOM)
        LAYER("attn_v.weight", D, KV, FILL_RANDOM)
        LAYER("attn_output.weight", Q, D, FILL_RANDOM)
        LAYER("ffn_norm.weight", D, 0, FILL_ONES)
        if (s->experts) {
            uint64_t E = (uint64_t)s->experts, EF = (uint64_t)s->expert_ffn;
            LAYER("attn_q_norm.weight", (uint64_t)head_dim(s), 0, FILL_ONES)
            LAYER("attn_k_norm.weight", (uint64_t)head_dim(s), 0, FILL_ONES)
            snprintf(name, sizeof name, "blk.%d.ffn_gate_inp.weight", l); /* the router stays F32 */
            add(name, D, E, FILL_RANDOM, GGML_TYPE_F32, 0, s);
            snprintf(name, sizeof name, "blk.%d.ffn_gate_exps.weight", l);
            add_experts(name, D, EF, E, qtype, k_mix, s);
            snprintf(name, sizeof name, "blk.%d.ffn_up_exps.weight", l);
            add_experts(name, D, EF, E, qtype, k_mix, s);
            snprintf(name, sizeof name, "blk.%d.ffn_down_exps.weight", l);
            add_experts(name, EF, D, E, qtype, k_mix, s);
            continue;
        }
        LAYER("ffn_gate.weight", D, F, FILL_RANDOM)
        LAYER("ffn_up.weight", D, F, FILL_RANDOM)
        LAYER("ffn_down.weight", F, D, FILL_RANDOM)
        if (s->window) {
            LAYER("attn_q_norm.weight", HD, 0, FILL_ONES)
            LAYER("attn_k_norm.weight", HD, 0, FILL_ONES)
            LAYER("post_attention_norm.weight", D, 0, FILL_ONES)
            LAYER("post_ffw_norm.weight", D, 0, FILL_ONES)
        }
#undef LAYER
    }
    add("output_norm.weight", D, 0, signed_output_norm ? FILL_SIGNS : FILL_ONES, qtype, k_mix, s);
    if (!s->tied) add("output.weight", D, V, FILL_RANDOM, qtype, k_mix, s);
}

/* Splits the tensors, in order, into n_pieces runs of about equal bytes
 * (none empty), and sets each one's offset within its piece. */
static void assign_pieces(int n_pieces) {
    uint64_t total = 0, before = 0;
    for (int i = 0; i < n_tensors; i++) total += (tensors[i].bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    int piece = 0;
    uint64_t offset = 0;
    for (int i = 0; i < n_tensors; i++) {
        int remaining_tensors = n_tensors - i, remaining_pieces = n_pieces - 1 - piece;
        int due = before >= total / (uint64_t)n_pieces * (uint64_t)(piece + 1);
        if (i > 0 && remaining_pieces > 0 && (due || remaining_tensors == remaining_pieces))
            piece++, offset = 0;
        tensors[i].piece = piece;
        tensors[i].offset = offset;
        uint64_t padded = (tensors[i].bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        offset += padded, before += padded;
    }
}

/* The metadata pairs; with a tokenizer.bin (spm_path) the vocabulary size
 * becomes its token count. */
static void put_metadata(MetaBuf *m, Shape *s, uint32_t qtype, int k_mix, const char *type_name,
                         const char *spm_path) {
    char name[96];
    snprintf(name, sizeof name, "random %s %s", s->name, type_name);
    const char *arch = s->experts ? "qwen3moe" : s->window ? "gemma3" : "llama";
    char key[96];
#define ARCH_KEY(SUFFIX) (snprintf(key, sizeof key, "%s." SUFFIX, arch), key)
    kv_string(m, "general.architecture", arch);
    kv_string(m, "general.name", name);
    kv_uint32(m, "general.file_type", file_type(qtype, k_mix));
    kv_uint32(m, "general.quantization_version", 2);
    if (spm_path) {
        s->vocab = vocab_llama2(m, spm_path);
        if (!s->vocab) die("cannot read a llama2.c tokenizer from", spm_path);
    } else {
        vocab_bpe(m, s->vocab);
    }
    kv_uint32(m, ARCH_KEY("vocab_size"), (uint32_t)s->vocab);
    kv_uint32(m, ARCH_KEY("context_length"), (uint32_t)s->ctx);
    kv_uint32(m, ARCH_KEY("embedding_length"), (uint32_t)s->dim);
    kv_uint32(m, ARCH_KEY("feed_forward_length"), (uint32_t)s->ffn);
    kv_uint32(m, ARCH_KEY("block_count"), (uint32_t)s->layers);
    kv_uint32(m, ARCH_KEY("attention.head_count"), (uint32_t)s->heads);
    kv_uint32(m, ARCH_KEY("attention.head_count_kv"), (uint32_t)s->kv_heads);
    kv_uint32(m, ARCH_KEY("rope.dimension_count"), (uint32_t)head_dim(s));
    kv_float32(m, ARCH_KEY("rope.freq_base"), s->rope_base);
    kv_float32(m, ARCH_KEY("attention.layer_norm_rms_epsilon"), s->experts || s->window ? 1e-6f : 1e-5f);
    if (s->experts) {
        kv_uint32(m, ARCH_KEY("expert_count"), (uint32_t)s->experts);
        kv_uint32(m, ARCH_KEY("expert_used_count"), (uint32_t)s->experts_used);
        kv_uint32(m, ARCH_KEY("expert_feed_forward_length"), (uint32_t)s->expert_ffn);
    }
    if (s->window) { /* as convert_hf_to_gguf writes Gemma 3 */
        kv_uint32(m, ARCH_KEY("attention.key_length"), (uint32_t)head_dim(s));
        kv_uint32(m, ARCH_KEY("attention.value_length"), (uint32_t)head_dim(s));
        kv_uint32(m, ARCH_KEY("attention.sliding_window"), (uint32_t)s->window);
        kv_float32(m, ARCH_KEY("rope.freq_base_swa"), 10000.0f);
    }
#undef ARCH_KEY
}

static uint32_t tensor_dims(const Tensor *t) {
    return t->ne2 > 1 ? 3 : t->ne1 ? 2 : 1;
}

static int output_from_embd; /* --output-from-embd */

/* Whose random block picks tensor i gets: its own, or token_embd's (index 0). */
static int picks_of(int i) {
    int same = !strcmp(tensors[i].name, "output.weight") && tensors[i].type == tensors[0].type;
    return output_from_embd && same ? 0 : i;
}

/* Writes piece p of n (n 1: a plain file) to path. */
static void write_piece(const char *path, int p, int n, const MetaBuf *meta, const Shape *s, double std,
                        uint64_t seed) {
    FILE *f = fopen(path, "wb");
    if (!f) die("cannot create", path);
    MetaBuf kv = {0};
    if (p == 0) meta_put(&kv, meta->data, meta->len), kv.n_kv = meta->n_kv;
    if (n > 1) {
        kv_uint16(&kv, "split.no", (uint16_t)p);
        kv_uint16(&kv, "split.count", (uint16_t)n);
        kv_int32(&kv, "split.tensors.count", n_tensors);
    }
    uint64_t count = 0, header = 24 + kv.len, data = 0;
    for (int i = 0; i < n_tensors; i++)
        if (tensors[i].piece == p)
            count++, header += 8 + strlen(tensors[i].name) + 4 + 8 * tensor_dims(&tensors[i]) + 4 + 8;
    uint32_t magic = GGUF_MAGIC, version = 3;
    emit(f, &magic, 4);
    emit(f, &version, 4);
    emit(f, &count, 8);
    emit(f, &kv.n_kv, 8);
    emit(f, kv.data, kv.len);
    for (int i = 0; i < n_tensors; i++) {
        const Tensor *t = &tensors[i];
        if (t->piece != p) continue;
        uint64_t len = strlen(t->name);
        uint32_t dims = tensor_dims(t);
        emit(f, &len, 8);
        emit(f, t->name, len);
        emit(f, &dims, 4);
        emit(f, &t->ne0, 8);
        if (dims > 1) emit(f, &t->ne1, 8);
        if (dims > 2) emit(f, &t->ne2, 8);
        emit(f, &t->type, 4);
        emit(f, &t->offset, 8);
    }
    emit_zeros(f, (ALIGNMENT - header % ALIGNMENT) % ALIGNMENT);
    for (int i = 0; i < n_tensors; i++)
        if (tensors[i].piece == p) {
            write_tensor(f, &tensors[i], s, std, seed, picks_of(i));
            data += (tensors[i].bytes + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
        }
    flush_out(f);
    if (fclose(f) != 0) die("write error on", path);
    fprintf(stderr, "gen_gguf: wrote %s: %llu tensors, %.1f MB\n", path, (unsigned long long)count,
            (double)(header + data) / 1e6);
    free(kv.data);
}

static int parse_type(const char *t, uint32_t *qtype, int *k_mix) {
    static const struct {
        const char *name;
        uint32_t type;
    } types[] = {{"F32", GGML_TYPE_F32},   {"F16", GGML_TYPE_F16},   {"BF16", GGML_TYPE_BF16},
                 {"Q8_0", GGML_TYPE_Q8_0}, {"Q4_0", GGML_TYPE_Q4_0}, {"Q4_K_M", GGML_TYPE_Q4_K}};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (!strcmp(t, types[i].name)) {
            *qtype = types[i].type, *k_mix = !strcmp(t, "Q4_K_M");
            return 0;
        }
    return -1;
}

static int option_int(int argc, char **argv, int *i, const char *opt, int *value) {
    if (strcmp(argv[*i], opt) != 0) return 0;
    if (*i + 1 >= argc) die("missing value after", opt);
    char *end;
    long v = strtol(argv[++*i], &end, 10);
    if (*end || v <= 0 || v > 1 << 30) die("not a positive number:", argv[*i]);
    *value = (int)v;
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr,
                "usage: gen_gguf OUT.gguf [--shape NAME] [--type F32|F16|BF16|Q8_0|Q4_0|Q4_K_M] [--spm "
                "tokenizer.bin]\n"
                "       [--split N] [--seed N] [--std X] [--dim N] [--layers N] [--heads N] [--kv-heads N]\n"
                "       [--ffn N] [--vocab N] [--ctx N] [--tied|--untied] [--layer-std X] "
                "[--signed-output-norm]\n"
                "       [--output-from-embd]\n"
                "shapes:");
        for (size_t i = 0; i < sizeof SHAPES / sizeof *SHAPES; i++) fprintf(stderr, " %s", SHAPES[i].name);
        fprintf(stderr, "\n");
        return 2;
    }
    Shape s = SHAPES[3];
    const char *type_name = "Q4_0", *spm = NULL;
    uint32_t qtype = GGML_TYPE_Q4_0;
    int k_mix = 0, n_pieces = 1, seed = 1, signed_output_norm = 0;
    double std = 0.02;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--shape") && i + 1 < argc) {
            size_t k = 0;
            while (k < sizeof SHAPES / sizeof *SHAPES && strcmp(SHAPES[k].name, argv[i + 1])) k++;
            if (k == sizeof SHAPES / sizeof *SHAPES) die("unknown shape", argv[i + 1]);
            s = SHAPES[k], i++;
        } else if (!strcmp(a, "--type") && i + 1 < argc) {
            if (parse_type(argv[++i], &qtype, &k_mix) != 0) die("unsupported --type", argv[i]);
            type_name = argv[i];
        } else if (!strcmp(a, "--spm") && i + 1 < argc) {
            spm = argv[++i];
        } else if (!strcmp(a, "--std") && i + 1 < argc) {
            std = atof(argv[++i]);
            if (!(std > 0 && std < 10)) die("--std wants a value in (0, 10)", NULL);
        } else if (!strcmp(a, "--layer-std") && i + 1 < argc) {
            layer_std = atof(argv[++i]);
            if (!(layer_std > 0 && layer_std < 10)) die("--layer-std wants a value in (0, 10)", NULL);
        } else if (!strcmp(a, "--signed-output-norm")) {
            signed_output_norm = 1;
        } else if (!strcmp(a, "--output-from-embd")) {
            output_from_embd = 1;
        } else if (!strcmp(a, "--tied") || !strcmp(a, "--untied")) {
            s.tied = !strcmp(a, "--tied");
        } else if (!(option_int(argc, argv, &i, "--split", &n_pieces) ||
                     option_int(argc, argv, &i, "--seed", &seed) ||
                     option_int(argc, argv, &i, "--dim", &s.dim) ||
                     option_int(argc, argv, &i, "--layers", &s.layers) ||
                     option_int(argc, argv, &i, "--heads", &s.heads) ||
                     option_int(argc, argv, &i, "--kv-heads", &s.kv_heads) ||
                     option_int(argc, argv, &i, "--ffn", &s.ffn) ||
                     option_int(argc, argv, &i, "--vocab", &s.vocab) ||
                     option_int(argc, argv, &i, "--ctx", &s.ctx))) {
            die("unknown argument", a);
        }
    }
    if ((!s.head_dim && s.dim % s.heads) || s.heads % s.kv_heads || head_dim(&s) % 2)
        die("dim must split into heads of an even size, and heads into kv-heads", NULL);
    if (s.dim % 32 || s.ffn % 32) die("dim and ffn must be multiples of 32", NULL);
    if (!spm && s.vocab < 256 + 256 + 256) die("a BPE vocabulary needs 768 tokens or more", NULL);
    if (s.layers > 512) die("at most 512 layers", NULL);

    MetaBuf meta = {0};
    put_metadata(&meta, &s, qtype, k_mix, type_name, spm);
    add_tensors(&s, qtype, k_mix, signed_output_norm);
    if (n_pieces > n_tensors || n_pieces > 99999) die("more pieces than tensors", NULL);
    assign_pieces(n_pieces);
    out_buf = malloc(OUT_BUF_SIZE);
    if (!out_buf) die("out of memory", NULL);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    const char *out = argv[1];
    size_t stem = strlen(out) > 5 && !strcmp(out + strlen(out) - 5, ".gguf") ? strlen(out) - 5 : strlen(out);
    for (int p = 0; p < n_pieces; p++) {
        char path[4096];
        if (n_pieces == 1)
            snprintf(path, sizeof path, "%s", out);
        else
            snprintf(path, sizeof path, "%.*s-%05d-of-%05d.gguf", (int)stem, out, p + 1, n_pieces);
        write_piece(path, p, n_pieces, &meta, &s, std, (uint64_t)seed);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "gen_gguf: %s shape (dim %d, %d layers, %d/%d heads, ffn %d, vocab %d%s), %s, %.1f s\n",
            s.name, s.dim, s.layers, s.heads, s.kv_heads, s.ffn, s.vocab, s.tied ? ", tied" : "", type_name,
            (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
    free(meta.data), free(out_buf);
    return 0;
}
