/* bench_forward - times transformer_forward on a checkpoint file.
 * Usage: bench_forward MODEL.bin [-n POSITIONS] [-k auto|scalar|sse2|avx2]
 * Feeds its own greedy argmax back in (from BOS) and prints ms/token, tok/s. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/kernels.h"
#include "llm/transformer.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *buf = len > 0 ? malloc((size_t)len) : NULL;
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *size = (size_t)len;
    return buf;
}

int main(int argc, char **argv) {
    const char *path = NULL, *kernel = "auto";
    int positions = 256;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            positions = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-k") && i + 1 < argc)
            kernel = argv[++i];
        else if (argv[i][0] != '-' && !path)
            path = argv[i];
        else {
            fprintf(stderr, "usage: bench_forward MODEL.bin [-n POSITIONS] [-k auto|scalar|sse2|avx2]\n");
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: bench_forward MODEL.bin [-n POSITIONS] [-k auto|scalar|sse2|avx2]\n");
        return 2;
    }
    int has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (!strcmp(kernel, "auto"))
        kernels_select(has_avx2);
    else if (!strcmp(kernel, "sse2"))
        kernels_select(0);
    else if (!strcmp(kernel, "avx2") && has_avx2)
        kernels_select(1);
    else if (!strcmp(kernel, "scalar"))
        kernels = &kernels_scalar;
    else {
        fprintf(stderr, "bench_forward: kernel set '%s' unknown or not supported by this CPU\n", kernel);
        return 2;
    }

    size_t size = 0;
    void *data = read_file(path, &size);
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
    const TransformerConfig *c = &t.config;
    if (positions > c->seq_len) positions = c->seq_len;
    if (positions < 1) positions = 1;
    printf("model: %s version %d dim %d hidden %d layers %d heads %d/%d vocab %d seq %d, %.2fM params, state "
           "%.1f MB\n",
           path, c->version, c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size,
           c->seq_len, transformer_param_count(&t) / 1e6, transformer_state_bytes(&t) / 1e6);

    int token = 1;
    double start = now_seconds();
    for (int pos = 0; pos < positions; pos++) {
        float *logits = transformer_forward(&t, token, pos);
        int best = 0;
        for (int i = 1; i < c->vocab_size; i++)
            if (logits[i] > logits[best]) best = i;
        token = best;
    }
    double elapsed = now_seconds() - start;
    printf("kernels %s: %d positions in %.3f s: %.3f ms/token, %.1f tok/s\n", kernels->name, positions,
           elapsed, 1e3 * elapsed / positions, positions / elapsed);
    transformer_free(&t);
    free(data);
    return 0;
}
