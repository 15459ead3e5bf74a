/* decode_loop.c - the one per-token loop of generation and chat. */
#include "llm/generate/decode_loop.h"

#include "lib/format.h"

static StopReason stop_reason(const DecodeLoop *d, int token) {
    if (d->bos_id >= 0 && token == d->bos_id) return STOP_BOS;
    for (int i = 0; i < d->stop_count; i++)
        if (d->stop_ids[i] == token) return STOP_EOS;
    return STOP_STEPS; /* not a stop */
}

StopReason decode_loop(DecodeLoop *d, Model *t, Sampler *s, float *logits, const GenerateIO *io,
                       GenerateStats *stats, char *err, size_t err_size) {
    for (int first = 1;; first = 0) {
        if (!(first && d->polled) && io && io->should_stop && io->should_stop(io->ctx)) return STOP_USER;
        int next = sampler_sample(s, logits);
        if (first && d->sampled_end) *d->sampled_end = generate_clock(io);
        StopReason stop = stop_reason(d, next);
        if (stop != STOP_STEPS) return stop;

        stats->generated_tokens++;
        d->keep(d->ctx, d->last, next);
        if (io && io->on_token) io->on_token(io->ctx, next);
        d->last = next;
        if (d->kept_end && !*d->kept_end) *d->kept_end = generate_clock(io);
        if (d->max_new > 0 && stats->generated_tokens >= d->max_new) return STOP_STEPS;
        if (d->pos >= d->end) return d->at_end;

        sampler_accept(s, next);
        logits = model_forward(t, next, d->pos);
        if (!logits) {
            snprintf(err, err_size, "forward pass failed at position %d (token %d)", d->pos, next);
            return STOP_ERROR;
        }
        d->pos++;
    }
}
