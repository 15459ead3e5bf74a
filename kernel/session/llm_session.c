/* llm_session.c - the model behind the shell: loading checkpoints and
 * tokenizers from the ramdisk (in place), sampling settings, and streaming an
 * answer to the console with its figures. */
#include "kernel/session/llm_session_internal.h"

#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/kernel.h"
#include "kernel/mm/memory.h"
#include "kernel/drivers/ramdisk.h"
#include "kernel/shell/shell_bench.h"
#include "kernel/console/status.h"
#include "kernel/drivers/timer.h"
#include "lib/config.h"
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/kernels.h"
#include "llm/transformer_gguf.h"

struct loaded_model current;
struct settings settings = {1.0f, 0.9f, 0.0f, 1.0f, 0, 256, 0, 1, 0};
struct answer_history history;
struct chat_session chat = {.template_override = -1};
const char *const simd_names[4] = {"scalar", "sse2", "avx2", "avx512"};

/* settings.simd: 0 scalar, 1 sse2, 2 avx2, 3 avx512 (the index into simd_names). */
#define SIMD_AVX512 3

void apply_simd(int simd) {
    settings.simd = simd;
    kernels_select_level(simd - 1); /* 1 sse2, 2 avx2, 3 avx512 -> KERNELS_SSE2 .. KERNELS_AVX512 */
    if (simd == 0) kernels = &kernels_scalar;
}

int avx2_usable(void) {
    return cpu.avx2 && cpu.fma && cpu.avx_enabled;
}

/* cpu_init clears the avx512 flags unless XCR0 has the opmask and ZMM state. */
int avx512_usable(void) {
    return avx2_usable() && cpu.avx512f && cpu.avx512bw;
}

/* ------------------------------------------------------------ loading */

/* Times one matmul with a kernel set (best of three, in ns). Under QEMU's
 * TCG the AVX2+FMA code is ~20x slower than SSE2 while natively it is faster,
 * so the choice is measured, not assumed from CPUID. */
static uint64_t time_matmul(const KernelSet *set) {
    enum { N = 128, D = 32 };
    static float w[N * D], x[N], out[D];
    for (int i = 0; i < N * D; i++) w[i] = (float)((i * 7919) % 201 - 100) * 0.001f;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 17) * 0.01f;
    uint64_t best = ~0ULL;
    for (int rep = 0; rep < 3; rep++) {
        uint64_t t0 = timer_ns();
        set->matmul(out, x, w, N, D);
        uint64_t t = timer_ns() - t0;
        if (t < best) best = t;
    }
    return best;
}

static int fastest_simd(void) {
    uint64_t sse2 = time_matmul(&kernels_sse2);
    if (!avx2_usable()) return 1;
    uint64_t avx2 = time_matmul(&kernels_avx2);
    int best = avx2 < sse2 ? 2 : 1;
    if (avx512_usable()) {
        uint64_t avx512 = time_matmul(&kernels_avx512);
        kprintf("llm: matmul probe: sse2 %llu ns, avx2 %llu ns, avx512 %llu ns\n", (unsigned long long)sse2,
                (unsigned long long)avx2, (unsigned long long)avx512);
        if (avx512 < (best == 2 ? avx2 : sse2)) best = SIMD_AVX512;
    } else {
        kprintf("llm: matmul probe: sse2 %llu ns, avx2 %llu ns\n", (unsigned long long)sse2,
                (unsigned long long)avx2);
    }
    return best;
}

