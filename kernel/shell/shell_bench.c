/* shell_bench.c - /bench: the loaded model's prefill and decode speed on one
 * worker and on all, for its own format and, for fp32 llama2.c models, int8
 * quantised at load. The benchmark runs on a second
 * copy of the model (its own run state), so the loaded model, its KV cache
 * and any /chat stay as they were. */
#include "kernel/arch/smp.h"
#include "kernel/console/console.h"
#include "kernel/session/session.h"
#include "kernel/drivers/ramdisk.h"
#include "kernel/shell/shell.h"
#include "kernel/drivers/timer.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/model/model.h"

#define BENCH_DEFAULT_TOKENS 32
#define BENCH_MAX_TOKENS 1024

typedef struct {
    uint64_t prefill_ns, decode_ns;
    int prefill_tokens, decode_tokens;
    const float *last_logits; /* of the last decode step (NULL: none ran) */
} BenchTimes;

/* Prefill of `tokens` prompt tokens from position 0, then `tokens` greedy
 * decode steps from position 1 (the context permitting). */
static int bench_run(Model *t, int tokens, int *prompt, BenchTimes *out) {
    const ModelConfig *c = &t->config;
    int n = tokens < c->seq_len ? tokens : c->seq_len;
    for (int i = 0; i < n; i++) prompt[i] = 1 + (i * 7919) % (c->vocab_size > 1 ? c->vocab_size - 1 : 1);
    uint64_t t0 = timer_ns();
    if (model_prefill(t, prompt, n, 0) != 0) return -1;
    out->prefill_ns = timer_ns() - t0;
    out->prefill_tokens = n;
    int steps = tokens < c->seq_len - 1 ? tokens : c->seq_len - 1, token = prompt[0];
    out->last_logits = NULL;
    t0 = timer_ns();
    for (int pos = 1; pos <= steps; pos++) {
        float *logits = model_forward(t, token, pos);
        if (!logits) return -1;
        out->last_logits = logits;
        int best = 0;
        for (int i = 1; i < c->vocab_size; i++)
            if (logits[i] > logits[best]) best = i;
        token = best;
    }
    out->decode_ns = timer_ns() - t0;
    out->decode_tokens = steps;
    return 0;
}

/* tok/s with one decimal, as integer tenths (kprintf-friendly and exact). */
static uint64_t tenths_per_second(int count, uint64_t ns) {
    return ns ? (uint64_t)count * 10000000000ull / ns : 0;
}

/* Runs one format on 1 worker and on all; the last logits of both runs must
 * match bit for bit (every row is computed by the same code either way). */
static void bench_format(Model *t, const char *format, int tokens, int *prompt, int all,
                         float *first_logits) {
    uint64_t decode_one = 0;
    size_t logits_bytes = (size_t)t->config.vocab_size * sizeof(float);
    int counts[2] = {1, all};
    for (int k = 0; k < (all > 1 ? 2 : 1); k++) {
        int n = session_use_workers(counts[k]);
        BenchTimes bt;
        int rc = bench_run(t, tokens, prompt, &bt);
        if (rc != 0) {
            kprintf("bench: the forward pass failed\n");
            break;
        }
        uint64_t pre = tenths_per_second(bt.prefill_tokens, bt.prefill_ns);
        uint64_t dec = tenths_per_second(bt.decode_tokens, bt.decode_ns);
        uint64_t us_per_token = bt.decode_tokens ? bt.decode_ns / 1000 / (uint64_t)bt.decode_tokens : 0;
        const float *logits = bt.last_logits;
        int same = 1;
        if (k == 0) {
            decode_one = dec;
            if (logits) memcpy(first_logits, logits, logits_bytes);
        } else {
            same = logits && memcmp(first_logits, logits, logits_bytes) == 0;
        }
        uint64_t speedup = decode_one ? dec * 100 / decode_one : 0;
        kprintf("%-22s %7d %9llu.%llu %9llu.%llu %7llu.%02llu %5llu.%02llux\n", format, n,
                (unsigned long long)(pre / 10), (unsigned long long)(pre % 10),
                (unsigned long long)(dec / 10), (unsigned long long)(dec % 10),
                (unsigned long long)(us_per_token / 1000), (unsigned long long)(us_per_token % 1000 / 10),
                (unsigned long long)(speedup / 100), (unsigned long long)(speedup % 100));
        if (k > 0)
            kprintf("%-22s logits on 1 and %d workers: %s\n", format, n, same ? "identical" : "DIFFERENT");
    }
}

