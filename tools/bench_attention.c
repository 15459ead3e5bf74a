/* bench_attention - the f16 or q8_0 attention kernels alone, for the
 * Llama-3.2-1B shape by default (16 layers x 8 key/value heads, 4 query
 * heads each, head size 64): one token's attention over P positions, every
 * head's cache its own memory, as in decode. Prints the thread CPU time per
 * token (best of R), which other work on a shared machine stretches less
 * than wall time.
 *   bench_attention [--positions P] [--reps R] [--kernels scalar|sse2|avx2|avx512]
 *                   [--kv f16|q8_0] [--layers L] [--kv-heads K] [--group G] [--head-size HS] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"

static double thread_cpu_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const KernelSet *kernel_set(const char *name) {
    int isa = isa_parse(name);
    return isa >= 0 && isa_usable(isa) ? kernels_of(isa) : NULL;
}

static float uniform(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(*state >> 40) / (float)(1 << 24) - 0.5f;
}

int main(int argc, char **argv) {
    int positions = 4097, reps = 5, layers = 16, kv_heads = 8, group = 4, hs = 64, kv = GGML_TYPE_F16;
    const char *set_name = isa_name(isa_widest() >= ISA_AVX512 ? ISA_AVX512 : ISA_AVX2);
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *flag = argv[i], *value = argv[i + 1];
        if (!strcmp(flag, "--positions"))
            positions = atoi(value);
        else if (!strcmp(flag, "--reps"))
            reps = atoi(value);
        else if (!strcmp(flag, "--kernels"))
            set_name = value;
        else if (!strcmp(flag, "--kv"))
            kv = kv_type_parse(value);
        else if (!strcmp(flag, "--layers"))
            layers = atoi(value);
        else if (!strcmp(flag, "--kv-heads"))
            kv_heads = atoi(value);
        else if (!strcmp(flag, "--group"))
            group = atoi(value);
        else if (!strcmp(flag, "--head-size"))
            hs = atoi(value);
        else
            return fprintf(stderr, "bench_attention: unknown flag %s\n", flag), 2;
    }
    const KernelSet *ks = kernel_set(set_name);
    size_t row = (size_t)kv_row_bytes((uint32_t)kv, (uint64_t)hs);
    if (!ks || (kv != GGML_TYPE_F16 && kv != GGML_TYPE_Q8_0) || row == 0 || positions < 1 || reps < 1 ||
        layers < 1 || kv_heads < 1 || group < 1 || hs < 1)
        return fprintf(stderr, "bench_attention: bad arguments (kernels %s, kv type %d)\n", set_name, kv), 2;
    size_t head = row * (size_t)positions, heads = (size_t)layers * kv_heads;
    uint8_t *cache = malloc(2 * head * heads);
    float *x = malloc(sizeof(float) * hs), *q = malloc(sizeof(float) * hs * group),
          *out = malloc(sizeof(float) * hs * group), *att = malloc(sizeof(float) * positions * group);
    if (!cache || !x || !q || !out || !att) return fprintf(stderr, "bench_attention: out of memory\n"), 1;
    uint64_t seed = 1;
    for (size_t r = 0; r < 2 * heads * positions; r++) {
        for (int i = 0; i < hs; i++) x[i] = 4.0f * uniform(&seed);
        kv_store_row((uint32_t)kv, cache + r * row, x, hs);
    }
    for (int i = 0; i < hs * group; i++) q[i] = uniform(&seed);
    attend_kv_fn *attend = kv == GGML_TYPE_F16 ? ks->attend_f16 : ks->attend_q8_0;
    double best = 1e30, checksum = 0;
    for (int r = 0; r < reps; r++) {
        double start = thread_cpu_seconds();
        for (size_t h = 0; h < heads; h++) {
            const uint8_t *keys = cache + 2 * head * h;
            attend(out, att, positions, q, group, keys, keys + head, row, positions, hs, 0.125f);
            checksum += out[0];
        }
        double t = thread_cpu_seconds() - start;
        best = t < best ? t : best;
    }
    printf("%s %s attention, %d positions, %d layers x %d kv heads x %d query heads, head size %d: %.2f ms "
           "CPU per token (best of %d; checksum %.6g)\n",
           ks->name, kv_type_name((uint32_t)kv), positions, layers, kv_heads, group, hs, best * 1e3, reps,
           checksum / reps);
    free(cache), free(x), free(q), free(out), free(att);
    return 0;
}
