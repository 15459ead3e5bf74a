/* shell_llm.c - the shell's model commands: /model, /load, /stats, /chat (/set: shell_set.c).
 * They show and change the struct session the shell passes them. */
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/session/session.h"
#include "kernel/shell/shell.h"
#include "kernel/mm/memory.h"
#include "lib/ctype.h"
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/compute/kernels.h"
#include "llm/model/gguf_arch.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model.h"

static double mib(uint64_t bytes) {
    return (double)bytes / (1024.0 * 1024.0);
}

void shell_cmd_model(struct session *session, const char *args) {
    if (!session->model.loaded) {
        kprintf("no model loaded (see /ls and /load)\n");
        return;
    }
    const Model *t = &session->model.llm.model;
    const ModelConfig *c = &t->config;
    char line[448];
    model_describe(t, line, sizeof line);
    kprintf("model:      %s (%s)\n", session->model.model_name, line);
    static const char *const kinds[] = {"tokenizer.bin", "SentencePiece", "byte-level BPE"};
    const Tokenizer *tok = &session->model.llm.tokenizer;
    kprintf("tokenizer:  %s (%s, %d tokens", session->model.tokenizer_name, kinds[tok->kind],
            tok->vocab_size);
    if (tok->kind != TOKENIZER_LLAMA2C) kprintf(", bos %d, eos %d", tok->bos_id, tok->eos_id);
    kprintf("), chat template %s\n", chat_template_name(chat_template_detect(tok)));
    kprintf("config:     dim %d, hidden %d, layers %d, heads %d, kv heads %d, head size %d, vocab %d, "
            "context %d, "
            "%s classifier\n",
            c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->head_size, c->vocab_size,
            c->seq_len, c->shared_classifier ? "shared" : "separate");
    if (*model_features(t, line, sizeof line)) kprintf("features:   %s\n", line);
    uint64_t params = model_param_count(t);
    kprintf("parameters: %llu (%.2f M)\n", (unsigned long long)params, (double)params / 1e6);
    kprintf("rope:       theta %.0f, rms eps %g\n", (double)c->rope_theta, (double)c->norm_eps);
    kprintf("memory:     weights %.1f MiB in place in the ramdisk, run state and KV cache %.1f MiB\n",
            mib(session->model.file_bytes), mib(model_state_bytes(t)));
    uint32_t kv = model_kv_type(t);
    char fixed[120];
    kprintf("kv cache:   %s, %.1f MiB (%s)\n", kv_type_name(kv), mib(model_kv_bytes(t)),
            model_kv_fixed(t, fixed, sizeof fixed) ? fixed : "/set kv f16|q8_0|f32");
    kprintf("kernels:    %s; loaded in %llu ms\n", kernels_active()->name,
            (unsigned long long)session->model.load_ms);
}

void shell_cmd_load(struct session *session, const char *args) {
    char model[SESSION_NAME_MAX];
    size_t n = 0;
    while (args[n] && !isspace((unsigned char)args[n])) n++;
    if (n == 0) {
        kprintf("usage: /load MODEL [TOKENIZER] [q8]   (files in the ramdisk: /ls)\n");
        return;
    }
    if (n >= sizeof model) {
        kprintf("load: name too long\n");
        return;
    }
    memcpy(model, args, n);
    model[n] = 0;
    char tokenizer[SESSION_NAME_MAX] = "";
    int quantize_q8 = 0;
    /* Remaining words: an optional tokenizer name and an optional "q8". */
    for (const char *word = args + n;;) {
        while (isspace((unsigned char)*word)) word++;
        size_t len = 0;
        while (word[len] && !isspace((unsigned char)word[len])) len++;
        if (len == 0) break;
        if (len == 2 && word[0] == 'q' && word[1] == '8') {
            quantize_q8 = 1;
        } else if (!tokenizer[0] && len < sizeof tokenizer) {
            memcpy(tokenizer, word, len);
            tokenizer[len] = 0;
        } else {
            kprintf("usage: /load MODEL [TOKENIZER] [q8]\n");
            return;
        }
        word += len;
    }
    if (session_load(session, model, tokenizer, quantize_q8) != 0 && session->model.loaded)
        kprintf("still using %s\n", session->model.model_name);
}

void shell_cmd_stats(struct session *session, const char *args) {
    if (!session->history.answers) {
        kprintf("no answers yet\n");
        return;
    }
    const GenerateStats *s = &session->history.last;
    kprintf("last answer: %d prompt tokens, %d generated, prefill %.1f ms, decode %.1f ms, stop: %s\n",
            s->prompt_tokens, s->generated_tokens, (double)s->prefill_ns / 1e6, (double)s->decode_ns / 1e6,
            stop_reason_name(s->reason));
    const struct session_history *h = &session->history;
    kprintf("all answers: %d, %llu tokens decoded, %.1f tok/s on average\n", h->answers,
            (unsigned long long)h->total_tokens,
            h->total_decode_ns ? (double)h->total_tokens * 1e9 / (double)h->total_decode_ns : 0.0);
    struct memory_stats m;
    memory_get_stats(&m);
    kprintf("memory: %.1f MiB used, %.1f MiB heap\n", mib(m.used_bytes), mib(m.heap_bytes));
}

