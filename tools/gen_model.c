/* gen_model - writes random-weight llama2.c checkpoints of any shape, for
 * tests and benchmarks when the real models are not available.
 *
 *   gen_model --shape 15M|42M|110M|tiny --out FILE [--version 0|1|2] [--seed N]
 *             [--dim D --hidden H --layers L --heads NH --kv-heads NKV --vocab V --seq S]
 *             [--group-size GS] [--separate-classifier]
 *
 * Every (tensor, layer) pair has its own PRNG stream derived from the seed, so
 * the same seed gives the same weights in every format (v0, v1 and v2 files
 * of one seed differ only by layout, and by quantisation for v2). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EMB, RMS_ATT, WQ, WK, WV, WO, RMS_FFN, W1, W2, W3, RMS_FINAL, WCLS };

typedef struct {
    int dim, hidden, layers, heads, kv_heads, vocab, seq;
    int version, group_size, separate_classifier;
    uint64_t seed;
} Options;

typedef struct {
    FILE *file;
    const char *path;
    int failed;
} Writer;

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1). */
static float uniform(uint64_t *state) {
    return (float)((splitmix64(state) >> 40) * (1.0 / 16777216.0) * 2.0 - 1.0);
}

static void write_bytes(Writer *w, const void *data, size_t bytes) {
    if (!w->failed && fwrite(data, 1, bytes, w->file) != bytes) w->failed = 1;
}

/* Fills out with tensor `id` of `layer`: norms near 1, matrices scaled by
 * 1/sqrt(fan-in) so activations stay O(1), embeddings so logits spread by a
 * few units. */
static void generate(const Options *o, int id, int layer, float *out, size_t count) {
    uint64_t state = o->seed * 0x100000001B3ull ^ ((uint64_t)id << 32) ^ (uint64_t)layer;
    splitmix64(&state);
    float scale;
    switch (id) {
    case RMS_ATT:
    case RMS_FFN:
    case RMS_FINAL:
        for (size_t i = 0; i < count; i++) out[i] = 1.0f + 0.1f * uniform(&state);
        return;
    case EMB:
    case WCLS:
        scale = 3.0f / sqrtf((float)o->dim);
        break;
    case W2:
        scale = 1.0f / sqrtf((float)o->hidden);
        break;
    default:
        scale = 1.0f / sqrtf((float)o->dim);
        break;
    }
    for (size_t i = 0; i < count; i++) out[i] = scale * uniform(&state);
}

static size_t tensor_size(const Options *o, int id) {
    size_t d = o->dim, kv = (size_t)o->dim / o->heads * o->kv_heads;
    switch (id) {
    case EMB:
    case WCLS:
        return (size_t)o->vocab * d;
    case WQ:
    case WO:
        return d * d;
    case WK:
    case WV:
        return d * kv;
    case W1:
    case W2:
    case W3:
        return d * o->hidden;
    default:
        return d;
    }
}

/* Writes tensor id for all layers (or once for EMB/RMS_FINAL/WCLS) as fp32. */
static void write_fp32(Writer *w, const Options *o, int id, float *buf) {
    int count = (id == EMB || id == RMS_FINAL || id == WCLS) ? 1 : o->layers;
    size_t n = tensor_size(o, id);
    for (int l = 0; l < count; l++) {
        generate(o, id, l, buf, n);
        write_bytes(w, buf, n * sizeof(float));
    }
}

/* Version 2: each layer's tensor as int8 values, then one fp32 scale per group. */
static void write_q8(Writer *w, const Options *o, int id, float *buf, int8_t *qbuf, float *sbuf) {
    int count = (id == EMB || id == WCLS) ? 1 : o->layers;
    size_t n = tensor_size(o, id), gs = (size_t)o->group_size;
    for (int l = 0; l < count; l++) {
        generate(o, id, l, buf, n);
        for (size_t g = 0; g < n / gs; g++) {
            float max = 0.0f;
            for (size_t i = 0; i < gs; i++) max = fmaxf(max, fabsf(buf[g * gs + i]));
            float scale = max / 127.0f;
            sbuf[g] = scale;
            for (size_t i = 0; i < gs; i++)
                qbuf[g * gs + i] = (int8_t)(scale > 0 ? lroundf(buf[g * gs + i] / scale) : 0);
        }
        write_bytes(w, qbuf, n);
        write_bytes(w, sbuf, n / gs * sizeof(float));
    }
}

