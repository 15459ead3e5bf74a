/* bench_forward - times the forward pass on a checkpoint file (llama2.c .bin or GGUF).
 * Usage: bench_forward MODEL.bin [-n POSITIONS] [--kernels auto|scalar|sse2|avx2|avx512]
 *                      [--q8 [GS]] [--prefill N] [--threads N]
 * Decode: feeds its own greedy argmax back in (from BOS), prints ms/token and
 * tok/s. --q8 quantises an fp32 model to int8 at load (group size GS, default
 * 32). --prefill N also times one batched transformer_prefill of N tokens
 * against N single transformer_forward calls, and checks both give the same
 * last logits. --threads N runs the matmuls and attention on N threads
 * (default 1). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/kernels.h"
#include "llm/transformer.h"
#include "tools/file_util.h"
#include "tools/thread_pool.h"

static const char *usage =
    "usage: bench_forward MODEL.bin|MODEL.gguf [-n POSITIONS] [--kernels auto|scalar|sse2|avx2|avx512] "
    "[--q8 [GS]] [--prefill N] [--threads N]\n";

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

/* Times prefill of n tokens vs n single forwards from position 0. */
static void bench_prefill(Transformer *t, int n) {
    const TransformerConfig *c = &t->config;
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
    double start = now_seconds();
    for (int pos = 0; pos < n; pos++) transformer_forward(t, tokens[pos], pos);
    double single_s = now_seconds() - start;
    memcpy(single, t->state.logits, sizeof(float) * c->vocab_size);
    start = now_seconds();
    int rc = transformer_prefill(t, tokens, n, 0);
    double batch_s = now_seconds() - start;
    double worst = 0, range = 0;
    for (int i = 0; i < c->vocab_size; i++) {
        worst = fmax(worst, fabs((double)single[i] - t->state.logits[i]));
        range = fmax(range, fabs((double)single[i]));
    }
    printf("prefill %d tokens: %d single forwards %.3f s (%.1f tok/s), batched prefill %.3f s (%.1f tok/s): "
           "%.2fx; last logits max |diff| %.3g (max |logit| %.3g)%s\n",
           n, n, single_s, n / single_s, batch_s, n / batch_s, single_s / batch_s, worst, range,
           rc == 0 ? "" : " PREFILL FAILED");
    free(tokens), free(single);
}

int main(int argc, char **argv) {
    const char *path = NULL, *kernel = "auto";
    int positions = 256, group_size = 0, prefill = 0, threads = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-n") && value) {
            if (positive_int(argv[++i], &positions) != 0) {
                fprintf(stderr, "bench_forward: -n needs a positive number\n%s", usage);
                return 2;
            }
        } else if ((!strcmp(a, "-k") || !strcmp(a, "--kernels")) && value) {
            kernel = argv[++i];
        } else if (!strcmp(a, "--q8")) {
            group_size = 32;
            if (value && value[0] >= '0' && value[0] <= '9' && positive_int(argv[++i], &group_size) != 0) {
                fprintf(stderr, "bench_forward: --q8 group size must be a positive number\n%s", usage);
                return 2;
            }
        } else if (!strcmp(a, "--prefill") && value) {
            if (positive_int(argv[++i], &prefill) != 0) {
                fprintf(stderr, "bench_forward: --prefill needs a positive number\n%s", usage);
                return 2;
            }
        } else if (!strcmp(a, "--threads") && value) {
            if (positive_int(argv[++i], &threads) != 0 || threads > THREAD_POOL_MAX) {
                fprintf(stderr, "bench_forward: --threads must be in [1, %d]\n%s", THREAD_POOL_MAX, usage);
                return 2;
            }
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
    int widest = kernels_widest_level();
    if (!strcmp(kernel, "auto")) /* natively the widest set is the fastest */
        kernels_select_level(widest);
    else if (!strcmp(kernel, "sse2"))
        kernels_select_level(KERNELS_SSE2);
    else if (!strcmp(kernel, "avx2") && widest >= KERNELS_AVX2)
        kernels_select_level(KERNELS_AVX2);
    else if (!strcmp(kernel, "avx512") && widest >= KERNELS_AVX512)
        kernels_select_level(KERNELS_AVX512);
    else if (!strcmp(kernel, "scalar"))
        kernels = &kernels_scalar;
    else {
        fprintf(stderr, "bench_forward: kernel set '%s' unknown or not supported by this CPU\n", kernel);
        return 2;
    }

    size_t size = 0;
    void *data = file_read_all(path, &size);
    if (!data) {
        fprintf(stderr, "bench_forward: cannot read %s\n", path);
        return 1;
    }
    Transformer t;
    char err[256];
    if (transformer_load(&t, data, size, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_forward: %s: %s\n", path, err);
        free(data);
        return 1;
    }
    if (group_size && transformer_quantize(&t, group_size, err, sizeof(err)) != 0) {
        fprintf(stderr, "bench_forward: %s: %s\n", path, err);
        transformer_free(&t);
        free(data);
        return 1;
    }
    const TransformerConfig *c = &t.config;
    if (positions > c->seq_len) positions = c->seq_len;
    if (prefill > c->seq_len) prefill = c->seq_len;
    printf("model: %s version %d dim %d hidden %d layers %d heads %d/%d vocab %d seq %d, %.2fM params, state "
           "%.1f MB, matmuls %s",
           path, c->version, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size,
           c->seq_len, transformer_param_count(&t) / 1e6, transformer_state_bytes(&t) / 1e6,
           transformer_matmul_name(&t));
    if (transformer_is_quantized(&t) && !t.gguf) printf(" (group %d)", t.quant_group_size);
    printf("\n");

    thread_pool_start(threads);
    int token = 1;
    double start = now_seconds();
    for (int pos = 0; pos < positions; pos++)
        token = argmax(transformer_forward(&t, token, pos), c->vocab_size);
    double elapsed = now_seconds() - start;
    printf("kernels %s, %d thread%s: %d positions in %.3f s: %.3f ms/token, %.1f tok/s\n", kernels->name,
           threads, threads == 1 ? "" : "s", positions, elapsed, 1e3 * elapsed / positions,
           positions / elapsed);
    if (prefill) bench_prefill(&t, prefill);
    thread_pool_stop();
    transformer_free(&t);
    free(data);
    return 0;
}
