/* chat_template.c - the chat templates of the model families, written out
 * from their Jinja texts (tokenizer.chat_template): which one a vocabulary
 * asks for, and the segments a turn and an earlier answer are made of. */
#include "lib/ctype.h"
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/generate/chat_internal.h"

typedef struct {
    const char *name;
    int bos;                 /* 1: the Jinja writes bos_token; 0: never; -1: as the vocabulary's add_bos */
    const char *suffix;      /* closes an answer */
    const char *end_of_turn; /* the token that ends an answer */
    int has_thinking, drops_think, folds_system, trims;
} TemplateSpec;

/* Indexed by ChatTemplate. */
static const TemplateSpec specs[CHAT_TEMPLATE_COUNT] = {
    [CHAT_TEMPLATE_NONE] = {"none", -1, "", NULL, 0, 0, 0, 0},
    [CHAT_TEMPLATE_CHATML] = {"chatml", -1, "<|im_end|>\n", "<|im_end|>", 0, 0, 0, 0},
    [CHAT_TEMPLATE_LLAMA3] = {"llama3", 1, "<|eot_id|>", "<|eot_id|>", 0, 0, 0, 1},
    [CHAT_TEMPLATE_LLAMA2] = {"llama2", 1, "</s>", NULL, 0, 0, 0, 0},
    [CHAT_TEMPLATE_ZEPHYR] = {"zephyr", -1, "</s>\n", NULL, 0, 0, 0, 0},
    [CHAT_TEMPLATE_QWEN3] = {"qwen3", 0, "<|im_end|>\n", "<|im_end|>", 1, 1, 0, 0},
    [CHAT_TEMPLATE_SMOLLM3] = {"smollm3", 0, "<|im_end|>\n", "<|im_end|>", 1, 0, 0, 0},
    [CHAT_TEMPLATE_GEMMA] = {"gemma", 1, "<end_of_turn>\n", "<end_of_turn>", 0, 0, 1, 1},
    [CHAT_TEMPLATE_LLAMA31] = {"llama3.1", 1, "<|eot_id|>", "<|eot_id|>", 0, 0, 0, 1},
};

/* Recognition: the first row whose markers all occur in the Jinja text. */
static const struct {
    ChatTemplate t;
    const char *markers[2];
} template_markers[] = {
    {CHAT_TEMPLATE_GEMMA, {"<start_of_turn>", NULL}},
    {CHAT_TEMPLATE_SMOLLM3, {"<|im_start|>", "Reasoning Mode"}},
    {CHAT_TEMPLATE_QWEN3, {"<|im_start|>", "enable_thinking"}},
    {CHAT_TEMPLATE_CHATML, {"<|im_start|>", NULL}},
    {CHAT_TEMPLATE_LLAMA31, {"<|start_header_id|>", "Cutting Knowledge Date"}},
    {CHAT_TEMPLATE_LLAMA3, {"<|start_header_id|>", NULL}},
    {CHAT_TEMPLATE_ZEPHYR, {"<|user|>", NULL}},
    {CHAT_TEMPLATE_LLAMA2, {"[INST]", NULL}},
};

/* Without a recognised Jinja text: the vocabulary's special tokens. */
static const struct {
    ChatTemplate t;
    const char *token;
} template_tokens[] = {
    {CHAT_TEMPLATE_CHATML, "<|im_start|>"},
    {CHAT_TEMPLATE_LLAMA3, "<|start_header_id|>"},
    {CHAT_TEMPLATE_GEMMA, "<start_of_turn>"},
};

const char *chat_template_name(ChatTemplate t) {
    return (unsigned)t < CHAT_TEMPLATE_COUNT ? specs[t].name : "unknown";
}

int chat_template_parse(const char *name, ChatTemplate *out) {
    for (int i = 0; i < CHAT_TEMPLATE_COUNT; i++) {
        if (strcmp(name, specs[i].name) == 0) {
            *out = (ChatTemplate)i;
            return 0;
        }
    }
    return -1;
}