static void write_model(Writer *w, const Options *o) {
    int32_t params[7] = {o->dim, o->hidden, o->layers, o->heads, o->kv_heads, o->vocab, o->seq};
    size_t biggest = tensor_size(o, EMB);
    for (int id = WQ; id <= W3; id++)
        if (tensor_size(o, id) > biggest) biggest = tensor_size(o, id);
    float *buf = malloc(biggest * sizeof(float));
    int8_t *qbuf = malloc(biggest);
    float *sbuf = malloc(biggest * sizeof(float));
    if (!buf || !qbuf || !sbuf) {
        fprintf(stderr, "gen_model: out of memory\n");
        w->failed = 1;
        free(buf), free(qbuf), free(sbuf);
        return;
    }
    if (o->version == 0) {
        if (o->separate_classifier) params[5] = -params[5];
        write_bytes(w, params, sizeof(params));
        static const int order[] = {EMB, RMS_ATT, WQ, WK, WV, WO, RMS_FFN, W1, W2, W3, RMS_FINAL};
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) write_fp32(w, o, order[i], buf);
        /* freq_cis_real / imag, as llama2.c's exporter wrote them (unused by readers). */
        int half = o->dim / o->heads / 2;
        for (int part = 0; part < 2; part++)
            for (int pos = 0; pos < o->seq; pos++)
                for (int i = 0; i < half; i++) {
                    double angle = pos * pow(10000.0, -(2.0 * i) / (2.0 * half));
                    float v = (float)(part == 0 ? cos(angle) : sin(angle));
                    write_bytes(w, &v, sizeof(v));
                }
        if (o->separate_classifier) write_fp32(w, o, WCLS, buf);
    } else {
        uint8_t header[256] = {0};
        uint32_t magic = 0x616b3432u;
        int32_t version = o->version, group = o->group_size;
        memcpy(header, &magic, 4);
        memcpy(header + 4, &version, 4);
        memcpy(header + 8, params, sizeof(params));
        header[36] = o->separate_classifier ? 0 : 1;
        if (o->version == 2) memcpy(header + 37, &group, 4);
        write_bytes(w, header, sizeof(header));
        write_fp32(w, o, RMS_ATT, buf);
        write_fp32(w, o, RMS_FFN, buf);
        write_fp32(w, o, RMS_FINAL, buf);
        static const int order[] = {EMB, WQ, WK, WV, WO, W1, W2, W3, WCLS};
        for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
            if (order[i] == WCLS && !o->separate_classifier) break;
            if (o->version == 1)
                write_fp32(w, o, order[i], buf);
            else
                write_q8(w, o, order[i], buf, qbuf, sbuf);
        }
    }
    free(buf), free(qbuf), free(sbuf);
}

static int set_shape(Options *o, const char *shape) {
    static const struct {
        const char *name;
        int dim, hidden, layers, heads, kv_heads, vocab, seq;
    } shapes[] = {
        {"tiny", 96, 160, 3, 6, 2, 300, 32},
        {"15M", 288, 768, 6, 6, 6, 32000, 256},
        {"42M", 512, 1376, 8, 8, 8, 32000, 1024},
        {"110M", 768, 2048, 12, 12, 12, 32000, 1024},
    };
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
        if (!strcmp(shapes[i].name, shape)) {
            o->dim = shapes[i].dim, o->hidden = shapes[i].hidden, o->layers = shapes[i].layers;
            o->heads = shapes[i].heads, o->kv_heads = shapes[i].kv_heads, o->vocab = shapes[i].vocab;
            o->seq = shapes[i].seq;
            return 0;
        }
    return -1;
}

