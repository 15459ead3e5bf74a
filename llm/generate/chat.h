/* chat.h - multi-turn conversations: the GGUF's own chat template through
 * the Jinja engine (chat_jinja*.c), else built-in chat templates (Llama 3, ChatML,
 * Qwen3 and SmolLM3 with their thinking switches, Gemma, Llama 2, Zephyr,
 * none; llm/generate/chat_template.c) and a conversation that keeps the KV cache
 * across turns, so each turn prefills only its own new tokens.
 *
 * Template text (role headers, <|im_start|>...) is tokenized with
 * TOKENIZE_PARSE_SPECIAL; the user's and the system prompt's text never is,
 * so typing "<|im_end|>" cannot forge a turn. */
#ifndef LLM_CHAT_H
#define LLM_CHAT_H

#include <stddef.h>

#include "llm/generate/generate.h"

typedef enum {
    CHAT_TEMPLATE_NONE = 0, /* turns are concatenated text (llama2.c models) */
    CHAT_TEMPLATE_CHATML,   /* <|im_start|>role\n...<|im_end|>\n (SmolLM, Qwen) */
    CHAT_TEMPLATE_LLAMA3,   /* <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|> */
    CHAT_TEMPLATE_LLAMA2,   /* <s>[INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST] ...</s> */
    CHAT_TEMPLATE_ZEPHYR,   /* <|user|>\n...</s>\n<|assistant|>\n (TinyLlama) */
    CHAT_TEMPLATE_QWEN3,    /* ChatML; thinking off: an empty <think> block opens the answer;
                               earlier answers lose their think block */
    CHAT_TEMPLATE_SMOLLM3,  /* ChatML with a metadata system block, "Reasoning Mode: /think|/no_think" */
    CHAT_TEMPLATE_GEMMA,    /* <start_of_turn>user\n...<end_of_turn>\n<start_of_turn>model\n, system
                               folded into the first user turn */
    CHAT_TEMPLATE_LLAMA31,  /* Llama 3.1/3.2: Llama 3 with a system block always there, opening with
                               "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n" */
    CHAT_TEMPLATE_COUNT
} ChatTemplate;

/* The template a vocabulary asks for: the first row of a marker table whose
 * markers all occur in tokenizer.chat_template, else its special tokens
 * (<|im_start|> -> ChatML, <|start_header_id|> -> Llama 3, <start_of_turn>
 * -> Gemma), else none. `why` (may be NULL) gets one line saying which. */
ChatTemplate chat_template_detect(const Tokenizer *tok);
ChatTemplate chat_template_detect_why(const Tokenizer *tok, char *why, size_t why_size);
const char *chat_template_name(ChatTemplate t);
/* Whether the GGUF's tokenizer.chat_template can drive /chat through the
 * Jinja engine (llm/jinja): a probe conversation must render and split into
 * template text and message text. Returns 0 and sets `why` to say so, or -1
 * and appends to `why` the reason and that built-in template t is used. */
int chat_template_check_jinja(const Tokenizer *tok, ChatTemplate t, char *why, size_t why_size);
/* "none" "chatml" "llama3" "llama2" "zephyr" "qwen3" "smollm3" "gemma" "llama3.1";
 * returns 0, or -1 for another name. */
int chat_template_parse(const char *name, ChatTemplate *out);
/* Whether the template has a thinking switch (Qwen3's enable_thinking,
 * SmolLM3's /think and /no_think). */
int chat_template_has_thinking(ChatTemplate t);

/* What a template's Jinja takes besides the messages. */
typedef struct {
    int enable_thinking; /* 1 (the templates' default) or 0 */
    const char *date;    /* SmolLM3's "Today Date" ("%d %B %Y"); NULL: the build date */
} ChatOptions;
ChatOptions chat_default_options(void);

/* A conversation's token ids (*out malloc'd) through the Jinja template
 * tmpl: system (NULL or "": none), messages[0] user, [1] assistant, ...,
 * with add_generation_prompt, bos_token, eos_token (and enable_thinking
 * false when o says so). Template text is tokenized with special tokens
 * parsed, message text never. Returns the count, or -1 with a reason. */
int chat_jinja_encode(const Tokenizer *tok, const char *tmpl, const ChatOptions *o, const char *system,
                      const char *const *messages, int count, int **out, char *err, size_t err_size);

/* The text a turn adds before the answer (system part only when first),
 * and the text that closes the answer. BOS tokens are not shown. Returns the
 * length written (truncated to out_size - 1), for tests and reports. */
size_t chat_render_turn(ChatTemplate t, const char *system, const char *user, int first, char *out,
                        size_t out_size);
