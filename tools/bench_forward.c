/* bench_forward - times the forward pass on a checkpoint file (llama2.c .bin or GGUF).
 * Usage: bench_forward MODEL.bin [-n POSITIONS]
 *                      [--kernels auto|scalar|sse2|avx2|avx512|sse2-swar|sse2-pmaddwd]
 *                      [--q8 [GS]] [--prefill N | --prefill-only N] [--threads N] [--kv TYPE] [--at P]
 *                      [--ctx N]
 * sse2-swar / sse2-pmaddwd: the SSE2 set with its batched gemms fixed to
 * one kind (sse2 times both on the first calls and keeps the faster; QEMU
 * TCG picks swar: profile that with tools/tcg_cost.py).
 * Decode: feeds its own greedy argmax back in (from BOS), prints ms/token and
 * tok/s. --q8 quantises an fp32 model to int8 at load (group size GS, default
 * 32). --prefill N also times one batched model_prefill of N tokens
 * against N single model_forward calls, and checks both give the same
 * last logits (--prefill-only N: the prefill alone, median of five, wall
 * and CPU seconds). --threads N runs the matmuls and attention on N threads
 * (default 1). GGUF: --kv f16|q8_0|f32 sets the KV cache type; --at P
 * times one decode step at position 0 and at position P (attending over
 * P + 1 positions; the cache rows before P are copies of real rows), then
 * checks the logits at P are finite and prints the KV cache's size. --ctx N
 * sizes the run state for N positions (default: the trained context). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/model/gguf_model.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/compute/kernel_sets.h"
#include "llm/generate/loaded_model.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tools/file_util.h"
#include "tools/thread_pool.h"

static const char *usage =
    "usage: bench_forward MODEL.bin|MODEL.gguf [-n POSITIONS] "
    "[--kernels auto|scalar|sse2|avx2|avx512|sse2-swar|sse2-pmaddwd] "
    "[--q8 [GS]] [--prefill N | --prefill-only N] [--threads N] [--kv f16|q8_0|f32] [--at P] [--ctx N]\n";

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int argmax(const float *v, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[best]) best = i;
    return best;
}

static int positive_int(const char *s, int *out) {
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v <= 0 || v > 1 << 24) return -1;
    *out = (int)v;
    return 0;
}

/* Seconds of wall clock and of process CPU for one prefill of n tokens
 * from position 0; the CPU time moves far less than the wall clock on a
 * machine shared with other work. */
