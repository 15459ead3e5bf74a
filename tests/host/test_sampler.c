/* test_sampler.c - llama2.c's sampler (argmax, multinomial, top-p, one coin per
 * token) and the extensions (top-k, min-p, repetition penalty). Expected
 * values come from formulas and from xorshift64* coins computed in Python:
 * seed 42 gives 0.33908522, 0.78225583, 0.79013699, 0.94404262, 0.76439363. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/generate/sampler.h"
#include "tests/host/llm_test_util.h"

/* An independent xorshift64* (the test's own copy). */
static uint64_t reference_state;
static float reference_coin(void) {
    reference_state ^= reference_state >> 12;
    reference_state ^= reference_state << 25;
    reference_state ^= reference_state >> 27;
    uint32_t u = (uint32_t)((reference_state * 0x2545F4914F6CDD1Dull) >> 32);
    return (float)(u >> 8) / 16777216.0f;
}

static const float base_probs[4] = {0.1f, 0.2f, 0.3f, 0.4f};

static void fill_log_probs(float *logits) {
    for (int i = 0; i < 4; i++) logits[i] = logf(base_probs[i]);
}

static Sampler make_sampler(float temperature, float topp, uint64_t seed) {
    SamplerConfig c = sampler_default_config();
    c.temperature = temperature;
    c.topp = topp;
    c.seed = seed;
    Sampler s;
    char err[128];
    if (sampler_create(&s, 4, &c, err, sizeof err) != 0) {
        printf("FAIL - sampler_create: %s\n", err);
        exit(1);
    }
    return s;
}

static void test_pieces(void) {
    float ties[5] = {1, 3, 2, 3, 0};
    check(sample_argmax(ties, 5) == 1, "argmax takes the first maximum", "got %d want %d",
          sample_argmax(ties, 5), 1);
    float neg[3] = {-5, -1, -3};
    check(sample_argmax(neg, 3) == 1, "argmax of negative logits", "got %d want %d", sample_argmax(neg, 3),
          1);

    static const struct {
        float coin;
        int want;
    } mult[] = {{0.0f, 0}, {0.05f, 0}, {0.15f, 1}, {0.35f, 2}, {0.65f, 3}, {0.999f, 3}};
    for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "sample_mult coin %.3f", mult[i].coin);
        int got = sample_mult(base_probs, 4, mult[i].coin);
        check(got == mult[i].want, name, "got %d want %d", got, mult[i].want);
    }
    float short_mass[2] = {0.25f, 0.25f};
    check(sample_mult(short_mass, 2, 0.75f) == 1, "sample_mult returns n-1 when the cdf falls short",
          "got %d want %d", sample_mult(short_mass, 2, 0.75f), 1);

    /* probs {0.05, 0.3, 0.5, 0.15}, top-p 0.7: cutoff 0.1 keeps 0.5, 0.3, 0.15;
     * cumulative 0.5, 0.8 > 0.7 so the nucleus is {0.5, 0.3} with mass 0.8. */
    float shuffled[4] = {0.05f, 0.3f, 0.5f, 0.15f};
    ProbIndex scratch[4];
    static const struct {
        float coin;
        int want;
    } topp[] = {{0.0f, 2}, {0.6f, 2}, {0.64f, 1}, {0.7f, 1}, {0.999f, 1}};
    for (size_t i = 0; i < sizeof topp / sizeof topp[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "sample_topp 0.7 coin %.3f", topp[i].coin);
        int got = sample_topp(shuffled, 4, 0.7f, scratch, topp[i].coin);
        check(got == topp[i].want, name, "got %d want %d", got, topp[i].want);
    }
    /* A nucleus that needs everything: top-p 0.99 with coin near 1 reaches the smallest token. */
    int got = sample_topp(shuffled, 4, 0.99f, scratch, 0.999f);
    check(got == 0, "sample_topp 0.99 can reach the smallest token", "got %d want %d", got, 0);
    /* Equal probabilities keep index order (a stable sort), so results do not depend on qsort. */
    float equal[4] = {0.25f, 0.25f, 0.25f, 0.25f};
    got = sample_topp(equal, 4, 0.3f, scratch, 0.1f);
    check(got == 0, "sample_topp ties resolve to the lowest index", "got %d want %d", got, 0);

    float x[3] = {1.0f, 2.0f, 3.0f};
    sampler_softmax(x, 3);
    double z = exp(1) + exp(2) + exp(3);
    check_plain(fabs(x[0] - exp(1) / z) < 1e-6 && fabs(x[2] - exp(3) / z) < 1e-6, "softmax",
                "wrong probabilities");
}