const char *chat_answer_suffix(ChatTemplate t);

/* A whole conversation as the template's Jinja renders it with
 * add_generation_prompt: system (NULL: none), then messages[0] user,
 * messages[1] assistant, ..., messages[count-1] user. Earlier answers are
 * written as the template writes history (Qwen3 drops their think block,
 * Llama 3 and Gemma trim them). bos_text stands for bos_token (NULL: not
 * written). Returns the full length (out truncated to out_size - 1). */
size_t chat_render(ChatTemplate t, const ChatOptions *o, const char *system, const char *const *messages,
                   int count, const char *bos_text, char *out, size_t out_size);
/* The same conversation as token ids, the way a /chat turn encodes it
 * (template text with special tokens parsed, message text never). Returns
 * the count, or -1 with a reason in err (too small for `capacity` too). */
int chat_encode(ChatTemplate t, const ChatOptions *o, const Tokenizer *tok, const char *system,
                const char *const *messages, int count, int *ids, int capacity, char *err, size_t err_size);

#define CHAT_MAX_STOP 8
#define CHAT_NO_ROOM 1 /* chat_turn's return when the turn does not fit the context */

typedef struct {
    ChatTemplate template;
    char *system; /* malloc'd copy, NULL for none */
    int *tokens;  /* everything said so far, capacity = the context length */
    int capacity;
    int count;        /* tokens in the history */
    int pos;          /* of those, how many the KV cache holds (pos <= count) */
    int *turn_starts; /* history index where each turn begins */
    int turns;
    int prefix_count; /* BOS + system part: kept when sliding */
    int fold_header;  /* Gemma: the user header inside the prefix, skipped in the first kept turn */
    int stop_ids[CHAT_MAX_STOP];
    int stop_count;
    int suffix_ids[32]; /* the answer suffix, tokenized */
    int suffix_count;
    int think_open, think_close; /* <think> / </think> token ids, -1 if absent */
    int hide_think;              /* 1: the think block is not emitted */
    int thinking;                /* inside a hidden think block */
    ChatOptions options;         /* enable_thinking, date: set before the first turn */
    int answer_start;            /* history index where the last answer's message begins */
    int after_think;             /* newlines right after a hidden block are dropped too */
    const char *jinja;           /* the GGUF's template rendered each turn; NULL: `template` is used */
    char **said;                 /* jinja: the messages so far, user, assistant, ... (malloc'd) */
    int said_count, said_capacity;
} Chat;

/* A conversation for this model and vocabulary (no tokens run yet).
 * Returns 0, or -1 with a one-line reason in err. */
int chat_create(Chat *c, const Model *t, const Tokenizer *tok, ChatTemplate tmpl, const char *system,
                char *err, size_t err_size);
void chat_destroy(Chat *c);
/* Turns are rendered by the Jinja template tmpl (tokenizer.chat_template,
 * which must outlive c) for the whole conversation; only the tokens after
 * what the KV cache holds in common with it are prefilled. */
void chat_use_jinja(Chat *c, const char *tmpl);
/* Forgets every turn (the system prompt stays). */
void chat_reset(Chat *c);
/* Drops the oldest turns (the system part stays) until `needed` more tokens
 * fit; the rest is re-prefilled by the next turn. Returns the number of
 * turns dropped, or -1 when even an empty history leaves too little room. */
int chat_slide(Chat *c, const Tokenizer *tok, int needed);

/* Tokens the turn for `user` adds to the history (template and text). */
int chat_turn_tokens(const Chat *c, const Tokenizer *tok, const char *user, char *err, size_t err_size);

/* A turn that was answered elsewhere (an API request's history): the
 * user's turn, the answer's text (tokenized, special tokens not parsed) and
 * the suffix are appended without running the model; the next chat_turn
 * prefills them. 0, -1 or CHAT_NO_ROOM with a reason in err. */
int chat_add_answered_turn(Chat *c, const Tokenizer *tok, const char *user, const char *answer, char *err,
                           size_t err_size);

/* One turn: appends the user's turn, prefills everything the KV cache does
 * not hold yet, samples the answer (streamed through io, at most max_new
 * tokens, <= 0: no limit but the context) until a stop token, then closes the
 * answer with the template's suffix. Returns 0, -1 with a reason in err, or
 * CHAT_NO_ROOM (err says how many tokens are missing; nothing changed). */
int chat_turn(Chat *c, Model *t, const Tokenizer *tok, Sampler *s, const char *user, int max_new,
              const GenerateIO *io, GenerateStats *stats, char *err, size_t err_size);

#endif