void shell_cmd_bench(struct session *session, const char *args) {
    int tokens = BENCH_DEFAULT_TOKENS;
    if (*args) {
        char *end;
        long v = strtol(args, &end, 10);
        if (*end || v < 2 || v > BENCH_MAX_TOKENS) {
            kprintf("usage: /bench [TOKENS]  (2..%d prompt tokens and as many decoded; default %d)\n",
                    BENCH_MAX_TOKENS, BENCH_DEFAULT_TOKENS);
            return;
        }
        tokens = (int)v;
    }
    if (!session->model.loaded) {
        kprintf("bench: no model loaded (see /ls, /load)\n");
        return;
    }
    const struct ramdisk_file *mf = ramdisk_find(session->model.model_name);
    if (!mf) {
        kprintf("bench: '%s' is no longer in the ramdisk\n", session->model.model_name);
        return;
    }
    char err[200];
    LoadedModel copy;
    /* Sized for the positions the bench runs, within the loaded model's context. */
    int loaded_ctx = session->model.llm.model.config.seq_len;
    int ctx = tokens < loaded_ctx ? tokens + 1 : loaded_ctx;
    LoadOptions options = {ctx, NULL, 0, -1, 0};
    if (loaded_model_open(&copy, mf->data, mf->size, &options, NULL, NULL, err, sizeof err) != 0) {
        kprintf("bench: a second copy of %s does not fit: %s\n", session->model.model_name, err);
        return;
    }
    Model *t = &copy.model;
    int *prompt = malloc((size_t)tokens * sizeof(int));
    float *first_logits = malloc((size_t)t->config.vocab_size * sizeof(float));
    if (!prompt || !first_logits) {
        free(prompt);
        free(first_logits);
        kprintf("bench: out of memory\n");
        loaded_model_close(&copy);
        return;
    }
    int all = session_use_workers(smp_online_count()); /* every CPU, even those that do not pay off */
    kprintf("bench: %s, prefill %d tokens (batched), decode %d tokens, %d worker%s\n",
            session->model.model_name, tokens < t->config.seq_len ? tokens : t->config.seq_len,
            tokens < t->config.seq_len - 1 ? tokens : t->config.seq_len - 1, all, all > 1 ? "s" : "");
    kprintf("%-22s %7s %11s %11s %10s %8s\n", "format", "workers", "prefill/s", "decode/s", "ms/token",
            "speedup");
    bench_format(t, model_matmul_name(t), tokens, prompt, all, first_logits);
    if (model_can_quantize(t)) {
        static const int groups[] = {32, 64, 16};
        int quantized = -2; /* -2: no group size fits, -1: model_quantize failed */
        for (size_t i = 0; i < sizeof groups / sizeof groups[0] && quantized != 0; i++)
            if (t->config.dim % groups[i] == 0 && t->config.hidden_dim % groups[i] == 0)
                quantized = model_quantize(t, groups[i], err, sizeof err);
        if (quantized == 0)
            bench_format(t, "int8 (quantised here)", tokens, prompt, all, first_logits);
        else
            kprintf("bench: no int8 run: %s\n",
                    quantized == -1 ? err : "dim and hidden_dim fit no group size");
    }
    session_use_workers(0);
    free(first_logits);
    free(prompt);
    loaded_model_close(&copy);
}
