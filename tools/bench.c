/* bench - host throughput table: random models of the stories15M, 42M and
 * 110M shapes (made once by gen_model, cached in --dir), fp32 and int8
 * (quantised at load), on 1 thread and on all cores: batched prefill of a
 * 256-token prompt, single-token decode, and decode as a share of the
 * memory-bandwidth limit (matrix bytes read per token / measured bandwidth).
 * Then GGUF files of the same random weights (Q4_0, Q4_K_M, Q8_0, made once
 * by gguf_convert): prefill of the same prompt, and decode of 128 tokens
 * from position 0 as llama.cpp's llama-bench tg128 measures it (median of
 * 3 runs).
 *
 *   bench [--dir build/bench] [--gen build/host/gen_model]
 *         [--convert build/host/gguf_convert] [--threads N] [--gguf-only]
 *         [--simd auto|sse2|avx2|avx512]   (auto: the widest the CPU has)
 *   BENCH_QUICK=1 bench      stories15M only, shorter runs
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "llm/compute/kernels.h"
#include "llm/compute/parallel.h"
#include "llm/generate/loaded_model.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tools/file_util.h"
#include "tools/read_bandwidth.h"
#include "tools/thread_pool.h"

#define BANDWIDTH_BYTES (512u << 20) /* far larger than any cache */
#define INT8_GROUP 32

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---------------------------------------------------------------- bandwidth */

/* Best of five streaming passes over the buffer on `threads` threads, in
 * bytes per second (tools/read_bandwidth.h). */
static double pool_bandwidth(const uint64_t *data, size_t bytes, int threads) {
    thread_pool_start(threads);
    double best = measure_bandwidth(data, bytes, 5);
    thread_pool_stop();
    return best;
}

/* ---------------------------------------------------------------- models */

typedef struct {
    const char *name, *shape;
} BenchModel;

/* The cached checkpoint for a shape, made by gen_model when missing; its
 * path in path. Returns 0 when it is there. */
static int ensure_checkpoint(const char *dir, const char *gen, const BenchModel *m, char *path, size_t size) {
    char cmd[1200];
    snprintf(path, size, "%s/%s.bin", dir, m->name);
    struct stat st;
    if (stat(path, &st) == 0) return 0;
    fprintf(stderr, "bench: generating %s (%s shape, random weights)\n", path, m->shape);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && '%s' --shape %s --version 1 --out '%s.tmp' && mv '%s.tmp' '%s'", dir, gen,
             m->shape, path, path, path);
    if (system(cmd) == 0) return 0;
    fprintf(stderr, "bench: gen_model failed for %s\n", path);
    return -1;
}

static void *read_model(const char *path, size_t *size) {
    void *data = file_read_all(path, size);
    if (!data) fprintf(stderr, "bench: cannot read %s: %s\n", path, strerror(errno));
    return data;
}

static void *model_file(const char *dir, const char *gen, const BenchModel *m, size_t *size) {
    char path[512];
    return ensure_checkpoint(dir, gen, m, path, sizeof path) == 0 ? read_model(path, size) : NULL;
}

/* The cached GGUF conversion of a shape's checkpoint, made when missing. */
static void *gguf_file(const char *dir, const char *gen, const char *convert, const BenchModel *m,
                       const char *type, size_t *size) {
    char in[512], path[512], cmd[1400];
    snprintf(path, sizeof path, "%s/%s-%s.gguf", dir, m->name, type);
    struct stat st;
    if (stat(path, &st) != 0) {
        if (ensure_checkpoint(dir, gen, m, in, sizeof in) != 0) return NULL;
        fprintf(stderr, "bench: converting %s to %s\n", in, path);
        snprintf(cmd, sizeof cmd, "'%s' '%s' '%s.tmp' --type %s >/dev/null && mv '%s.tmp' '%s'", convert, in,
                 path, type, path, path);
        if (system(cmd) != 0) {
            fprintf(stderr, "bench: gguf_convert failed for %s\n", path);
            return NULL;
        }
    }
    return read_model(path, size);
}

/* Matrix bytes one decode step reads (classifier included; norms, the
 * embedding row and the KV cache are small and left out). */
static double weight_bytes_per_token(const Model *t) {
    const ModelConfig *c = &t->config;
    double D = c->dim, H = c->hidden_dim, KV = c->kv_dim, V = c->vocab_size;
    double values = c->n_layers * (2 * D * D + 2 * D * KV + 3 * D * H) + V * D;
    if (model_is_quantized(t)) return values * (1.0 + 4.0 / model_quant_group_size(t));
    return values * 4.0;
}

/* A refused q8 option's note (loaded_model.h), kept as the error to print. */
static void keep_note(void *ctx, const char *line) {
    snprintf(ctx, 256, "q8%s", line);
}

/* The model of a file in memory through the one load sequence, int8 copies
 * in groups of INT8_GROUP when quant is set; 0, or -1 with the reason said. */
