/* shell_set.c - /set: the session's settings as a table, one row a setting
 * (its name, how a value is read, how it is shown, one line of help). */
#include "kernel/console/console.h"
#include "kernel/session/session.h"
#include "kernel/shell/shell.h"
#include "lib/ctype.h"
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/compute/isa.h"
#include "llm/model/kv_cache.h"

/* What a setting's parser did with the value. */
enum set_result {
    SET_CHANGED, /* taken: the new value is shown */
    SET_SAID,    /* it said what happened itself (or refused with its own reason) */
    SET_BAD,     /* not a value for it */
};

struct setting {
    const char *name;
    enum set_result (*parse)(struct session *s, const char *value);
    void (*show)(const struct session *s, char *buf, size_t size);
    const char *help;
};

/* Parses a float; returns 0 when the whole text is not a number in [lo, hi]. */
static int parse_float_in(const char *text, float lo, float hi, float *out) {
    char *end;
    float v = strtof(text, &end);
    if (end == text || *end || !(v >= lo && v <= hi)) return 0;
    *out = v;
    return 1;
}

static int parse_int_in(const char *text, long lo, long hi, long *out) {
    char *end;
    long v = strtol(text, &end, 10);
    if (end == text || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

static enum set_result taken(int ok) {
    return ok ? SET_CHANGED : SET_BAD;
}

static enum set_result parse_temp(struct session *s, const char *v) {
    return taken(parse_float_in(v, 0.0f, 100.0f, &s->settings.temperature));
}
static enum set_result parse_topp(struct session *s, const char *v) {
    return taken(parse_float_in(v, 0.0f, 1.0f, &s->settings.topp));
}
static enum set_result parse_minp(struct session *s, const char *v) {
    return taken(parse_float_in(v, 0.0f, 1.0f, &s->settings.min_p));
}
static enum set_result parse_penalty(struct session *s, const char *v) {
    return taken(parse_float_in(v, 0.01f, 100.0f, &s->settings.repeat_penalty));
}

static enum set_result parse_topk(struct session *s, const char *v) {
    long n;
    if (!parse_int_in(v, 0, 1 << 20, &n)) return SET_BAD;
    s->settings.top_k = (int)n;
    return SET_CHANGED;
}

static enum set_result parse_steps(struct session *s, const char *v) {
    long n;
    if (!parse_int_in(v, 0, 1 << 20, &n)) return SET_BAD;
    s->settings.steps = (int)n;
    return SET_CHANGED;
}

static enum set_result parse_seed(struct session *s, const char *v) {
    if (strcmp(v, "random") == 0) {
        s->settings.seed = 0;
        return SET_CHANGED;
    }
    char *end;
    unsigned long long seed = strtoull(v, &end, 0);
    if (end == v || *end || seed == 0) return SET_BAD;
    s->settings.seed = seed;
    return SET_CHANGED;
}

static enum set_result parse_simd(struct session *s, const char *v) {
    int simd = isa_parse(v);
    if (simd == ISA_AVX2 && !isa_usable(ISA_AVX2)) {
        kprintf("set: this CPU (or its XCR0 state) has no AVX2+FMA\n");
        return SET_SAID;
    }
    if (simd == ISA_AVX512 && !isa_usable(ISA_AVX512)) {
        kprintf("set: this CPU (or its XCR0 state) has no AVX-512F+BW\n");
        return SET_SAID;
    }
    if (simd < 0) return SET_BAD;
    session_simd_apply(s, simd);
    return SET_CHANGED;
}

/* think on|off: the thinking switch of the templates that have one; a
 * conversation starts over with it (the template's system part may change).
 * think hide|show: whether a think block is printed. */
static enum set_result parse_think(struct session *s, const char *v) {
    if (strcmp(v, "on") == 0 || strcmp(v, "off") == 0) {
        int on = strcmp(v, "on") == 0;
        s->settings.no_think = !on;
        ChatTemplate t = s->chat.active ? s->chat.chat.template : CHAT_TEMPLATE_NONE;
        kprintf("set: think %s (the /chat templates with a switch: qwen3, smollm3)\n", on ? "on" : "off");
        if (s->chat.active && chat_template_has_thinking(t) && session_chat_create(s) == 0) {
            kprintf("chat: the conversation starts over with it\n");
            shell_chat_started(s);
        }
        return SET_SAID;
    }
    int hide = strcmp(v, "hide") == 0 ? 1 : strcmp(v, "show") == 0 ? 0 : -1;
    if (hide < 0) return SET_BAD;
    s->settings.hide_think = hide;
    return SET_CHANGED;
}

static enum set_result parse_kv(struct session *s, const char *v) {
    int type = kv_type_parse(v);
    if (type < 0) {
        kprintf("set: kv is f16, q8_0 or f32, not '%s'\n", v);
        return SET_SAID;
    }
    return session_set_kv_type(s, (uint32_t)type) == 0 ? SET_CHANGED : SET_SAID;
}

static enum set_result parse_ctx(struct session *s, const char *v) {
    long n = 0;
    /* 2^30: beyond any trained context; the model's own bound comes next. */
    if (strcmp(v, "auto") != 0 && !parse_int_in(v, 1, 1 << 30, &n)) {
        kprintf("set: bad value for ctx: '%s' (a context length: 1 or more positions, or auto)\n", v);
        return SET_SAID;
    }
    return session_set_context(s, (int)n) == 0 ? SET_CHANGED : SET_SAID;
}

static void show_temp(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%.2f", s->settings.temperature);
}
static void show_topp(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%.2f", s->settings.topp);
}
static void show_topk(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%d", s->settings.top_k);
}
static void show_minp(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%.2f", s->settings.min_p);
}
static void show_penalty(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%.2f", s->settings.repeat_penalty);
}
static void show_seed(const struct session *s, char *b, size_t n) {
    if (s->settings.seed)
        snprintf(b, n, "%llu", (unsigned long long)s->settings.seed);
    else
        snprintf(b, n, "random");
}
static void show_steps(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%d", s->settings.steps);
}
static void show_simd(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%s", isa_name(s->settings.simd));
}
static void show_think(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%s, %s", s->settings.hide_think ? "hide" : "show", s->settings.no_think ? "off" : "on");
}
static void show_kv(const struct session *s, char *b, size_t n) {
    snprintf(b, n, "%s", kv_type_name(s->settings.kv_type));
}
static void show_ctx(const struct session *s, char *b, size_t n) {
    int used = s->settings.ctx ? snprintf(b, n, "%d", s->settings.ctx) : snprintf(b, n, "auto");
    if (s->model.loaded && used >= 0 && (size_t)used < n)
        snprintf(b + used, n - (size_t)used, " (%d loaded)", s->model.llm.model.config.seq_len);
}

static const struct setting settings[] = {
    {"temp", parse_temp, show_temp, "sampling temperature, 0 = greedy (0..100)"},
    {"topp", parse_topp, show_topp, "nucleus sampling, 0 or 1 = off (0..1)"},
    {"topk", parse_topk, show_topk, "keep the k most probable tokens, 0 = off"},
    {"minp", parse_minp, show_minp, "drop tokens below minp x the top probability, 0 = off (0..1)"},
    {"penalty", parse_penalty, show_penalty, "repetition penalty, 1 = off (0.01..100)"},
    {"seed", parse_seed, show_seed, "sampling seed: a number above 0, or random"},
    {"steps", parse_steps, show_steps, "positions an answer runs at most, 0 = the whole context"},
    {"simd", parse_simd, show_simd, "kernel set: scalar, sse2, avx2, avx512 (one the CPU lacks is refused)"},
    {"think", parse_think, show_think, "think blocks: hide|show; the template's switch: on|off"},
    {"kv", parse_kv, show_kv, "KV cache of GGUF models: f16, q8_0, f32"},
    {"ctx", parse_ctx, show_ctx, "context length in positions, or auto (the model's, as memory allows)"},
};
#define SETTING_COUNT (sizeof settings / sizeof settings[0])

/* "  NAME VALUE", padded to width, with the help line when asked. */
static void show_row(const struct session *s, const struct setting *row, int width, int with_help) {
    char line[96];
    int used = snprintf(line, sizeof line, "%s ", row->name);
    row->show(s, line + used, sizeof line - (size_t)used);
    if (with_help)
        kprintf("  %-*s %s\n", width, line, row->help);
    else
        kprintf("  %s\n", line);
}

static void list_settings(const struct session *s) {
    kprintf("settings (/set NAME VALUE changes one):\n");
    for (size_t i = 0; i < SETTING_COUNT; i++) show_row(s, &settings[i], 24, 1);
    kprintf("  %-24s %s\n", "keymap", "keyboard layout: /set keymap lists them, /set keymap NAME picks one");
}

static void print_names(const char *separator) {
    for (size_t i = 0; i < SETTING_COUNT; i++) kprintf("%s%s", settings[i].name, separator);
    kprintf("keymap");
}

void shell_cmd_set(struct session *session, const char *args) {
    if (!*args) {
        list_settings(session);
        return;
    }
    char name[16];
    size_t n = 0;
    while (args[n] && !isspace((unsigned char)args[n]) && n < sizeof name - 1) {
        name[n] = args[n];
        n++;
    }
    name[n] = 0;
    const char *value = args + n;
    while (isspace((unsigned char)*value)) value++;
    if (strcmp(name, "keymap") == 0) {
        shell_set_keymap(value); /* without a name it lists the layouts */
        return;
    }
    if (!*value) {
        kprintf("usage: /set ");
        print_names("|");
        kprintf(" VALUE\n");
        return;
    }
    const struct setting *row = NULL;
    for (size_t i = 0; i < SETTING_COUNT && !row; i++)
        if (strcmp(name, settings[i].name) == 0) row = &settings[i];
    if (!row) {
        kprintf("set: unknown setting '%s' (", name);
        print_names(" ");
        kprintf(")\n");
        return;
    }
    enum set_result r = row->parse(session, value);
    if (r == SET_BAD) kprintf("set: bad value for %s: '%s'\n", name, value);
    if (r == SET_CHANGED) show_row(session, row, 0, 0);
}
