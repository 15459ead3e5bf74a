/* sampler.c - llama2.c's sampler plus optional top-k, min-p and repetition penalty. */
#include "llm/generate/sampler.h"

#include "lib/format.h"
#include "lib/math.h"
#include "lib/rng.h"
#include "lib/stdlib.h"
#include "lib/string.h"

#define DEFAULT_SEED 0x2545F4914F6CDD1DULL
#define MAX_REPEAT_LAST_N 65536

SamplerConfig sampler_default_config(void) {
    SamplerConfig c = {0};
    c.temperature = 1.0f;
    c.topp = 0.9f;
    c.seed = DEFAULT_SEED;
    c.top_k = 0;
    c.min_p = 0.0f;
    c.repeat_penalty = 1.0f;
    c.repeat_last_n = 64;
    return c;
}

int sampler_create(Sampler *s, int vocab_size, const SamplerConfig *config, char *err, size_t err_size) {
    memset(s, 0, sizeof *s);
    const char *problem = NULL;
    if (vocab_size <= 0)
        problem = "sampler: vocabulary size must be positive";
    else if (!(config->temperature >= 0.0f))
        problem = "sampler: temperature must be >= 0";
    else if (config->top_k < 0)
        problem = "sampler: top-k must be >= 0";
    else if (!(config->min_p >= 0.0f && config->min_p <= 1.0f))
        problem = "sampler: min-p must be in [0, 1]";
    else if (!(config->repeat_penalty > 0.0f))
        problem = "sampler: repeat penalty must be > 0";
    else if (config->repeat_last_n < 0 || config->repeat_last_n > MAX_REPEAT_LAST_N)
        problem = "sampler: repeat window must be in [0, 65536]";
    if (problem) {
        if (err && err_size) strlcpy(err, problem, err_size);
        return -1;
    }

    size_t n = (size_t)vocab_size;
    size_t window = (size_t)config->repeat_last_n;
    s->block = malloc(n * sizeof(ProbIndex) + n * sizeof(uint32_t) + (window ? window : 1) * sizeof(int));
    if (!s->block) {
        if (err && err_size) strlcpy(err, "sampler: out of memory", err_size);
        return -1;
    }
    s->candidates = s->block;
    s->penalised_stamp = (uint32_t *)(s->candidates + n);
    s->recent = (int *)(s->penalised_stamp + n);
    memset(s->penalised_stamp, 0, n * sizeof(uint32_t));
    s->vocab_size = vocab_size;
    s->config = *config;
    s->rng_state = config->seed ? config->seed : DEFAULT_SEED;
    return 0;
}

void sampler_destroy(Sampler *s) {
    free(s->block);
    memset(s, 0, sizeof *s);
}

int sample_argmax(const float *probabilities, int n) {
    int best = 0;
    float best_value = probabilities[0];
    for (int i = 1; i < n; i++) {
        if (probabilities[i] > best_value) {
            best = i;
            best_value = probabilities[i];
        }
    }
    return best;
}

int sample_mult(const float *probabilities, int n, float coin) {
    float cdf = 0.0f;
    for (int i = 0; i < n; i++) {
        cdf += probabilities[i];
        if (coin < cdf) return i;
    }
    return n - 1; /* rounding: the cdf never reached the coin */
}

/* Descending probability; equal probabilities keep index order (what
 * llama2.c gets from glibc's stable merge sort), so results never depend on
 * the qsort implementation. */
static int compare_prob_desc(const void *a, const void *b) {
    const ProbIndex *x = a, *y = b;
    if (x->prob > y->prob) return -1;
    if (x->prob < y->prob) return 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int prob_better(const ProbIndex *a, const ProbIndex *b) {
    return compare_prob_desc(a, b) < 0;
}

static void swap_items(ProbIndex *a, ProbIndex *b) {
    ProbIndex t = *a;
    *a = *b;
    *b = t;
}

/* Moves the most probable items of items[0..count) to the front, in no
 * particular order, until the front holds more than `mass` of probability
 * (summed in double), and returns how many it holds: the top m in the
 * order compare_prob_desc sorts, everything else behind them. Quickselect,
 * expected O(count): the nucleus of a 128k vocabulary is usually a small
 * part of it, and only that part needs sorting. */
static int gather_best(ProbIndex *items, int count, double mass) {
    int lo = 0, hi = count; /* items[0..lo) are the best lo, summing to `before` <= mass */
    double before = 0.0;
    while (hi - lo > 16) {
        swap_items(&items[lo + (hi - lo) / 2], &items[hi - 1]);
        ProbIndex pivot = items[hi - 1];
        int store = lo;
        double sum = pivot.prob;
        for (int i = lo; i < hi - 1; i++)
            if (prob_better(&items[i], &pivot)) {
                sum += items[i].prob;
                swap_items(&items[i], &items[store++]);
            }
        swap_items(&items[store], &items[hi - 1]); /* the pivot, after everything better */
        if (before + sum > mass) {
            hi = store + 1;
        } else {
            before += sum;
            lo = store + 1;
        }
    }
    return hi;
}

/* The tokens whose probability is at least threshold, in id order, into
 * items; how many. */
static int gather_at_least(const float *probabilities, int n, float threshold, ProbIndex *items) {
    int count = 0;
    for (int i = 0; i < n; i++) {
        if (probabilities[i] >= threshold) {
            items[count].index = i;
            items[count].prob = probabilities[i];
            count++;
        }
    }
    return count;
}

/* The item among items[0..last] (sorted, best first) where the running sum
 * of probabilities passes r; the last one when rounding leaves r beyond it. */
static int draw_sorted(const ProbIndex *items, int last, float r) {
    float cdf = 0.0f;
    for (int i = 0; i <= last; i++) {
        cdf += items[i].prob;
        if (r < cdf) return items[i].index;
    }
    return items[last].index;
}

int sample_topp(const float *probabilities, int n, float topp, ProbIndex *scratch, float coin) {
    /* Tokens below this cannot be in the nucleus; dropping them first keeps the sort small. */
    const float cutoff = (1.0f - topp) / (n - 1);
    int kept = gather_at_least(probabilities, n, cutoff, scratch);
    if (kept == 0) return sample_mult(probabilities, n, coin); /* only with NaN probabilities */
    /* Sorted: the best `sorted` items (a little more than the nucleus's mass,
     * for the float sum's rounding), the rest only if the nucleus reaches
     * into them; either way the items are visited in the full sort's order. */
    int sorted = gather_best(scratch, kept, (double)topp + 1e-3);
    qsort(scratch, (size_t)sorted, sizeof(ProbIndex), compare_prob_desc);

    float cumulative = 0.0f;
    int last = kept - 1;
    for (int i = 0; i < kept; i++) {
        if (i == sorted) {
            qsort(scratch + sorted, (size_t)(kept - sorted), sizeof(ProbIndex), compare_prob_desc);
            sorted = kept;
        }
        cumulative += scratch[i].prob;
        if (cumulative > topp) {
            last = i;
            break;
        }
    }
    return draw_sorted(scratch, last, coin * cumulative);
}

void sampler_softmax(float *x, int n) {
    float max_value = x[0];
    for (int i = 1; i < n; i++)
        if (x[i] > max_value) max_value = x[i];
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        x[i] = expf(x[i] - max_value);
        sum += x[i];
    }
    for (int i = 0; i < n; i++) x[i] /= sum;
}