int chat_template_has_thinking(ChatTemplate t) {
    return (unsigned)t < CHAT_TEMPLATE_COUNT && specs[t].has_thinking;
}
int chat_template_drops_think(ChatTemplate t) {
    return (unsigned)t < CHAT_TEMPLATE_COUNT && specs[t].drops_think;
}
int chat_template_folds_system(ChatTemplate t) {
    return (unsigned)t < CHAT_TEMPLATE_COUNT && specs[t].folds_system;
}
const char *chat_template_end_of_turn(ChatTemplate t) {
    return (unsigned)t < CHAT_TEMPLATE_COUNT ? specs[t].end_of_turn : NULL;
}

int chat_template_wants_bos(ChatTemplate t, const Tokenizer *tok) {
    if (tok->bos_id < 0) return 0;
    if (tok->kind == TOKENIZER_LLAMA2C) return 1;
    int bos = (unsigned)t < CHAT_TEMPLATE_COUNT ? specs[t].bos : -1;
    return bos < 0 ? tok->add_bos : bos;
}

ChatTemplate chat_template_detect_why(const Tokenizer *tok, char *why, size_t why_size) {
    char scratch[8];
    if (!why) why = scratch, why_size = sizeof scratch;
    const char *jinja = tok->chat_template;
    if (jinja) {
        for (size_t i = 0; i < sizeof template_markers / sizeof template_markers[0]; i++) {
            const char *a = template_markers[i].markers[0], *b = template_markers[i].markers[1];
            if (!strstr(jinja, a) || (b && !strstr(jinja, b))) continue;
            snprintf(why, why_size, "tokenizer.chat_template has %s%s%s", a, b ? " and " : "", b ? b : "");
            return template_markers[i].t;
        }
    }
    const char *missing = jinja ? "tokenizer.chat_template not recognised" : "no tokenizer.chat_template";
    if (tok->kind != TOKENIZER_LLAMA2C) {
        for (size_t i = 0; i < sizeof template_tokens / sizeof template_tokens[0]; i++) {
            const char *token = template_tokens[i].token;
            if (tokenizer_lookup(tok, token, strlen(token)) < 0) continue;
            snprintf(why, why_size, "%s; the vocabulary has %s", missing, token);
            return template_tokens[i].t;
        }
    }
    snprintf(why, why_size, "%s: turns are plain text", missing);
    return CHAT_TEMPLATE_NONE;
}

ChatTemplate chat_template_detect(const Tokenizer *tok) {
    return chat_template_detect_why(tok, NULL, 0);
}

/* ------------------------------------------------------------ segments */

/* The build date as strftime's "%d %B %Y" (SmolLM3's "Today Date" when no
 * clock says otherwise): __DATE__ is "Mmm dd yyyy". */
static const char *build_date(void) {
    static char date[24];
    static const char *const months[] = {"January",   "February", "March",    "April",
                                         "May",       "June",     "July",     "August",
                                         "September", "October",  "November", "December"};
    const char *d = __DATE__;
    int month = 0;
    for (int i = 0; i < 12; i++)
        if (strncmp(d, months[i], 3) == 0) month = i;
    snprintf(date, sizeof date, "%c%c %s %s", d[4] == ' ' ? '0' : d[4], d[5], months[month], d + 7);
    return date;
}

ChatOptions chat_default_options(void) {
    return (ChatOptions){.enable_thinking = 1, .date = NULL};
}

static void add(ChatParts *p, ChatSegmentKind kind, const char *text, size_t len) {
    if (p->n < CHAT_MAX_SEGMENTS) p->seg[p->n++] = (ChatSegment){kind, text, len};
}
static void add_template(ChatParts *p, const char *text) {
    add(p, SEG_TEMPLATE, text, strlen(text));
}
static void add_text(ChatParts *p, const char *text) {
    add(p, SEG_TEXT, text, strlen(text));
}
/* Jinja's `| trim` (Python's strip()). */
static void add_trimmed(ChatParts *p, const char *text) {
    size_t len = strlen(text);
    while (len && isspace((unsigned char)*text)) text++, len--;
    while (len && isspace((unsigned char)text[len - 1])) len--;
    add(p, SEG_TEXT, text, len);
}

/* A message between its template text: BEFORE, the text (Jinja's `| trim`
 * when trim), AFTER. */
static void add_message(ChatParts *p, const char *before, const char *text, int trim, const char *after) {
    add_template(p, before);
    if (trim)
        add_trimmed(p, text);
    else
        add_text(p, text);
    add_template(p, after);
}

