/* loaded_model.c - the load sequence (loaded_model.h). */
#include "llm/generate/loaded_model.h"

#include "lib/format.h"
#include "lib/string.h"
#include "llm/model/kv_cache.h"

/* The group size of quantize_q8: the largest multiple of 16 up to 64
 * dividing dim and hidden_dim (15M shape: 48); 0 when there is none. */
static int q8_group_size(const ModelConfig *c) {
    for (int gs = 64; gs >= 16; gs -= 16)
        if (c->dim % gs == 0 && c->hidden_dim % gs == 0) return gs;
    return 0;
}

static void say(LoadNote note, void *ctx, const char *line) {
    if (note) note(ctx, line);
}

static void apply_q8(LoadedModel *l, int quantize_q8, LoadNote note, void *ctx) {
    char line[240], err[200];
    int gs = quantize_q8 > 1 ? quantize_q8 : q8_group_size(&l->model.config);
    if (!model_can_quantize(&l->model)) {
        say(note, ctx, " already has its own weight format; q8 not applied");
    } else if (!gs) {
        say(note, ctx, ": q8 needs dim and hidden_dim multiples of 16; staying fp32");
    } else if (model_quantize(&l->model, gs, err, sizeof err) != 0) {
        snprintf(line, sizeof line, ": %s; staying fp32", err);
        say(note, ctx, line);
    } else {
        snprintf(line, sizeof line, " quantised to int8 (groups of %d)", gs);
        say(note, ctx, line);
        l->quantized_q8 = 1;
    }
}

static void apply_kv_type(LoadedModel *l, uint32_t kv_type, LoadNote note, void *ctx) {
    char line[240], err[200];
    if (model_kv_fixed(&l->model, err, sizeof err)) return; /* its one type: the caller may say so */
    if (kv_type != model_kv_type(&l->model) && model_set_kv_type(&l->model, kv_type, err, sizeof err) != 0) {
        snprintf(line, sizeof line, ": %s; its KV cache stays %s", err,
                 kv_type_name(model_kv_type(&l->model)));
        say(note, ctx, line);
    }
}

int loaded_model_open(LoadedModel *l, const void *data, size_t size, const LoadOptions *options,
                      LoadNote note, void *note_ctx, char *err, size_t err_size) {
    static const LoadOptions none = {0, NULL, 0, -1, 0};
    const LoadOptions *o = options ? options : &none;
    memset(l, 0, sizeof *l);
    if (model_create(&l->model, data, size, &(ModelOptions){o->ctx, o->pieces}, err, err_size) != 0)
        return -1;
    l->have_model = 1;
    l->data = data, l->size = size;
    if (o->quantize_q8) apply_q8(l, o->quantize_q8, note, note_ctx);
    if (o->kv_type >= 0) apply_kv_type(l, (uint32_t)o->kv_type, note, note_ctx);
    if (o->reference) model_set_reference(&l->model, 1);
    return 0;
}

int loaded_model_tokenizer(LoadedModel *l, const void *tok_data, size_t tok_size, char *err,
                           size_t err_size) {
    int vocab = l->model.config.vocab_size;
    if (tok_data) {
        if (tokenizer_create(&l->tokenizer, tok_data, tok_size, vocab, err, err_size) != 0) return -1;
        l->have_tokenizer = 1;
        return 0;
    }
    if (loaded_model_vocabulary(l, l->data, l->size, err, err_size) != 0) return -1;
    if (l->tokenizer.vocab_size != vocab) {
        snprintf(err, err_size, "its vocabulary has %d tokens, the model %d", l->tokenizer.vocab_size, vocab);
        loaded_model_drop_tokenizer(l);
        return -1;
    }
    return 0;
}

int loaded_model_vocabulary(LoadedModel *l, const void *data, size_t size, char *err, size_t err_size) {
    if (tokenizer_create_gguf(&l->tokenizer, data, size, err, err_size) != 0) return -1;
    l->have_tokenizer = 1;
    return 0;
}

void loaded_model_drop_tokenizer(LoadedModel *l) {
    if (l->have_tokenizer) tokenizer_destroy(&l->tokenizer);
    l->have_tokenizer = 0;
}

int loaded_model_sampler(LoadedModel *l, const SamplerConfig *config, char *err, size_t err_size) {
    if (sampler_create(&l->sampler, l->model.config.vocab_size, config, err, err_size) != 0) return -1;
    l->have_sampler = 1;
    return 0;
}

void loaded_model_close(LoadedModel *l) {
    if (l->have_sampler) sampler_destroy(&l->sampler);
    loaded_model_drop_tokenizer(l);
    if (l->have_model) model_destroy(&l->model);
    memset(l, 0, sizeof *l);
}