static void test_seeded_sequences(void) {
    /* Coins for seed 42: 0.339, 0.782, 0.790, 0.944, 0.764. Plain multinomial
     * over cdf {0.1, 0.3, 0.6, 1.0} gives 2, 3, 3, 3, 3. */
    Sampler s = make_sampler(1.0f, 1.0f, 42);
    int want_mult[5] = {2, 3, 3, 3, 3};
    int ok = 1;
    for (int i = 0; i < 5; i++) {
        float logits[4];
        fill_log_probs(logits);
        if (sampler_sample(&s, logits) != want_mult[i]) ok = 0;
    }
    check_plain(ok, "seed 42, top-p 1: multinomial sequence 2 3 3 3 3", "sequence differs");
    sampler_destroy(&s);

    /* Top-p 0.5: nucleus {0.4, 0.3}, mass 0.7; r = coin * 0.7 -> 3, 2, 2, 2, 2. */
    s = make_sampler(1.0f, 0.5f, 42);
    int want_topp[5] = {3, 2, 2, 2, 2};
    ok = 1;
    for (int i = 0; i < 5; i++) {
        float logits[4];
        fill_log_probs(logits);
        if (sampler_sample(&s, logits) != want_topp[i]) ok = 0;
    }
    check_plain(ok, "seed 42, top-p 0.5: nucleus sequence 3 2 2 2 2", "sequence differs");
    sampler_destroy(&s);

    /* Exactly one coin per sampled token, none when greedy. */
    s = make_sampler(1.0f, 0.9f, 1234);
    reference_state = 1234;
    for (int i = 0; i < 37; i++) {
        float logits[4];
        fill_log_probs(logits);
        sampler_sample(&s, logits);
        reference_coin();
    }
    check_plain(s.rng_state == reference_state, "one coin per sampled token", "rng state differs");
    sampler_destroy(&s);
    s = make_sampler(0.0f, 0.9f, 1234);
    int greedy_ok = 1;
    for (int i = 0; i < 10; i++) {
        float logits[4];
        fill_log_probs(logits);
        if (sampler_sample(&s, logits) != 3) greedy_ok = 0;
    }
    check_plain(greedy_ok, "temperature 0 is argmax", "another token was chosen");
    check_plain(s.rng_state == 1234, "greedy sampling draws no coins", "rng state moved");
    sampler_destroy(&s);
}

static void test_distribution(void) {
    Sampler s = make_sampler(1.0f, 0.0f, 7);
    int counts[4] = {0};
    const int draws = 40000;
    for (int i = 0; i < draws; i++) {
        float logits[4];
        fill_log_probs(logits);
        counts[sampler_sample(&s, logits)]++;
    }
    int ok = 1;
    for (int i = 0; i < 4; i++)
        if (fabs((double)counts[i] / draws - base_probs[i]) > 0.01) ok = 0;
    char why[128];
    snprintf(why, sizeof why, "counts %d %d %d %d", counts[0], counts[1], counts[2], counts[3]);
    check_plain(ok, "multinomial frequencies match the distribution (40000 draws)", why);
    sampler_destroy(&s);

    /* Temperature 0.5 doubles the logits: softmax([2, 0]) = [0.8808, 0.1192]. */
    SamplerConfig c = sampler_default_config();
    c.temperature = 0.5f;
    sampler_create(&s, 2, &c, NULL, 0);
    float logits[2] = {1.0f, 0.0f};
    sampler_sample(&s, logits);
    check_plain(fabs(logits[0] - 1.0 / (1.0 + exp(-2.0))) < 1e-6, "temperature divides the logits",
                "wrong probability");
    sampler_destroy(&s);
}

static Sampler make_extended(int top_k, float min_p, float topp) {
    SamplerConfig c = sampler_default_config();
    c.top_k = top_k;
    c.min_p = min_p;
    c.topp = topp;
    c.seed = 99;
    Sampler s;
    sampler_create(&s, 4, &c, NULL, 0);
    return s;
}

static void count_draws(Sampler *s, int *counts, int draws) {
    memset(counts, 0, 4 * sizeof(int));
    for (int i = 0; i < draws; i++) {
        float logits[4];
        fill_log_probs(logits);
        counts[sampler_sample(s, logits)]++;
    }
}