/* Removes every occurrence of `what` from s, in place. */
static void remove_all(char *s, const char *what) {
    size_t n = strlen(what);
    char *at;
    while ((at = strstr(s, what))) memmove(at, at + n, strlen(at + n) + 1);
}
static void rstrip(char *s) {
    size_t len = strlen(s);
    while (len && isspace((unsigned char)s[len - 1])) s[--len] = '\0';
}

static const char smollm3_think_instructions[] =
    "You are a helpful AI assistant named SmolLM, trained by Hugging Face. Your role as an assistant "
    "involves "
    "thoroughly exploring questions through a systematic thinking process before providing the final precise "
    "and accurate solutions. This requires engaging in a comprehensive cycle of analysis, summarizing, "
    "exploration, reassessment, reflection, backtracking, and iteration to develop well-considered thinking "
    "process. Please structure your response into two main sections: Thought and Solution using the "
    "specified "
    "format: <think> Thought section </think> Solution section. In the Thought section, detail your "
    "reasoning "
    "process in steps. Each step should include detailed considerations such as analysing questions, "
    "summarizing relevant findings, brainstorming new ideas, verifying the accuracy of the current steps, "
    "refining any errors, and revisiting previous steps. In the Solution section, based on various attempts, "
    "explorations, and reflections from the Thought section, systematically present the final solution that "
    "you deem correct. The Solution section should be logical, accurate, and concise and detail necessary "
    "steps needed to reach the conclusion.\n\n";

/* SmolLM3's reasoning mode: /no_think or /think in the system prompt win
 * over enable_thinking. */
static int smollm3_thinks(const ChatOptions *o, const char *system) {
    if (system && strstr(system, "/no_think")) return 0;
    if (system && strstr(system, "/think")) return 1;
    return o->enable_thinking;
}

/* SmolLM3's system block, always written (with or without a system prompt). */
static int smollm3_system(ChatParts *p, const ChatOptions *o, const char *system) {
    int thinks = smollm3_thinks(o, system);
    const char *s = system ? system : "";
    p->scratch = malloc(strlen(s) + 1);
    if (!p->scratch) return -1;
    memcpy(p->scratch, s, strlen(s) + 1);
    remove_all(p->scratch, "/no_think");
    remove_all(p->scratch, "/think");
    rstrip(p->scratch);
    add_template(p, "<|im_start|>system\n");
    if (strstr(s, "/system_override")) {
        remove_all(p->scratch, "/system_override");
        rstrip(p->scratch);
        add_message(p, "", p->scratch, 0, "<|im_end|>\n");
        return 0;
    }
    add_template(p, "## Metadata\n\nKnowledge Cutoff Date: June 2025\nToday Date: ");
    add_text(p, o->date ? o->date : build_date());
    add_template(p, thinks ? "\nReasoning Mode: /think\n\n## Custom Instructions\n\n"
                           : "\nReasoning Mode: /no_think\n\n## Custom Instructions\n\n");
    if (*p->scratch) {
        add_message(p, "", p->scratch, 0, "\n\n");
    } else {
        add_template(p, thinks ? smollm3_think_instructions
                               : "You are a helpful AI assistant named SmolLM, trained by Hugging Face.\n\n");
    }
    add_template(p, "## Tools\n\n### XML Tools\n\nNone\n\n### Python Tools\n\nNone\n\n<|im_end|>\n");
    return 0;
}

/* Qwen3's generation prompt with enable_thinking false. */
static const char qwen3_no_think[] = "<think>\n\n</think>\n\n";

