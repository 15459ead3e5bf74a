/* session_load.c - loading checkpoints, GGUF files and tokenizers from the
 * ramdisk (in place, nothing copied), and the session's start at boot. */
#include "kernel/session/session.h"

#include "kernel/console/console.h"
#include "kernel/console/status.h"
#include "kernel/drivers/ramdisk.h"
#include "kernel/drivers/timer.h"
#include "kernel/kernel.h"
#include "lib/config.h"
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/format/gguf_split.h"
#include "llm/model/kv_cache.h"

/* l's tokenizer from f when f holds exactly the model's vocabulary. */
static int tokenizer_fits(const struct ramdisk_file *f, LoadedModel *l, char *err, size_t err_size) {
    if (loaded_model_tokenizer(l, f->data, f->size, err, err_size) != 0) return 0;
    if (l->tokenizer.bytes_read != f->size) {
        snprintf(err, err_size, "%s holds more than the model's %d tokens", f->name,
                 l->model.config.vocab_size);
        loaded_model_drop_tokenizer(l);
        return 0;
    }
    return 1;
}

static int ends_with(const char *s, const char *suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The tokenizer for a model: the one named, else the current one, else the
 * boot.cfg one, else any ramdisk file with "tok" in its name whose entry
 * count is exactly the model's vocabulary. */
static const struct ramdisk_file *choose_tokenizer(const struct session_model *current, const char *requested,
                                                   LoadedModel *out, char *err, size_t err_size) {
    int vocab_size = out->model.config.vocab_size;
    if (requested && *requested) {
        const struct ramdisk_file *f = ramdisk_find(requested);
        if (!f) {
            snprintf(err, err_size, "no file '%s' in the ramdisk (see /ls)", requested);
            return NULL;
        }
        return tokenizer_fits(f, out, err, err_size) ? f : NULL;
    }
    char cfg_name[SESSION_NAME_MAX] = "";
    config_get(boot_info->cmdline, strnlen(boot_info->cmdline, BOOT_CMDLINE_MAX), "tokenizer", cfg_name,
               sizeof cfg_name);
    const char *preferred[2] = {current->loaded ? current->tokenizer_name : "", cfg_name};
    char reason[160];
    for (int i = 0; i < 2; i++) {
        const struct ramdisk_file *f = preferred[i][0] ? ramdisk_find(preferred[i]) : NULL;
        if (f && tokenizer_fits(f, out, reason, sizeof reason)) return f;
    }
    for (int i = 0; i < ramdisk_count(); i++) {
        const struct ramdisk_file *f = ramdisk_file_at(i);
        if (strstr(f->name, "tok") && ends_with(f->name, ".bin") &&
            tokenizer_fits(f, out, reason, sizeof reason))
            return f;
    }
    snprintf(err, err_size,
             "no tokenizer in the ramdisk has exactly %d tokens (name one: /load MODEL TOKENIZER)",
             vocab_size);
    return NULL;
}

static void print_note(void *model_name, const char *line) {
    kprintf("load: %s%s\n", (const char *)model_name, line);
}

/* The other pieces of a split GGUF model, in place in the ramdisk. */
static const void *ramdisk_piece(void *ctx, const char *name, size_t *size) {
    const struct ramdisk_file *f = ramdisk_find(name);
    if (!f) return NULL;
    *size = f->size;
    return f->data;
}

/* On any failure the previous model stays loaded. quantize_q8: integer
 * matmuls are ~3x faster under QEMU TCG, with slightly different logits. */
int session_load(struct session *s, const char *model_name, const char *tokenizer_name, int quantize_q8) {
    char err[200];
    const struct ramdisk_file *mf = ramdisk_find(model_name);
    if (!mf) {
        kprintf("load: no file '%s' in the ramdisk (see /ls)\n", model_name);
        return -1;
    }
    int ctx = session_context_for(s, mf);
    if (ctx < 0) return -1;
    uint64_t t0 = timer_ns();
    GgufPieces pieces = {mf->name, ramdisk_piece, NULL};
    LoadOptions options = {ctx, &pieces, quantize_q8, (int)s->settings.kv_type, 0};
    LoadedModel l;
    if (loaded_model_open(&l, mf->data, mf->size, &options, print_note, (void *)model_name, err,
                          sizeof err) != 0) {
        kprintf("load: %s: %s\n", model_name, err);
        return -1;
    }
    const struct ramdisk_file *tf;
    if (model_has_vocabulary(&l.model) && !(tokenizer_name && *tokenizer_name)) {
        /* A GGUF file carries its own vocabulary. */
        tf = loaded_model_tokenizer(&l, NULL, 0, err, sizeof err) == 0 ? mf : NULL;
        if (tf && l.tokenizer.warning[0]) kprintf("load: %s: warning: %s\n", model_name, l.tokenizer.warning);
    } else {
        tf = choose_tokenizer(&s->model, tokenizer_name, &l, err, sizeof err);
    }
    if (!tf) {
        kprintf("load: %s: %s\n", model_name, err);
        loaded_model_close(&l);
        return -1;
    }
    if (s->chat.active) {
        session_chat_destroy(s);
        kprintf("chat: ended (another model)\n");
    }
    struct session_model *current = &s->model;
    if (current->loaded) loaded_model_close(&current->llm);
    current->llm = l;
    current->loaded = 1;
    uint64_t pieces_bytes;
    current->pieces = model_pieces(&l.model, &pieces_bytes);
    current->file_bytes = pieces_bytes ? (size_t)pieces_bytes : mf->size;
    strlcpy(current->model_name, mf->name, sizeof current->model_name);
    if (tf == mf)
        strlcpy(current->tokenizer_name, SESSION_OWN_VOCABULARY, sizeof current->tokenizer_name);
    else
        strlcpy(current->tokenizer_name, tf->name, sizeof current->tokenizer_name);
    current->load_ms = (timer_ns() - t0) / 1000000;
    const ModelConfig *c = &l.model.config;
    kprintf("model: %s (dim %d, %d layers, %d/%d heads, vocab %d, context %d) with %s, loaded in %llu ms\n",
            current->model_name, c->dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len,
            current->tokenizer_name, (unsigned long long)current->load_ms);
    if (current->pieces > 1)
        kprintf("model: split in %u pieces, %llu bytes used in place\n", current->pieces,
                (unsigned long long)current->file_bytes);
    status_set_model(current->model_name);
    return 0;
}

int session_set_kv_type(struct session *s, uint32_t kv_type) {
    Model *t = &s->model.llm.model;
    char err[200];
    if (s->model.loaded && model_kv_fixed(t, err, sizeof err)) {
        kprintf("kv: %s applies to GGUF models; %s\n", kv_type_name(kv_type), err);
    } else if (s->model.loaded && model_kv_type(t) != kv_type) {
        if (model_kv_type_check(t, kv_type, err, sizeof err) != 0) {
            kprintf("kv: %s\n", err); /* nothing changed: a conversation goes on */
            return -1;
        }
        if (s->chat.active) {
            session_chat_destroy(s);
            kprintf("chat: ended (the KV cache is re-created)\n");
        }
        if (model_set_kv_type(t, kv_type, err, sizeof err) != 0) {
            kprintf("kv: %s\n", err);
            return -1;
        }
    }
    s->settings.kv_type = kv_type;
    return 0;
}

static int looks_like_checkpoint(const struct ramdisk_file *f) {
    /* Of a split model only the first piece loads it. */
    uint32_t piece, pieces;
    if (gguf_split_position(f->data, f->size, &piece, &pieces) && piece > 0) return 0;
    if (ends_with(f->name, ".gguf")) return f->size >= 24;
    return ends_with(f->name, ".bin") && !strstr(f->name, "tok") && f->size >= 28;
}

static const struct session_settings default_settings = {
    .temperature = 1.0f,
    .topp = 0.9f,
    .min_p = 0.0f,
    .repeat_penalty = 1.0f,
    .top_k = 0,
    .steps = 256,
    .seed = 0,
    .simd = ISA_SSE2,
    .hide_think = 0,
    .kv_type = KV_TYPE_DEFAULT,
};

void session_init(struct session *s) {
    memset(s, 0, sizeof *s);
    s->settings = default_settings;
    s->chat.template_override = -1;
    session_use_workers(0); /* matmuls and attention run on every CPU */
    session_simd_apply(s, session_simd_fastest());
    const char *cfg = boot_info->cmdline;
    size_t cfg_len = strnlen(cfg, BOOT_CMDLINE_MAX);
    char value[SESSION_NAME_MAX];
    if (config_get(cfg, cfg_len, "seed", value, sizeof value) == 1)
        s->settings.seed = strtoull(value, NULL, 0);
    if (config_get(cfg, cfg_len, "ctx", value, sizeof value) == 1) {
        char *end;
        long ctx = strtol(value, &end, 10);
        if (end == value || *end || ctx < 1 || ctx > (1L << 30))
            kprintf("boot.cfg: ctx=%s is not a context length (1..%ld positions); the model's own is used\n",
                    value, 1L << 30);
        else
            s->settings.ctx = (int)ctx;
    }
    char model[SESSION_NAME_MAX] = "", tokenizer[SESSION_NAME_MAX] = "";
    config_get(cfg, cfg_len, "model", model, sizeof model);
    config_get(cfg, cfg_len, "tokenizer", tokenizer, sizeof tokenizer);
    char quantize[8] = "";
    config_get(cfg, cfg_len, "quantize", quantize, sizeof quantize);
    if (config_get(cfg, cfg_len, "kv", value, sizeof value) == 1) {
        if (kv_type_parse(value) >= 0)
            s->settings.kv_type = (uint32_t)kv_type_parse(value);
        else
            kprintf("boot.cfg: kv=%s is not f16, q8_0 or f32; using %s\n", value,
                    kv_type_name(KV_TYPE_DEFAULT));
    }
    if (!model[0]) {
        for (int i = 0; i < ramdisk_count(); i++) {
            if (looks_like_checkpoint(ramdisk_file_at(i))) {
                strlcpy(model, ramdisk_file_at(i)->name, sizeof model);
                break;
            }
        }
    }
    if (!model[0]) {
        kprintf("model: none in the ramdisk; prompts cannot be answered (see /ls, /load)\n");
        return;
    }
    session_load(s, model, tokenizer, strcmp(quantize, "q8") == 0);
}