static void test_extensions(void) {
    int counts[4];
    Sampler s = make_extended(1, 0, 1.0f);
    count_draws(&s, counts, 2000);
    check_plain(counts[3] == 2000, "top-k 1 is always the most probable token", "other tokens drawn");
    sampler_destroy(&s);

    s = make_extended(2, 0, 1.0f);
    count_draws(&s, counts, 20000);
    double share = (double)counts[3] / 20000;
    check_plain(counts[0] == 0 && counts[1] == 0 && fabs(share - 0.4 / 0.7) < 0.015,
                "top-k 2 keeps the two best, renormalised", "wrong counts");
    sampler_destroy(&s);

    /* min-p 0.6: threshold 0.6 * 0.4 = 0.24 keeps 0.3 and 0.4. */
    s = make_extended(0, 0.6f, 1.0f);
    count_draws(&s, counts, 20000);
    check_plain(counts[0] == 0 && counts[1] == 0 && counts[2] > 0 && counts[3] > 0,
                "min-p drops tokens below min_p * top", "wrong counts");
    sampler_destroy(&s);

    /* top-k 3 then top-p 0.5 of the kept mass 0.9: 0.4 + 0.3 > 0.45 keeps two. */
    s = make_extended(3, 0, 0.5f);
    count_draws(&s, counts, 5000);
    check_plain(counts[0] == 0 && counts[1] == 0 && counts[2] > 0, "top-k combined with top-p",
                "wrong counts");
    sampler_destroy(&s);

    /* Repetition penalty, greedy: 2.0 seen -> 2.0 / 1.5 = 1.33 < 1.9. */
    SamplerConfig c = sampler_default_config();
    c.temperature = 0;
    c.repeat_penalty = 1.5f;
    c.repeat_last_n = 2;
    sampler_create(&s, 2, &c, NULL, 0);
    float logits[2] = {2.0f, 1.9f};
    sampler_accept(&s, 0);
    check(sampler_sample(&s, logits) == 1, "repeat penalty divides a positive logit", "got %d want %d", -1,
          1);
    float negative[2] = {-1.2f, -1.0f};
    sampler_accept(&s, 1); /* window 2: tokens 0 and 1 are both recent */
    sampler_accept(&s, 1);
    /* The window now holds 1, 1: only token 1 is penalised, once: -1.0 * 1.5 = -1.5 < -1.2. */
    check(sampler_sample(&s, negative) == 0, "repeat penalty multiplies a negative logit, window slides",
          "got %d want %d", -1, 0);
    check_plain(negative[1] == -1.5f, "a token repeated in the window is penalised once", "penalised twice");
    sampler_destroy(&s);

    char err[128] = "";
    c = sampler_default_config();
    c.temperature = -1;
    check_plain(sampler_create(&s, 4, &c, err, sizeof err) == -1 && err[0], "rejects a negative temperature",
                err);
    c = sampler_default_config();
    c.min_p = 2;
    check_plain(sampler_create(&s, 4, &c, err, sizeof err) == -1 && err[0], "rejects min-p > 1", err);
    c = sampler_default_config();
    check_plain(sampler_create(&s, 0, &c, err, sizeof err) == -1 && err[0], "rejects an empty vocabulary",
                err);
}

/* The nucleus by a full sort (libc's qsort; the order is total, index
 * breaking ties, so any sort gives it): llama2.c's sample_topp. */
static int by_prob_desc(const void *a, const void *b) {
    const ProbIndex *x = a, *y = b;
    if (x->prob != y->prob) return x->prob > y->prob ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int full_sort_topp(const float *probs, int n, float topp, ProbIndex *items, float coin) {
    const float cutoff = (1.0f - topp) / (n - 1);
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (probs[i] >= cutoff) items[kept++] = (ProbIndex){probs[i], i};
    qsort(items, (size_t)kept, sizeof *items, by_prob_desc);
    float cumulative = 0.0f;
    int last = kept - 1;
    for (int i = 0; i < kept; i++) {
        cumulative += items[i].prob;
        if (cumulative > topp) {
            last = i;
            break;
        }
    }
    float r = coin * cumulative, cdf = 0.0f;
    for (int i = 0; i <= last; i++) {
        cdf += items[i].prob;
        if (r < cdf) return items[i].index;
    }
    return items[last].index;
}

/* sample_topp (which sorts only the nucleus) against the full sort over a
 * Llama 3 sized vocabulary: flat to peaked logits, many equal
 * probabilities (ties go by index), top-p 0.5 / 0.9 / 0.99, and the same
 * coins for both. */
static void test_topp_equals_full_sort(void) {
    enum { N = 128256 };
    float *logits = malloc(sizeof(float) * N);
    ProbIndex *a = malloc(sizeof(ProbIndex) * N), *b = malloc(sizeof(ProbIndex) * N);
    static const float spreads[] = {0.3f, 2.0f, 6.0f, -4.0f}; /* negative: rounded, so values repeat */
    static const float topps[] = {0.5f, 0.9f, 0.99f};
    int tried = 0, differ = 0;
    reference_state = 7;
    for (unsigned d = 0; d < sizeof spreads / sizeof *spreads; d++) {
        for (int i = 0; i < N; i++) {
            float u = reference_coin() + reference_coin() + reference_coin() - 1.5f;
            logits[i] = spreads[d] > 0 ? spreads[d] * u : roundf(-spreads[d] * u * 2.0f);
        }
        sampler_softmax(logits, N);
        for (unsigned t = 0; t < sizeof topps / sizeof *topps; t++)
            for (int k = 0; k < 8; k++) {
                float coin = k == 0 ? 0.0f : k == 1 ? 0.99999994f : reference_coin();
                tried++;
                differ +=
                    sample_topp(logits, N, topps[t], a, coin) != full_sort_topp(logits, N, topps[t], b, coin);
            }
    }
    check(differ == 0, "top-p over 128256 tokens picks what a full sort picks", "%d of %d draws differ",
          differ, tried);
    free(logits), free(a), free(b);
}

int main(void) {
    test_topp_equals_full_sort();
    test_pieces();
    test_seeded_sequences();
    test_distribution();
    test_extensions();
    return failures ? 1 : 0;
}