static int open_model(LoadedModel *l, const void *data, size_t size, int quant, const char *what) {
    char err[256] = "";
    LoadOptions options = {0, NULL, quant ? INT8_GROUP : 0, -1, 0};
    if (loaded_model_open(l, data, size, &options, keep_note, err, err, sizeof err) != 0 ||
        (quant && !l->quantized_q8)) {
        fprintf(stderr, "bench: %s: %s\n", what, err);
        loaded_model_close(l);
        return -1;
    }
    return 0;
}

typedef struct {
    double prefill, decode; /* tok/s */
} Speeds;

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Greedy decode of `steps` tokens from position 0, after one untimed pass
 * over the same positions; the median tok/s of `runs` timed passes. */
static double decode_from_start(Model *t, int steps, int runs) {
    double speeds[8];
    if (runs > 8) runs = 8;
    if (steps > t->config.seq_len) steps = t->config.seq_len;
    for (int run = -1; run < runs; run++) {
        int token = 1;
        double t0 = now_seconds();
        for (int pos = 0; pos < steps; pos++) {
            float *logits = model_forward(t, token, pos);
            int best = 0;
            for (int i = 1; i < t->config.vocab_size; i++)
                if (logits[i] > logits[best]) best = i;
            token = best;
        }
        if (run >= 0) speeds[run] = steps / (now_seconds() - t0);
    }
    qsort(speeds, (size_t)runs, sizeof speeds[0], compare_doubles);
    return speeds[runs / 2];
}

static Speeds measure(Model *t, int prompt_len, int decode_steps) {
    const ModelConfig *c = &t->config;
    Speeds sp = {0, 0};
    int *tokens = malloc((size_t)prompt_len * sizeof(int));
    if (prompt_len > c->seq_len) prompt_len = c->seq_len;
    for (int i = 0; i < prompt_len; i++) tokens[i] = 1 + (i * 7919) % (c->vocab_size - 1);
    double t0 = now_seconds();
    if (model_prefill(t, tokens, prompt_len, 0) == 0) sp.prefill = prompt_len / (now_seconds() - t0);
    /* Decode from the start of the context (positions 0..steps-1). */
    int token = 1;
    model_forward(t, token, 0); /* warm-up */
    t0 = now_seconds();
    for (int pos = 1; pos <= decode_steps && pos < c->seq_len; pos++) {
        float *logits = model_forward(t, token, pos);
        int best = 0;
        for (int i = 1; i < c->vocab_size; i++)
            if (logits[i] > logits[best]) best = i;
        token = best;
    }
    sp.decode = decode_steps / (now_seconds() - t0);
    free(tokens);
    return sp;
}