static int timed_prefill(Model *t, const int *tokens, int n, double *wall, double *cpu) {
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
    double start = now_seconds();
    int rc = model_prefill(t, tokens, n, 0);
    *wall = now_seconds() - start;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
    *cpu = (double)(cpu1.tv_sec - cpu0.tv_sec) + (double)(cpu1.tv_nsec - cpu0.tv_nsec) * 1e-9;
    return rc;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* --prefill-only: the median of five prefills of the same tokens. */
static void bench_prefill_only(Model *t, const int *tokens, int n) {
    double wall[5], cpu[5];
    for (int r = 0; r < 5; r++)
        if (timed_prefill(t, tokens, n, &wall[r], &cpu[r]) != 0) {
            printf("prefill %d tokens FAILED\n", n);
            return;
        }
    qsort(wall, 5, sizeof *wall, compare_doubles);
    qsort(cpu, 5, sizeof *cpu, compare_doubles);
    printf("prefill %d tokens, median of 5: %.3f s (%.1f tok/s), %.3f s CPU (%.1f tok/s per CPU second)\n", n,
           wall[2], n / wall[2], cpu[2], n / cpu[2]);
}

/* Times prefill of n tokens vs n single forwards from position 0 (only:
 * the prefill alone, five times). */
static void bench_prefill(Model *t, int n, int only) {
    const ModelConfig *c = &t->config;
    int *tokens = malloc(sizeof(int) * n);
    float *single = malloc(sizeof(float) * c->vocab_size);
    if (!tokens || !single) {
        fprintf(stderr, "bench_forward: out of memory\n");
        free(tokens), free(single);
        return;
    }
    uint64_t state = 12345;
    for (int i = 0; i < n; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        tokens[i] = i == 0 ? 1 : (int)((state >> 33) % (uint64_t)c->vocab_size);
    }
    if (only) {
        bench_prefill_only(t, tokens, n);
        free(tokens), free(single);
        return;
    }
    double start = now_seconds();
    for (int pos = 0; pos < n; pos++) model_forward(t, tokens[pos], pos);
    double single_s = now_seconds() - start;
    memcpy(single, model_logits(t), sizeof(float) * c->vocab_size);
    double batch_s, batch_cpu;
    int rc = timed_prefill(t, tokens, n, &batch_s, &batch_cpu);
    double worst = 0, range = 0;
    for (int i = 0; i < c->vocab_size; i++) {
        worst = fmax(worst, fabs((double)single[i] - model_logits(t)[i]));
        range = fmax(range, fabs((double)single[i]));
    }
    printf("prefill %d tokens: %d single forwards %.3f s (%.1f tok/s), batched prefill %.3f s (%.1f tok/s, "
           "%.3f s CPU): %.2fx; last logits max |diff| %.3g (max |logit| %.3g)%s\n",
           n, n, single_s, n / single_s, batch_s, n / batch_s, batch_cpu, single_s / batch_s, worst, range,
           rc == 0 ? "" : " PREFILL FAILED");
    free(tokens), free(single);
}

static double cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Mean seconds of `reps` decode steps at position pos (after one untimed);
 * *cpu: their mean CPU seconds, all threads (what a loaded machine's other
 * work does not stretch). */
static double decode_at(Model *t, int pos, int reps, double *cpu) {
    model_forward(t, 1, pos);
    double start = now_seconds(), cpu_start = cpu_seconds();
    for (int i = 0; i < reps; i++) model_forward(t, 1 + i, pos);
    *cpu = (cpu_seconds() - cpu_start) / reps;
    return (now_seconds() - start) / reps;
}

/* Decode at position 0 against position `at` of a GGUF model: the first
 * GGUF_PREFILL_BATCH positions are run for real, and their cached rows are
 * copied to every position up to `at`, so attention reads real values from
 * memory of its own at each position (running `at` positions would take
 * minutes on a 1B model). */
static void bench_at(Model *t, int at, int reps) {
    GgufModel *m = gguf_model_of(t);
    const ModelConfig *c = &t->config;
    int tokens[GGUF_PREFILL_BATCH];
    for (int i = 0; i < GGUF_PREFILL_BATCH; i++) tokens[i] = 1 + i * 7919 % (c->vocab_size - 1);
    model_prefill(t, tokens, GGUF_PREFILL_BATCH, 0);
    for (int l = 0; l < c->n_layers; l++)
        for (int kv = 0; kv < c->n_kv_heads; kv++)
            for (int p = GGUF_PREFILL_BATCH; p < at && p < m->layers[l].kv_slots;
                 p++) { /* a ring: its slots */
                size_t from = kv_offset(m, l, kv, p % GGUF_PREFILL_BATCH), to = kv_offset(m, l, kv, p);
                memcpy(m->key_cache + to, m->key_cache + from, m->kv_head_bytes);
                memcpy(m->value_cache + to, m->value_cache + from, m->kv_head_bytes);
            }
    /* Alternating rounds, the fastest of each: other work on the machine
     * slows single rounds down, never speeds them up. */
    double first = 1e30, late = 1e30, first_cpu = 1e30, late_cpu = 1e30, cpu;
    for (int round = 0; round < 3; round++) {
        first = fmin(first, decode_at(t, 0, reps, &cpu));
        first_cpu = fmin(first_cpu, cpu);
        late = fmin(late, decode_at(t, at, reps, &cpu));
        late_cpu = fmin(late_cpu, cpu);
    }
    printf(
        "decode, %s KV cache: position 0 %.2f ms/token, position %d %.2f ms/token (%+.1f%%); CPU time %.2f / "
        "%.2f ms (%+.1f%%)\n",
        kv_type_name(model_kv_type(t)), 1e3 * first, at, 1e3 * late, 100.0 * (late / first - 1.0),
        1e3 * first_cpu, 1e3 * late_cpu, 100.0 * (late_cpu / first_cpu - 1.0));
    /* The last step ran at `at`: its logits must all be finite. */
    int finite = 1;
    double largest = 0;
    for (int i = 0; i < c->vocab_size; i++) {
        finite &= isfinite(model_logits(t)[i]);
        largest = fmax(largest, fabs((double)model_logits(t)[i]));
    }
    printf("logits at position %d: %s (max |logit| %.3g); KV cache %.1f MiB for %d positions\n", at,
           finite ? "all finite" : "NOT FINITE", largest, m->kv_bytes / 1048576.0, c->seq_len);
}

/* Reports a bad command line; main returns this. */
__attribute__((format(printf, 1, 2))) static int bad_argument(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "bench_forward: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

/* Frees the model and its file, returns rc (main's way out once loaded). */
static int finish(LoadedModel *loaded, void *data, int rc) {
    loaded_model_close(loaded);
    free(data);
    return rc;
}

int main(int argc, char **argv) {
    const char *path = NULL, *kernel = "auto";
    int positions = 256, group_size = 0, prefill = 0, prefill_only = 0, threads = 1, at = 0, kv = -1, ctx = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-n") && value) {
            if (positive_int(argv[++i], &positions) != 0) return bad_argument("-n needs a positive number");
        } else if ((!strcmp(a, "-k") || !strcmp(a, "--kernels")) && value) {
            kernel = argv[++i];
        } else if (!strcmp(a, "--q8")) {
            group_size = 32;
            if (value && value[0] >= '0' && value[0] <= '9' && positive_int(argv[++i], &group_size) != 0)
                return bad_argument("--q8 group size must be a positive number");
        } else if ((!strcmp(a, "--prefill") || !strcmp(a, "--prefill-only")) && value) {
            prefill_only = !strcmp(a, "--prefill-only");
            if (positive_int(argv[++i], &prefill) != 0)
                return bad_argument("--prefill needs a positive number");
        } else if (!strcmp(a, "--threads") && value) {
            if (positive_int(argv[++i], &threads) != 0 || threads > THREAD_POOL_MAX)
                return bad_argument("--threads must be in [1, %d]", THREAD_POOL_MAX);
        } else if (!strcmp(a, "--kv") && value) {
            if ((kv = kv_type_parse(argv[++i])) < 0) return bad_argument("--kv is f16, q8_0 or f32");
        } else if (!strcmp(a, "--at") && value) {
            if (positive_int(argv[++i], &at) != 0) return bad_argument("--at needs a positive position");
        } else if (!strcmp(a, "--ctx") && value) {
            if (positive_int(argv[++i], &ctx) != 0) return bad_argument("--ctx needs a positive number");
        } else if (a[0] != '-' && !path) {
            path = a;
        } else {
            fprintf(stderr, "bench_forward: bad argument '%s'\n%s", a, usage);
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "%s", usage);
        return 2;
    }
    int swar = !strcmp(kernel, "sse2-swar"), pmaddwd = !strcmp(kernel, "sse2-pmaddwd");
    int isa = !strcmp(kernel, "auto") ? (int)kernels_probe(NULL, NULL) /* natively the widest set */
              : swar || pmaddwd       ? ISA_SSE2
                                      : isa_parse(kernel);
    if (isa < 0 || !isa_usable(isa)) {
        fprintf(stderr, "bench_forward: kernel set '%s' unknown or not supported by this CPU\n", kernel);
        return 2;
    }
    kernels_use(isa);
    if (swar || pmaddwd) kernels_sse2_gemm_force(swar ? KERNELS_GEMM_SWAR : KERNELS_GEMM_PMADDWD);

    size_t size = 0;
    void *data = file_read_all(path, &size);
    if (!data) {
        fprintf(stderr, "bench_forward: cannot read %s\n", path);
        return 1;
    }
    LoadedModel loaded;
    char err[256];
    LoadOptions options = {ctx, NULL, 0, -1, 0};
    if (loaded_model_open(&loaded, data, size, &options, NULL, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "bench_forward: %s: %s\n", path, err);
        free(data);
        return 1;
    }
    Model *t = &loaded.model;
    if (group_size && model_quantize(t, group_size, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_forward: %s: %s\n", path, err);
        return finish(&loaded, data, 1);
    }
    if ((kv >= 0 || at) && !gguf_model_of(t)) {
        fprintf(stderr, "bench_forward: --kv and --at are for GGUF models\n");
        return finish(&loaded, data, 2);
    }
    if (kv >= 0 && model_set_kv_type(t, (uint32_t)kv, err, sizeof err) != 0) {
        fprintf(stderr, "bench_forward: %s: %s\n", path, err);
        return finish(&loaded, data, 1);
    }
    const ModelConfig *c = &t->config;
    if (at >= c->seq_len || at < 0) {
        fprintf(stderr, "bench_forward: --at %d is past the context (%d)\n", at, c->seq_len);
        return finish(&loaded, data, 2);
    }
    if (positions > c->seq_len) positions = c->seq_len;
    if (prefill > c->seq_len) prefill = c->seq_len;
    printf("model: %s version %d dim %d hidden %d layers %d heads %d/%d vocab %d seq %d, %.2fM params, state "
           "%.1f MB, matmuls %s",
           path, c->version, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size,
           c->seq_len, model_param_count(t) / 1e6, model_state_bytes(t) / 1e6, model_matmul_name(t));
    if (model_quant_group_size(t)) printf(" (group %d)", model_quant_group_size(t));
    printf("\n");

    thread_pool_start(threads);
    if (at) {
        bench_at(t, at, positions);
        thread_pool_stop();
        return finish(&loaded, data, 0);
    }
    int token = 1;
    double start = now_seconds();
    for (int pos = 0; pos < positions; pos++) token = argmax(model_forward(t, token, pos), c->vocab_size);
    double elapsed = now_seconds() - start;
    printf("kernels %s, %d thread%s: %d positions in %.3f s: %.3f ms/token, %.1f tok/s\n",
           kernels_active()->name, threads, threads == 1 ? "" : "s", positions, elapsed,
           1e3 * elapsed / positions, positions / elapsed);
    if (prefill) bench_prefill(t, prefill, prefill_only);
    thread_pool_stop();
    return finish(&loaded, data, 0);
}