static int parse_int(const char *s, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < -2147483647L || v > 2147483647L) return -1;
    *out = (int)v;
    return 0;
}

static const char *usage =
    "usage: gen_model --shape 15M|42M|110M|tiny --out FILE [--version 0|1|2] [--seed N] [--dim D --hidden H "
    "--layers L --heads NH --kv-heads NKV --vocab V --seq S] [--group-size GS] [--separate-classifier]\n";

int main(int argc, char **argv) {
    Options o = {0};
    o.seed = 1;
    const char *out = NULL;
    set_shape(&o, "tiny");
    struct {
        const char *flag;
        int *field;
    } ints[] = {{"--dim", &o.dim},     {"--hidden", &o.hidden},     {"--layers", &o.layers},
                {"--heads", &o.heads}, {"--kv-heads", &o.kv_heads}, {"--vocab", &o.vocab},
                {"--seq", &o.seq},     {"--version", &o.version},   {"--group-size", &o.group_size}};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        int matched = 0;
        if (!strcmp(a, "--separate-classifier")) {
            o.separate_classifier = 1;
            continue;
        }
        if (!value) {
            fprintf(stderr, "gen_model: %s needs a value\n%s", a, usage);
            return 2;
        }
        for (size_t k = 0; k < sizeof(ints) / sizeof(ints[0]); k++)
            if (!strcmp(a, ints[k].flag)) {
                if (parse_int(value, ints[k].field) != 0) {
                    fprintf(stderr, "gen_model: %s: not an integer: %s\n", a, value);
                    return 2;
                }
                matched = 1;
            }
        if (!strcmp(a, "--shape")) {
            if (set_shape(&o, value) != 0) {
                fprintf(stderr, "gen_model: unknown shape '%s' (15M, 42M, 110M, tiny)\n", value);
                return 2;
            }
            matched = 1;
        } else if (!strcmp(a, "--out")) {
            out = value, matched = 1;
        } else if (!strcmp(a, "--seed")) {
            o.seed = strtoull(value, NULL, 10), matched = 1;
        }
        if (!matched) {
            fprintf(stderr, "gen_model: unknown option %s\n%s", a, usage);
            return 2;
        }
        i++;
    }
    if (!out) {
        fprintf(stderr, "gen_model: --out FILE is required\n%s", usage);
        return 2;
    }
    if (o.dim <= 0 || o.hidden <= 0 || o.layers <= 0 || o.heads <= 0 || o.kv_heads <= 0 || o.vocab <= 0 ||
        o.seq <= 0 || o.dim % o.heads != 0 || o.heads % o.kv_heads != 0 || (o.dim / o.heads) % 2 != 0) {
        fprintf(stderr,
                "gen_model: bad shape: dims must be > 0, heads | dim, kv-heads | heads, even head size\n");
        return 2;
    }
    if (o.version < 0 || o.version > 2) {
        fprintf(stderr, "gen_model: --version must be 0, 1 or 2\n");
        return 2;
    }
    if (o.version == 2) {
        if (o.group_size == 0) o.group_size = o.dim % 64 == 0 ? 64 : 32;
        if (o.group_size <= 0 || o.group_size % 4 != 0 || o.dim % o.group_size != 0) {
            fprintf(stderr, "gen_model: group size %d must be a positive multiple of 4 dividing dim %d\n",
                    o.group_size, o.dim);
            return 2;
        }
    }
    Writer w = {fopen(out, "wb"), out, 0};
    if (!w.file) {
        fprintf(stderr, "gen_model: cannot create %s\n", out);
        return 1;
    }
    write_model(&w, &o);
    if (fclose(w.file) != 0) w.failed = 1;
    if (w.failed) {
        fprintf(stderr, "gen_model: writing %s failed\n", out);
        return 1;
    }
    return 0;
}