int main(int argc, char **argv) {
    const char *dir = "build/bench", *gen = "build/host/gen_model", *convert = "build/host/gguf_convert";
    int all = thread_pool_cpus();
    const char *simd = "auto";
    int gguf_only = 0;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && strcmp(argv[i], "--dir") == 0)
            dir = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--gen") == 0)
            gen = argv[++i];
        else if (strcmp(argv[i], "--gguf-only") == 0)
            gguf_only = 1;
        else if (i + 1 < argc && strcmp(argv[i], "--convert") == 0)
            convert = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--simd") == 0)
            simd = argv[++i];
        else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0) {
            all = atoi(argv[++i]);
            if (all < 1 || all > THREAD_POOL_MAX) {
                fprintf(stderr, "bench: --threads must be in [1, %d]\n", THREAD_POOL_MAX);
                return 1;
            }
        } else {
            fprintf(stderr,
                    "usage: bench [--dir DIR] [--gen GEN_MODEL] [--convert GGUF_CONVERT] [--threads N] "
                    "[--simd auto|sse2|avx2|avx512] [--gguf-only]   "
                    "(BENCH_QUICK=1: short run)\n");
            return 1;
        }
    }
    /* Natively the widest set is the fastest (under QEMU it is not: the
     * kernel measures; see kernel/session/session_simd.c). */
    int isa = strcmp(simd, "auto") == 0 ? (int)kernels_probe(NULL, NULL) : isa_parse(simd);
    if (isa < ISA_SSE2 || !isa_usable(isa)) {
        fprintf(stderr, "bench: --simd %s: %s\n", simd,
                isa < ISA_SSE2 ? "takes auto, sse2, avx2 or avx512" : "this CPU does not have it");
        return 1;
    }
    kernels_use(isa);
    printf("kernels: %s\n", kernels_active()->name);
    const char *quick_env = getenv("BENCH_QUICK");
    int quick = quick_env && *quick_env && strcmp(quick_env, "0") != 0;
    static const BenchModel models[] = {
        {"stories15M", "15M"}, {"stories42M", "42M"}, {"stories110M", "110M"}};
    int n_models = quick ? 1 : 3;
    int prompt_len = quick ? 64 : 256, decode_steps = quick ? 16 : 48;

    size_t bw_bytes = quick ? BANDWIDTH_BYTES / 4 : BANDWIDTH_BYTES;
    uint64_t *buffer = malloc(bw_bytes);
    if (!buffer) {
        fprintf(stderr, "bench: out of memory for the bandwidth buffer\n");
        return 1;
    }
    for (size_t i = 0; i < bw_bytes / 8; i++) buffer[i] = i * 0x9E3779B97F4A7C15ull;
    int thread_counts[2] = {1, all};
    int n_counts = all > 1 ? 2 : 1;
    double bandwidth[2];
    for (int k = 0; k < n_counts; k++) {
        bandwidth[k] = pool_bandwidth(buffer, bw_bytes, thread_counts[k]);
        printf("read bandwidth, %d thread%s: %.2f GB/s\n", thread_counts[k], thread_counts[k] > 1 ? "s" : "",
               bandwidth[k] / 1e9);
    }
    free(buffer);
    if (!gguf_only) {
        printf("prefill: %d-token prompt (batched); decode: %d tokens; share: decode speed / (bandwidth / "
               "weight "
               "bytes "
               "per token)\n\n",
               prompt_len, decode_steps);
        printf("%-12s %-6s %7s %14s %13s %9s %12s\n", "model", "format", "threads", "prefill tok/s",
               "decode tok/s", "MB/token", "bw share");
        fflush(stdout);
    }

    for (int m = 0; m < n_models && !gguf_only; m++) {
        size_t size;
        void *data = model_file(dir, gen, &models[m], &size);
        if (!data) return 1;
        for (int quant = 0; quant <= 1; quant++) {
            LoadedModel l;
            if (open_model(&l, data, size, quant, models[m].name) != 0) return 1;
            Model *t = &l.model;
            double bytes = weight_bytes_per_token(t);
            for (int k = 0; k < n_counts; k++) {
                thread_pool_start(thread_counts[k]);
                Speeds sp = measure(t, prompt_len, decode_steps);
                thread_pool_stop();
                double limit = bandwidth[k] / bytes; /* tok/s if only weight reads counted */
                printf("%-12s %-6s %7d %14.1f %13.2f %9.1f %11.0f%%\n", models[m].name,
                       quant ? "int8" : "f32", thread_counts[k], sp.prefill, sp.decode, bytes / 1e6,
                       100.0 * sp.decode / limit);
                fflush(stdout);
            }
            loaded_model_close(&l);
        }
        free(data);
    }

    /* GGUF: the largest shape benched above, in the types llama.cpp's
     * figures are usually quoted for. */
    static const char *const gguf_types[] = {"Q4_0", "Q4_K_M", "Q8_0"};
    const BenchModel *gm = &models[n_models - 1];
    int gguf_steps = quick ? 32 : 128, gguf_runs = quick ? 1 : 3;
    printf(
        "\nGGUF: prefill of a %d-token prompt (batches of %d positions); decode of %d tokens from "
        "position 0 (tg%d), median of %d run%s; file GB/s: read speed of the model file's own bytes; share: "
        "decode speed / (file GB/s / MB per token)\n\n",
        prompt_len, GGUF_PREFILL_BATCH, gguf_steps, gguf_steps, gguf_runs, gguf_runs > 1 ? "s" : "");
    printf("%-12s %-6s %7s %14s %13s %9s %10s %12s\n", "model", "type", "threads", "prefill tok/s",
           "decode tok/s", "MB/token", "file GB/s", "bw share");
    fflush(stdout);
    for (size_t g = 0; g < sizeof gguf_types / sizeof gguf_types[0]; g++) {
        size_t size;
        void *data = gguf_file(dir, gen, convert, gm, gguf_types[g], &size);
        if (!data) return 1;
        char what[64];
        snprintf(what, sizeof what, "%s %s", gm->name, gguf_types[g]);
        LoadedModel l;
        if (open_model(&l, data, size, 0, what) != 0) return 1;
        Model *t = &l.model;
        double bytes = (double)size; /* the tensors are nearly all of the file, each read once per token */
        for (int k = 0; k < n_counts; k++) {
            /* These files are small enough to stay partly in a large L3,
             * so the limit is the read speed of the file's own bytes. */
            size_t whole_blocks = size / (READ_BLOCK_WORDS * 8) * (READ_BLOCK_WORDS * 8);
            double file_bw = pool_bandwidth(data, whole_blocks, thread_counts[k]);
            thread_pool_start(thread_counts[k]);
            double prefill = measure(t, prompt_len, 0).prefill;
            double decode = decode_from_start(t, gguf_steps, gguf_runs);
            thread_pool_stop();
            printf("%-12s %-6s %7d %14.1f %13.1f %9.1f %10.2f %11.0f%%\n", gm->name, gguf_types[g],
                   thread_counts[k], prefill, decode, bytes / 1e6, file_bw / 1e9,
                   100.0 * decode / (file_bw / bytes));
            fflush(stdout);
        }
        loaded_model_close(&l);
        free(data);
    }
    return 0;
}
