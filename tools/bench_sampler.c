/* bench_sampler - time of one sampled token (llm/generate/sampler.c) over a
 * Llama 3 sized vocabulary: logits drawn from a normal distribution of a
 * given spread (small: nearly flat, as a random-weight model gives; large:
 * peaked, as a trained model gives), temperature and top-p as given.
 *   bench_sampler [--vocab N] [--spread S] [--temp T] [--topp P] [--runs R]
 * Prints the median microseconds per sampler_sample call. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/generate/sampler.h"

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Box-Muller from a fixed LCG, so every run times the same logits. */
static void fill_normal(float *x, int n, float spread) {
    uint64_t s = 88172645463325252ull;
    for (int i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u1 = ((s >> 11) + 1.0) / 9007199254740993.0;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u2 = (s >> 11) / 9007199254740992.0;
        x[i] = (float)(spread * sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2));
    }
}

int main(int argc, char **argv) {
    int vocab = 128256, runs = 200;
    float spread = 3.0f;
    SamplerConfig c = sampler_default_config();
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--vocab"))
            vocab = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--spread"))
            spread = (float)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--temp"))
            c.temperature = (float)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--topp"))
            c.topp = (float)atof(argv[i + 1]);
        else if (!strcmp(argv[i], "--runs"))
            runs = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "bench_sampler: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    Sampler s;
    char err[128];
    if (sampler_create(&s, vocab, &c, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    float *logits = malloc((size_t)vocab * sizeof *logits), *work = malloc((size_t)vocab * sizeof *work);
    double *us = malloc((size_t)runs * sizeof *us);
    fill_normal(logits, vocab, spread);
    long checksum = 0;
    for (int r = 0; r < runs; r++) {
        memcpy(work, logits, (size_t)vocab * sizeof *work);
        double t0 = now_us();
        checksum += sampler_sample(&s, work);
        us[r] = now_us() - t0;
    }
    qsort(us, (size_t)runs, sizeof *us, by_value);
    printf("vocab %d spread %.2f temp %.2f topp %.2f: %.1f us per token (median of %d; token sum %ld)\n",
           vocab, spread, c.temperature, c.topp, us[runs / 2], runs, checksum);
    sampler_destroy(&s);
    return 0;
}