static int tokenizer_fits(const struct ramdisk_file *f, int vocab_size, Tokenizer *out, char *err,
                          size_t err_size) {
    if (tokenizer_load(out, f->data, f->size, vocab_size, err, err_size) != 0) return 0;
    if (out->bytes_read != f->size) {
        snprintf(err, err_size, "%s holds more than the model's %d tokens", f->name, vocab_size);
        tokenizer_free(out);
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
static const struct ramdisk_file *choose_tokenizer(const char *requested, int vocab_size, Tokenizer *out,
                                                   char *err, size_t err_size) {
    if (requested && *requested) {
        const struct ramdisk_file *f = ramdisk_find(requested);
        if (!f) {
            snprintf(err, err_size, "no file '%s' in the ramdisk (see /ls)", requested);
            return NULL;
        }
        return tokenizer_fits(f, vocab_size, out, err, err_size) ? f : NULL;
    }
    char cfg_name[NAME_MAX_LEN] = "";
    config_get(boot_info->cmdline, strnlen(boot_info->cmdline, BOOT_CMDLINE_MAX), "tokenizer", cfg_name,
               sizeof cfg_name);
    const char *preferred[2] = {current.loaded ? current.tokenizer_name : "", cfg_name};
    char reason[160];
    for (int i = 0; i < 2; i++) {
        const struct ramdisk_file *f = preferred[i][0] ? ramdisk_find(preferred[i]) : NULL;
        if (f && tokenizer_fits(f, vocab_size, out, reason, sizeof reason)) return f;
    }
    for (int i = 0; i < ramdisk_count(); i++) {
        const struct ramdisk_file *f = ramdisk_file_at(i);
        if (strstr(f->name, "tok") && ends_with(f->name, ".bin") &&
            tokenizer_fits(f, vocab_size, out, reason, sizeof reason))
            return f;
    }
    snprintf(err, err_size, "no tokenizer in the ramdisk has exactly %d tokens (name one: /load MODEL TOKENIZER)",
             vocab_size);
    return NULL;
}

/* Group size for quantising at load: the largest multiple of 16 up to 64
 * dividing dim and hidden_dim (15M shape: 48); 0 when there is none. */
static int q8_group_size(const TransformerConfig *c) {
    for (int gs = 64; gs >= 16; gs -= 16)
        if (c->dim % gs == 0 && c->hidden_dim % gs == 0) return gs;
    return 0;
}

/* Loads a model; on any failure the previous model stays loaded. quantize_q8:
 * make int8 copies of an fp32 checkpoint's matrices (integer matmuls: ~3x
 * faster under QEMU TCG, slightly different logits). */
int load_model(const char *model_name, const char *tokenizer_name, int quantize_q8) {
    char err[200];
    const struct ramdisk_file *mf = ramdisk_find(model_name);
    if (!mf) {
        kprintf("load: no file '%s' in the ramdisk (see /ls)\n", model_name);
        return -1;
    }
    uint64_t t0 = timer_ns();
    Transformer t;
    if (transformer_load(&t, mf->data, mf->size, err, sizeof err) != 0) {
        kprintf("load: %s: %s\n", model_name, err);
        return -1;
    }
    if (quantize_q8) {
        int gs = q8_group_size(&t.config);
        if (t.gguf || transformer_is_quantized(&t))
            kprintf("load: %s already has its own weight format; q8 not applied\n", model_name);
        else if (!gs)
            kprintf("load: %s: q8 needs dim and hidden_dim multiples of 16; staying fp32\n", model_name);
        else if (transformer_quantize(&t, gs, err, sizeof err) != 0)
            kprintf("load: %s: %s; staying fp32\n", model_name, err);
        else
            kprintf("load: %s quantised to int8 (groups of %d)\n", model_name, gs);
    }
    Tokenizer tok;
    const struct ramdisk_file *tf;
    if (t.gguf && !(tokenizer_name && *tokenizer_name)) {
        /* A GGUF file carries its own vocabulary. */
        tf = tokenizer_load_gguf(&tok, mf->data, mf->size, err, sizeof err) == 0 ? mf : NULL;
        if (tf && tok.vocab_size != t.config.vocab_size) {
            snprintf(err, sizeof err, "its vocabulary has %d tokens, the model %d", tok.vocab_size,
                     t.config.vocab_size);
            tokenizer_free(&tok);
            tf = NULL;
        }
    } else {
        tf = choose_tokenizer(tokenizer_name, t.config.vocab_size, &tok, err, sizeof err);
    }
    if (!tf) {
        kprintf("load: %s: %s\n", model_name, err);
        transformer_free(&t);
        return -1;
    }
    if (chat.active) {
        chat_stop();
        kprintf("chat: ended (another model)\n");
    }
    if (current.loaded) {
        transformer_free(&current.transformer);
        tokenizer_free(&current.tokenizer);
    }
    current.transformer = t;
    current.tokenizer = tok;
    current.loaded = 1;
    current.file_bytes = mf->size;
    strlcpy(current.model_name, mf->name, sizeof current.model_name);
    if (tf == mf)
        strlcpy(current.tokenizer_name, "its own vocabulary", sizeof current.tokenizer_name);
    else
        strlcpy(current.tokenizer_name, tf->name, sizeof current.tokenizer_name);
    current.load_ms = (timer_ns() - t0) / 1000000;
    const TransformerConfig *c = &t.config;
    kprintf("model: %s (dim %d, %d layers, %d/%d heads, vocab %d, context %d) with %s, loaded in %llu ms\n",
            current.model_name, c->dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len,
            current.tokenizer_name, (unsigned long long)current.load_ms);
    status_set_model(current.model_name);
    return 0;
}

static int looks_like_checkpoint(const struct ramdisk_file *f) {
    if (ends_with(f->name, ".gguf")) return f->size >= 24;
    return ends_with(f->name, ".bin") && !strstr(f->name, "tok") && f->size >= 28;
}

void llm_session_init(void) {
    llm_parallel_init(); /* matmuls and attention run on every CPU */
    apply_simd(fastest_simd());
    const char *cfg = boot_info->cmdline;
    size_t cfg_len = strnlen(cfg, BOOT_CMDLINE_MAX);
    char value[NAME_MAX_LEN];
    if (config_get(cfg, cfg_len, "seed", value, sizeof value) == 1) settings.seed = strtoull(value, NULL, 0);
    char model[NAME_MAX_LEN] = "", tokenizer[NAME_MAX_LEN] = "";
    config_get(cfg, cfg_len, "model", model, sizeof model);
    config_get(cfg, cfg_len, "tokenizer", tokenizer, sizeof tokenizer);
    char quantize[8] = "";
    config_get(cfg, cfg_len, "quantize", quantize, sizeof quantize);
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
    load_model(model, tokenizer, strcmp(quantize, "q8") == 0);
}

/* ------------------------------------------------------------ answering */

static void emit_text(void *ctx, const char *text, size_t len) {
    int *column = ctx;
    console_write(text, len);
    *column = text[len - 1] == '\n' ? 0 : 1;
}

static int ctrl_c_pressed(void *ctx) {
    /* Keys typed while an answer streams are dropped, except Ctrl-C. */
    for (int key; (key = console_poll_key()) != KEY_NONE;)
        if (key == 3) return 1;
    return 0;
}

static uint64_t now_ns(void *ctx) {
    return timer_ns();
}

static double per_second(uint64_t count, uint64_t ns) {
    return ns ? (double)count * 1e9 / (double)ns : 0.0;
}

/* A sampler with the current settings; 0, or -1 (reported). */
static int make_sampler(Sampler *sampler) {
    SamplerConfig sc = sampler_default_config();
    sc.temperature = settings.temperature;
    sc.topp = settings.topp;
    sc.top_k = settings.top_k;
    sc.min_p = settings.min_p;
    sc.repeat_penalty = settings.repeat_penalty;
    sc.seed = settings.seed ? settings.seed : (rdtsc() | 1);
    char err[200];
    if (sampler_init(sampler, current.transformer.config.vocab_size, &sc, err, sizeof err) != 0) {
        kprintf("error: %s\n", err);
        return -1;
    }
    return 0;
}

/* The "[N tokens, ...]" line, the history and the status line. */
static void report_answer(const GenerateStats *st) {
    if (st->reason == STOP_USER) kprintf("^C\n");
    console_flush_input();
    int decoded = st->positions - st->prompt_tokens;
    if (decoded < 0) decoded = 0;
    uint64_t ms_per_token_x100 = decoded > 0 ? st->decode_ns / 10000 / (uint64_t)decoded : 0;
    double decode_speed = per_second((uint64_t)decoded, st->decode_ns);
    kprintf("[%d tokens, prefill %.1f tok/s, decode %.1f tok/s, %llu.%02llu ms/token, stop: %s]\n",
            st->generated_tokens, per_second((uint64_t)st->prompt_tokens, st->prefill_ns), decode_speed,
            (unsigned long long)(ms_per_token_x100 / 100), (unsigned long long)(ms_per_token_x100 % 100),
            stop_reason_name(st->reason));
    history.answers++;
    history.last = *st;
    history.total_tokens += (uint64_t)decoded;
    history.total_decode_ns += st->decode_ns;
    status_set_speed(decode_speed);
}

void llm_session_answer(const char *prompt) {
    if (!current.loaded) {
        kprintf("no model loaded: /load a checkpoint from the ramdisk first (see /ls)\n");
        return;
    }
    if (chat.active) {
        chat_answer(prompt);
        return;
    }
    Sampler sampler;
    if (make_sampler(&sampler) != 0) return;
    char err[200];
    int column = 0;
    GenerateIO io = {emit_text, ctrl_c_pressed, now_ns, NULL, &column};
    GenerateStats st;
    int rc = generate(&current.transformer, &current.tokenizer, &sampler, prompt, settings.steps, &io, &st, err,
                      sizeof err);
    sampler_free(&sampler);
    if (column) console_write("\n", 1);
    if (rc != 0) {
        kprintf("error: %s\n", err);
        return;
    }
    report_answer(&st);
}

/* ------------------------------------------------------------ chat */

int chat_start(void) {
    if (!current.loaded) {
        kprintf("chat: no model loaded (see /ls and /load)\n");
        return -1;
    }
    if (chat.active) chat_free(&chat.chat);
    chat_drop_sampler();
    chat.active = 0;
    chat.full = 0;
    chat.pending[0] = '\0';
    ChatTemplate tmpl = chat.template_override >= 0 ? (ChatTemplate)chat.template_override
                                                    : chat_template_detect(&current.tokenizer);
    char err[200];
    if (chat_init(&chat.chat, &current.transformer, &current.tokenizer, tmpl, chat.system, err, sizeof err) != 0) {
        kprintf("chat: %s\n", err);
        return -1;
    }
    chat.active = 1;
    return 0;
}

void chat_stop(void) {
    if (chat.active) chat_free(&chat.chat);
    chat_drop_sampler();
    chat.active = 0;
    chat.full = 0;
}

void chat_drop_sampler(void) {
    if (chat.have_sampler) sampler_free(&chat.sampler);
    chat.have_sampler = 0;
}

static int same_sampling(const struct settings *a, const struct settings *b) {
    return a->temperature == b->temperature && a->topp == b->topp && a->min_p == b->min_p &&
           a->repeat_penalty == b->repeat_penalty && a->top_k == b->top_k && a->seed == b->seed;
}

/* The conversation's sampler, made on its first turn or after a sampling
 * setting changed; NULL when it cannot be made (reported). */
static Sampler *chat_sampler(void) {
    if (chat.have_sampler && !same_sampling(&chat.sampler_settings, &settings)) chat_drop_sampler();
    if (!chat.have_sampler) {
        if (make_sampler(&chat.sampler) != 0) return NULL;
        chat.have_sampler = 1;
        chat.sampler_settings = settings;
    }
    return &chat.sampler;
}

void chat_answer(const char *line) {
    if (chat.full) {
        kprintf("chat: the context is full: /chat reset (start over) or /chat slide (drop the oldest turns)\n");
        return;
    }
    Sampler *sampler = chat_sampler();
    if (!sampler) return;
    chat.chat.hide_think = settings.hide_think;
    char err[200];
    int column = 0;
    GenerateIO io = {emit_text, ctrl_c_pressed, now_ns, NULL, &column};
    GenerateStats st;
    int rc = chat_turn(&chat.chat, &current.transformer, &current.tokenizer, sampler, line, settings.steps, &io,
                       &st, err, sizeof err);
    if (column) console_write("\n", 1);
    if (rc == CHAT_NO_ROOM) {
        chat.full = 1;
        strlcpy(chat.pending, line, sizeof chat.pending);
        kprintf("chat: %s\n", err);
        kprintf("chat: the context is full: /chat reset (start over) or /chat slide (drop the oldest turns, "
                "then this line is answered)\n");
        return;
    }
    if (rc != 0) {
        kprintf("error: %s\n", err);
        return;
    }
    report_answer(&st);
}