/* Min-heap order on the k kept items: the worst of them sits at the root. */
static void sift_down_worst(ProbIndex *items, int k, int i) {
    for (;;) {
        int child = 2 * i + 1;
        if (child >= k) break;
        if (child + 1 < k && prob_better(&items[child], &items[child + 1])) child++;
        if (!prob_better(&items[i], &items[child])) break;
        ProbIndex tmp = items[i];
        items[i] = items[child];
        items[child] = tmp;
        i = child;
    }
}

/* Moves the k best of items[0..count) to the front, O(count log k). */
static void select_top_k(ProbIndex *items, int count, int k) {
    for (int i = k / 2 - 1; i >= 0; i--) sift_down_worst(items, k, i);
    for (int j = k; j < count; j++) {
        if (!prob_better(&items[j], &items[0])) continue;
        items[0] = items[j];
        sift_down_worst(items, k, 0);
    }
}

/* The extension path (top-k and/or min-p, then top-p over what is left,
 * measured against the kept mass). Probabilities are already normalised. */
static int sample_filtered(Sampler *s, const float *probabilities, float coin) {
    int n = s->vocab_size;
    ProbIndex *items = s->candidates;
    float threshold = 0.0f;
    if (s->config.min_p > 0.0f) {
        float top = probabilities[sample_argmax(probabilities, n)];
        threshold = s->config.min_p * top;
    }
    int count = gather_at_least(probabilities, n, threshold, items);
    if (count == 0) return sample_argmax(probabilities, n);
    if (s->config.top_k > 0 && count > s->config.top_k) {
        select_top_k(items, count, s->config.top_k);
        count = s->config.top_k;
    }
    qsort(items, (size_t)count, sizeof(ProbIndex), compare_prob_desc);

    float mass = 0.0f;
    for (int i = 0; i < count; i++) mass += items[i].prob;
    int last = count - 1;
    float cumulative = 0.0f;
    float topp = s->config.topp;
    int use_topp = topp > 0.0f && topp < 1.0f;
    for (int i = 0; i < count; i++) {
        cumulative += items[i].prob;
        if (use_topp && cumulative > topp * mass) {
            last = i;
            break;
        }
    }
    return draw_sorted(items, last, coin * cumulative);
}

static void apply_repeat_penalty(Sampler *s, float *logits) {
    float penalty = s->config.repeat_penalty;
    if (penalty == 1.0f || s->recent_count == 0) return;
    if (++s->stamp == 0) { /* wrapped: forget every old stamp */
        memset(s->penalised_stamp, 0, (size_t)s->vocab_size * sizeof(uint32_t));
        s->stamp = 1;
    }
    for (int i = 0; i < s->recent_count; i++) {
        int token = s->recent[i];
        if (s->penalised_stamp[token] == s->stamp) continue; /* each distinct token once */
        s->penalised_stamp[token] = s->stamp;
        logits[token] = logits[token] > 0.0f ? logits[token] / penalty : logits[token] * penalty;
    }
}

void sampler_accept(Sampler *s, int token) {
    int window = s->config.repeat_last_n;
    if (s->config.repeat_penalty == 1.0f || window == 0 || token < 0 || token >= s->vocab_size) return;
    s->recent[s->recent_next] = token;
    s->recent_next = (s->recent_next + 1) % window;
    if (s->recent_count < window) s->recent_count++;
}

int sampler_sample(Sampler *s, float *logits) {
    int n = s->vocab_size;
    apply_repeat_penalty(s, logits);
    if (s->config.temperature == 0.0f) return sample_argmax(logits, n);

    for (int i = 0; i < n; i++) logits[i] /= s->config.temperature;
    sampler_softmax(logits, n);
    float coin = rng_f32(&s->rng_state); /* exactly one coin per sampled token */
    if (s->config.top_k > 0 || s->config.min_p > 0.0f) return sample_filtered(s, logits, coin);
    if (s->config.topp <= 0.0f || s->config.topp >= 1.0f) return sample_mult(logits, n, coin);
    return sample_topp(logits, n, s->config.topp, s->candidates, coin);
}
