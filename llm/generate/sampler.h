/* sampler.h - picks the next token from the logits, exactly like llama2.c's
 * sampler (argmax at temperature 0; otherwise softmax, one xorshift64* coin
 * per token, then plain multinomial or top-p). Top-k, min-p and a
 * repetition penalty are extensions, all off by default. */
#ifndef LLM_SAMPLER_H
#define LLM_SAMPLER_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    float temperature;    /* 0 = greedy */
    float topp;           /* nucleus; <= 0 or >= 1 disables it */
    uint64_t seed;        /* xorshift64* state; 0 is replaced by a fixed non-zero value */
    int top_k;            /* keep the k most probable tokens; 0 = off */
    float min_p;          /* drop tokens below min_p * the top probability; 0 = off */
    float repeat_penalty; /* 1 = off; logit > 0 ? logit / p : logit * p */
    int repeat_last_n;    /* how many recent tokens the penalty looks at */
} SamplerConfig;

typedef struct {
    float prob;
    int index;
} ProbIndex;

typedef struct {
    int vocab_size;
    SamplerConfig config;
    uint64_t rng_state;
    ProbIndex *candidates; /* vocab_size entries, for top-p/top-k */
    int *recent;           /* ring buffer of the last repeat_last_n tokens */
    int recent_count, recent_next;
    uint32_t *penalised_stamp; /* per token: last stamp it was penalised in */
    uint32_t stamp;
    void *block; /* the single allocation */
} Sampler;

/* llama2.c's defaults: temperature 1.0, top-p 0.9, no extensions. */
SamplerConfig sampler_default_config(void);

/* Allocates every buffer once. Returns 0, or -1 with a one-line reason. */
int sampler_create(Sampler *s, int vocab_size, const SamplerConfig *config, char *err, size_t err_size);
void sampler_destroy(Sampler *s);

/* Picks a token. Like llama2.c it rewrites logits in place (scaled, then
 * turned into probabilities). Never allocates. */
int sampler_sample(Sampler *s, float *logits);

/* Records a token the model has seen (prompt or generated) for the
 * repetition penalty; cheap no-op when the penalty is off. */
void sampler_accept(Sampler *s, int token);

/* The pieces of llama2.c's sampler, exposed for tests. */
int sample_argmax(const float *probabilities, int n);
int sample_mult(const float *probabilities, int n, float coin);
int sample_topp(const float *probabilities, int n, float topp, ProbIndex *scratch, float coin);
void sampler_softmax(float *x, int n);

#endif