/* ------------------------------------------------------------ /chat, /system */

static void chat_usage(void) {
    kprintf("usage: /chat [off|reset|slide|tokens|template "
            "llama3|llama3.1|qwen3|smollm3|gemma|chatml|llama2|zephyr|none|auto]\n");
}

void shell_chat_started(const struct session *session) {
    const Chat *c = &session->chat.chat;
    kprintf("chat: on (template %s%s, context %d tokens); plain lines are your turns, /chat off ends it\n",
            chat_template_name(c->template), c->system ? ", with a system prompt" : "", c->capacity);
}

void shell_cmd_chat(struct session *session, const char *args) {
    if (!*args) {
        if (session->chat.active) {
            session_chat_destroy(session);
            kprintf("chat: off\n");
        } else if (session_chat_create(session) == 0) {
            shell_chat_started(session);
        }
        return;
    }
    if (strcmp(args, "off") == 0) {
        session_chat_destroy(session);
        kprintf("chat: off\n");
    } else if (strcmp(args, "reset") == 0) {
        if (!session->chat.active) {
            kprintf("chat: not in a conversation (/chat starts one)\n");
            return;
        }
        chat_reset(&session->chat.chat);
        session_chat_sampler_destroy(session); /* starting over: the random sequence too */
        session->chat.full = 0;
        kprintf("chat: started over (%d tokens free)\n", session->chat.chat.capacity);
    } else if (strcmp(args, "slide") == 0) {
        if (!session->chat.active) {
            kprintf("chat: not in a conversation (/chat starts one)\n");
            return;
        }
        const char *line = session->chat.full ? session->chat.pending : "";
        char err[160];
        int needed =
            chat_turn_tokens(&session->chat.chat, &session->model.llm.tokenizer, line, err, sizeof err);
        if (needed < 0) {
            kprintf("chat: %s\n", err);
            return;
        }
        /* Room for the turn and a short answer, at most half the context. */
        needed += 1 + session->chat.chat.suffix_count + 16;
        if (needed > session->chat.chat.capacity / 2 + 16) needed = session->chat.chat.capacity / 2 + 16;
        int dropped = chat_slide(&session->chat.chat, &session->model.llm.tokenizer, needed);
        if (dropped < 0) {
            kprintf("chat: even without old turns this line does not fit; /chat reset, or a shorter line\n");
            return;
        }
        kprintf("chat: dropped %d oldest turn%s, %d tokens kept\n", dropped, dropped == 1 ? "" : "s",
                session->chat.chat.count);
        if (session->chat.full) {
            session->chat.full = 0;
            session_chat_answer(session, session->chat.pending);
        }
    } else if (strcmp(args, "tokens") == 0) {
        if (!session->chat.active) {
            kprintf("chat: not in a conversation (/chat starts one)\n");
            return;
        }
        const Chat *c = &session->chat.chat;
        kprintf("chat: %d tokens:", c->count);
        for (int i = 0; i < c->count; i++) kprintf(" %d", c->tokens[i]);
        kprintf("\n");
    } else if (strncmp(args, "template", 8) == 0) {
        const char *name = args + 8;
        while (isspace((unsigned char)*name)) name++;
        ChatTemplate t;
        if (strcmp(name, "auto") == 0) {
            session->chat.template_override = -1;
        } else if (chat_template_parse(name, &t) == 0) {
            session->chat.template_override = (int)t;
        } else {
            chat_usage();
            return;
        }
        kprintf("chat: template %s\n", session->chat.template_override < 0 ? "auto (the model's)" : name);
        if (session->chat.active && session_chat_create(session) == 0) shell_chat_started(session);
    } else {
        chat_usage();
    }
}

void shell_cmd_system(struct session *session, const char *args) {
    if (strlen(args) >= sizeof session->chat.system) {
        kprintf("system: too long (at most %d bytes)\n", (int)sizeof session->chat.system - 1);
        return;
    }
    strlcpy(session->chat.system, args, sizeof session->chat.system);
    if (!*args)
        kprintf("system: cleared\n");
    else
        kprintf("system: set\n");
    if (session->chat.active && session_chat_create(session) == 0) {
        kprintf("chat: the conversation starts over with it\n");
        shell_chat_started(session);
    }
}