int chat_parts_turn(ChatParts *p, ChatTemplate t, const ChatOptions *o, const char *system, const char *user,
                    int first, int bos) {
    int with_system = first && system && *system;
    if (bos && (first || t == CHAT_TEMPLATE_LLAMA2)) add(p, SEG_BOS, NULL, 0);
    switch (t) {
    case CHAT_TEMPLATE_COUNT:
    case CHAT_TEMPLATE_NONE:
        if (with_system) add_text(p, system);
        add_text(p, user);
        break;
    case CHAT_TEMPLATE_CHATML:
    case CHAT_TEMPLATE_QWEN3:
        if (with_system) add_message(p, "<|im_start|>system\n", system, 0, "<|im_end|>\n");
        add_message(p, "<|im_start|>user\n", user, 0, "<|im_end|>\n<|im_start|>assistant\n");
        if (t == CHAT_TEMPLATE_QWEN3 && !o->enable_thinking)
            add(p, SEG_GEN_THINK, qwen3_no_think, strlen(qwen3_no_think));
        break;
    case CHAT_TEMPLATE_SMOLLM3:
        if (first && smollm3_system(p, o, system) != 0) return -1;
        /* The empty block stays in history here, so it is template text. */
        add_message(p, "<|im_start|>user\n", user, 0,
                    smollm3_thinks(o, system) ? "<|im_end|>\n<|im_start|>assistant\n"
                                              : "<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n");
        break;
    case CHAT_TEMPLATE_LLAMA31:
    case CHAT_TEMPLATE_LLAMA3:
        /* Llama 3.1/3.2 write the system block with or without a system
         * prompt; their date is strftime_now's, else (no clock here, and
         * always in 3.1) "26 Jul 2024". */
        if (t == CHAT_TEMPLATE_LLAMA31 && first)
            add_message(
                p,
                "<|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
                "Today Date: 26 Jul 2024\n\n",
                system ? system : "", 1, "<|eot_id|>");
        else if (with_system)
            add_message(p, "<|start_header_id|>system<|end_header_id|>\n\n", system, 1, "<|eot_id|>");
        add_message(p, "<|start_header_id|>user<|end_header_id|>\n\n", user, 1,
                    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        break;
    case CHAT_TEMPLATE_GEMMA:
        add_template(p, "<start_of_turn>user\n");
        if (with_system) add_message(p, "", system, 0, "\n\n"); /* first_user_prefix: not trimmed */
        add_message(p, "", user, 1, "<end_of_turn>\n<start_of_turn>model\n");
        break;
    case CHAT_TEMPLATE_LLAMA2:
        add_template(p, "[INST] ");
        if (with_system) add_message(p, "<<SYS>>\n", system, 0, "\n<</SYS>>\n\n");
        add_message(p, "", user, 0, " [/INST]");
        break;
    case CHAT_TEMPLATE_ZEPHYR:
        if (with_system) add_message(p, "<|system|>\n", system, 0, "</s>\n");
        add_message(p, "<|user|>\n", user, 0, "</s>\n<|assistant|>\n");
        break;
    }
    return 0;
}

const char *chat_answer_suffix(ChatTemplate t) {
    return (unsigned)t < CHAT_TEMPLATE_COUNT ? specs[t].suffix : "";
}

static void chat_parts_answer(ChatParts *p, ChatTemplate t, const char *answer) {
    if (specs[t].drops_think) {
        /* content.split('</think>')[-1].lstrip('\n') when it has a block */
        const char *after = NULL, *at = answer;
        while ((at = strstr(at, "</think>"))) after = at += 8;
        if (after) {
            while (*after == '\n') after++;
            answer = after;
        }
    }
    if (t == CHAT_TEMPLATE_SMOLLM3)
        while (*answer == '\n') answer++;
    add_message(p, "", answer, specs[t].trims, specs[t].suffix);
}

void chat_parts_destroy(ChatParts *p) {
    free(p->scratch);
    p->scratch = NULL;
    p->n = 0;
}

static int chat_parts_encode(const ChatParts *p, const Tokenizer *tok, int *ids, int capacity,
                             int *gen_think_at, char *err, size_t err_size) {
    int count = 0;
    if (gen_think_at) *gen_think_at = -1;
    for (int i = 0; i < p->n; i++) {
        const ChatSegment *s = &p->seg[i];
        if (s->kind == SEG_GEN_THINK && gen_think_at && *gen_think_at < 0) *gen_think_at = count;
        if (s->kind == SEG_BOS) {
            if (count >= capacity) goto full;
            ids[count++] = tok->bos_id;
            continue;
        }
        if (!s->len) continue;
        int got = tokenizer_encode_ex(tok, s->text, s->len, s->kind == SEG_TEXT ? 0 : TOKENIZE_PARSE_SPECIAL,
                                      ids + count, (size_t)(capacity - count), err, err_size);
        if (got < 0) return -1;
        count += got;
    }
    if (gen_think_at && *gen_think_at < 0) *gen_think_at = count;
    return count;
full:
    strlcpy(err, "the conversation has more tokens than the buffer holds", err_size);
    return -1;
}

int chat_parts_encode_alloc(const ChatParts *p, const Tokenizer *tok, int **out, int *gen_think_at, char *err,
                            size_t err_size) {
    size_t capacity = 1;
    for (int i = 0; i < p->n; i++)
        capacity += p->seg[i].kind == SEG_BOS ? 1 : tokenizer_max_tokens(p->seg[i].len);
    int *ids = malloc(capacity * sizeof(int));
    if (!ids) {
        strlcpy(err, "out of memory for the turn's tokens", err_size);
        return -1;
    }
    int n = chat_parts_encode(p, tok, ids, (int)capacity, gen_think_at, err, err_size);
    if (n < 0) {
        free(ids);
        return -1;
    }
    *out = ids;
    return n;
}

/* ------------------------------------------------------------ text */

/* Appends the parts' text to out (already len long); returns the new length. */
static size_t parts_text(const ChatParts *p, const char *bos_text, char *out, size_t out_size, size_t len) {
    for (int i = 0; i < p->n; i++) {
        const char *text = p->seg[i].text;
        size_t add_len = p->seg[i].len;
        if (p->seg[i].kind == SEG_BOS) {
            if (!bos_text) continue;
            text = bos_text, add_len = strlen(bos_text);
        }
        if (out_size && len < out_size - 1) {
            size_t room = out_size - 1 - len, n = add_len < room ? add_len : room;
            memcpy(out + len, text, n);
            out[len + n] = '\0';
        }
        len += add_len;
    }
    return len;
}

size_t chat_render_turn(ChatTemplate t, const char *system, const char *user, int first, char *out,
                        size_t out_size) {
    ChatParts p = {0};
    ChatOptions o = chat_default_options();
    if (out_size) out[0] = '\0';
    chat_parts_turn(&p, t, &o, system, user, first, 0);
    size_t len = parts_text(&p, NULL, out, out_size, 0);
    chat_parts_destroy(&p);
    return len < out_size ? len : (out_size ? out_size - 1 : 0);
}

/* Turn i/2 of a conversation (messages[i] the user's), with its answer
 * messages[i + 1] as history writes it when there is one. */
static int conversation_parts(ChatParts *p, ChatTemplate t, const ChatOptions *o, const char *system,
                              const char *const *messages, int count, int i, int bos) {
    if (chat_parts_turn(p, t, o, system, messages[i], i == 0, bos) != 0) return -1;
    if (i + 1 < count) {
        while (p->n && p->seg[p->n - 1].kind == SEG_GEN_THINK) p->n--;
        chat_parts_answer(p, t, messages[i + 1]);
    }
    return 0;
}

size_t chat_render(ChatTemplate t, const ChatOptions *o, const char *system, const char *const *messages,
                   int count, const char *bos_text, char *out, size_t out_size) {
    size_t len = 0;
    if (out_size) out[0] = '\0';
    for (int i = 0; i < count; i += 2) {
        ChatParts p = {0};
        conversation_parts(&p, t, o, system, messages, count, i, bos_text != NULL);
        len = parts_text(&p, bos_text, out, out_size, len);
        chat_parts_destroy(&p);
    }
    return len;
}

int chat_encode(ChatTemplate t, const ChatOptions *o, const Tokenizer *tok, const char *system,
                const char *const *messages, int count, int *ids, int capacity, char *err, size_t err_size) {
    int bos = chat_template_wants_bos(t, tok), total = 0;
    for (int i = 0; i < count; i += 2) {
        ChatParts p = {0};
        if (conversation_parts(&p, t, o, system, messages, count, i, bos) != 0) {
            strlcpy(err, "out of memory for the system prompt", err_size);
            return -1;
        }
        int got = chat_parts_encode(&p, tok, ids + total, capacity - total, NULL, err, err_size);
        chat_parts_destroy(&p);
        if (got < 0) return -1;
        total += got;
    }
    return total;
}
