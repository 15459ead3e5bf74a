/* ref_logits.h - a model's logits at every position of a token list against
 * a reference logits file (llama.cpp's, float32, positions x vocab): the
 * largest and mean absolute difference and how often the argmax agrees.
 * Shared by the GGUF model tests (gguf-tests, gguf-arch, gguf-arch2). */
#ifndef TESTS_HOST_REF_LOGITS_H
#define TESTS_HOST_REF_LOGITS_H

#include <stdio.h>
#include <stdlib.h>

#include "llm/compute/cpu_features.h"
#include "llm/compute/kernels.h"
#include "llm/model/model.h"
#include "tests/host/check.h"
#include "tests/host/llm_test_util.h"

typedef struct {
    double max, mean;
    int top1;
} LogitsDiff;

/* The widest kernel level whose GGUF paths run on this CPU: their AVX-512
 * code also needs VNNI. */
__attribute__((unused)) static int gguf_top_level(void) {
    int top = isa_widest();
    return top == ISA_AVX512 && !cpu_features()->avx512vnni ? ISA_AVX2 : top;
}

/* Up to cap whitespace-separated ids from dir/rel; the count read. */
__attribute__((unused)) static int read_ids_in(const char *dir, const char *rel, int *ids, int cap) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "r");
    int got = 0;
    while (f && got < cap && fscanf(f, "%d", &ids[got]) == 1) got++;
    if (f) fclose(f);
    return got;
}

/* Feeds tokens[0..n_pos-1] one position at a time from position 0 and
 * compares each position's logits with dir/ref_rel; -1 when that file is
 * missing or of the wrong size. A NaN makes max NaN, which fails every
 * tolerance. */
__attribute__((unused)) static int logits_diff(Model *t, const char *dir, const char *ref_rel,
                                               const int *tokens, int n_pos, LogitsDiff *d) {
    size_t size;
    float *ref = read_file_in(dir, ref_rel, &size);
    int vocab = t->config.vocab_size;
    *d = (LogitsDiff){0, 0, 0};
    if (!ref || size != (size_t)n_pos * vocab * sizeof(float)) {
        free(ref);
        return -1;
    }
    double sum = 0;
    for (int pos = 0; pos < n_pos; pos++) {
        const float *logits = model_forward(t, tokens[pos], pos);
        const float *r = ref + (size_t)pos * vocab;
        for (int i = 0; i < vocab; i++) {
            double e = logits[i] > r[i] ? logits[i] - r[i] : r[i] - logits[i];
            if (!(e <= d->max)) d->max = e; /* NaN sticks */
            sum += e;
        }
        d->top1 += argmax(logits, vocab) == argmax(r, vocab);
    }
    d->mean = sum / ((double)n_pos * vocab);
    free(ref);
    return 0;
}

/* One check: logits_diff within max_tol and mean_tol, and at least
 * min_top1 positions with the reference's argmax. */
__attribute__((unused)) static void check_logits(Model *t, const char *name, const char *dir,
                                                 const char *ref_rel, const int *tokens, int n_pos,
                                                 double max_tol, double mean_tol, int min_top1) {
    LogitsDiff d;
    if (logits_diff(t, dir, ref_rel, tokens, n_pos, &d) != 0) {
        check(0, name, "reference %s missing or wrong size", ref_rel);
        return;
    }
    check(d.max <= max_tol && d.mean <= mean_tol && d.top1 >= min_top1, name,
          "max %.3g (tol %.3g) mean %.3g (tol %.3g) top1 %d/%d (need %d)", d.max, max_tol, d.mean, mean_tol,
          d.top1, n_pos, min_top1);
}

#endif
