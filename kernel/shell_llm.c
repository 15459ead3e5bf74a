/* shell_llm.c - the shell's model commands: /model, /load, /set, /stats.
 * Part of llm_session (it shares its state through llm_session_internal.h). */
#include "kernel/console.h"
#include "kernel/cpu.h"
#include "kernel/llm_session_internal.h"
#include "kernel/memory.h"
#include "lib/ctype.h"
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/kernels.h"

static double mib(uint64_t bytes) {
    return (double)bytes / (1024.0 * 1024.0);
}

void shell_cmd_model(const char *args) {
    if (!current.loaded) {
        kprintf("no model loaded (see /ls and /load)\n");
        return;
    }
    const TransformerConfig *c = &current.transformer.config;
    static const char *const formats[] = {"llama2.c legacy (v0) fp32", "llama2.c v1 fp32", "llama2.c v2 int8"};
    kprintf("model:      %s (%s", current.model_name, formats[c->version]);
    if (c->version == 2) kprintf(", group size %d", c->group_size);
    kprintf(")\n");
    kprintf("tokenizer:  %s (%d tokens)\n", current.tokenizer_name, current.tokenizer.vocab_size);
    kprintf("config:     dim %d, hidden %d, layers %d, heads %d, kv heads %d, head size %d, vocab %d, context %d, "
            "%s classifier\n",
            c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->head_size, c->vocab_size, c->seq_len,
            c->shared_classifier ? "shared" : "separate");
    uint64_t params = transformer_param_count(&current.transformer);
    kprintf("parameters: %llu (%.2f M)\n", (unsigned long long)params, (double)params / 1e6);
    kprintf("memory:     weights %.1f MiB in place in the ramdisk, run state and KV cache %.1f MiB\n",
            mib(current.file_bytes), mib(transformer_state_bytes(&current.transformer)));
    kprintf("kernels:    %s; loaded in %llu ms\n", kernels->name, (unsigned long long)current.load_ms);
}

void shell_cmd_load(const char *args) {
    char model[NAME_MAX_LEN];
    size_t n = 0;
    while (args[n] && !isspace((unsigned char)args[n])) n++;
    if (n == 0) {
        kprintf("usage: /load MODEL [TOKENIZER]   (files in the ramdisk: /ls)\n");
        return;
    }
    if (n >= sizeof model) {
        kprintf("load: name too long\n");
        return;
    }
    memcpy(model, args, n);
    model[n] = 0;
    const char *tokenizer = args + n;
    while (isspace((unsigned char)*tokenizer)) tokenizer++;
    if (load_model(model, tokenizer) != 0 && current.loaded)
        kprintf("still using %s\n", current.model_name);
}

static void show_settings(void) {
    kprintf("temp %.2f, topp %.2f, topk %d, minp %.2f, penalty %.2f, steps %d, seed ", settings.temperature,
            settings.topp, settings.top_k, settings.min_p, settings.repeat_penalty, settings.steps);
    if (settings.seed)
        kprintf("%llu", (unsigned long long)settings.seed);
    else
        kprintf("random");
    kprintf(", simd %s\n", simd_names[settings.simd]);
}

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

void shell_cmd_set(const char *args) {
    if (!*args) {
        show_settings();
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
    long iv = 0;
    int ok = 1;
    if (!*value) {
        kprintf("usage: /set temp|topp|topk|minp|penalty|seed|steps|simd VALUE\n");
        return;
    } else if (strcmp(name, "temp") == 0) {
        ok = parse_float_in(value, 0.0f, 100.0f, &settings.temperature);
    } else if (strcmp(name, "topp") == 0) {
        ok = parse_float_in(value, 0.0f, 1.0f, &settings.topp);
    } else if (strcmp(name, "minp") == 0) {
        ok = parse_float_in(value, 0.0f, 1.0f, &settings.min_p);
    } else if (strcmp(name, "penalty") == 0) {
        ok = parse_float_in(value, 0.01f, 100.0f, &settings.repeat_penalty);
    } else if (strcmp(name, "topk") == 0) {
        ok = parse_int_in(value, 0, 1 << 20, &iv);
        if (ok) settings.top_k = (int)iv;
    } else if (strcmp(name, "steps") == 0) {
        ok = parse_int_in(value, 0, 1 << 20, &iv);
        if (ok) settings.steps = (int)iv;
    } else if (strcmp(name, "seed") == 0) {
        if (strcmp(value, "random") == 0) {
            settings.seed = 0;
        } else {
            char *end;
            unsigned long long seed = strtoull(value, &end, 0);
            ok = end != value && !*end && seed != 0;
            if (ok) settings.seed = seed;
        }
    } else if (strcmp(name, "simd") == 0) {
        int simd = strcmp(value, "scalar") == 0 ? 0 : strcmp(value, "sse2") == 0 ? 1
                   : strcmp(value, "avx2") == 0 ? 2 : -1;
        if (simd == 2 && !avx2_usable()) {
            kprintf("set: this CPU (or its XCR0 state) has no AVX2+FMA\n");
            return;
        }
        ok = simd >= 0;
        if (ok) apply_simd(simd);
    } else {
        kprintf("set: unknown setting '%s' (temp topp topk minp penalty seed steps simd)\n", name);
        return;
    }
    if (!ok) {
        kprintf("set: bad value for %s: '%s'\n", name, value);
        return;
    }
    show_settings();
}

void shell_cmd_stats(const char *args) {
    if (!history.answers) {
        kprintf("no answers yet\n");
        return;
    }
    const GenerateStats *s = &history.last;
    kprintf("last answer: %d prompt tokens, %d generated, prefill %.1f ms, decode %.1f ms, stop: %s\n",
            s->prompt_tokens, s->generated_tokens, (double)s->prefill_ns / 1e6, (double)s->decode_ns / 1e6,
            stop_reason_name(s->reason));
    kprintf("all answers: %d, %llu tokens decoded, %.1f tok/s on average\n", history.answers,
            (unsigned long long)history.total_tokens,
            history.total_decode_ns ? (double)history.total_tokens * 1e9 / (double)history.total_decode_ns : 0.0);
    struct memory_stats m;
    memory_get_stats(&m);
    kprintf("memory: %.1f MiB used, %.1f MiB heap\n", mib(m.used_bytes), mib(m.heap_bytes));
}
