/* chat.h - multi-turn conversations: chat templates (ChatML, Llama 3,
 * Llama 2, Zephyr, none) and a conversation that keeps the KV cache across
 * turns, so each turn prefills only its own new tokens.
 *
 * Template text (role headers, <|im_start|>...) is tokenized with
 * TOKENIZE_PARSE_SPECIAL; the user's and the system prompt's text never is,
 * so typing "<|im_end|>" cannot forge a turn. */
#ifndef LLM_CHAT_H
#define LLM_CHAT_H

#include <stddef.h>

#include "llm/generate.h"

typedef enum {
    CHAT_TEMPLATE_NONE = 0, /* turns are concatenated text (llama2.c models) */
    CHAT_TEMPLATE_CHATML,   /* <|im_start|>role\n...<|im_end|>\n (SmolLM, Qwen) */
    CHAT_TEMPLATE_LLAMA3,   /* <|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|> */
    CHAT_TEMPLATE_LLAMA2,   /* <s>[INST] <<SYS>>\n...\n<</SYS>>\n\n... [/INST] ...</s> */
    CHAT_TEMPLATE_ZEPHYR,   /* <|user|>\n...</s>\n<|assistant|>\n (TinyLlama) */
} ChatTemplate;

/* The template a vocabulary asks for: substrings of tokenizer.chat_template,
 * else its special tokens (<|im_start|> -> ChatML, <|eot_id|> -> Llama 3),
 * else none. */
ChatTemplate chat_template_detect(const Tokenizer *tok);
const char *chat_template_name(ChatTemplate t);
/* "chatml" "llama3" "llama2" "zephyr" "none"; returns 0, or -1 for another name. */
int chat_template_parse(const char *name, ChatTemplate *out);

/* The text a turn adds before the answer (system part only when first),
 * and the text that closes the answer. BOS tokens are not shown. Returns the
 * length written (truncated to out_size - 1), for tests and reports. */
size_t chat_render_turn(ChatTemplate t, const char *system, const char *user, int first, char *out,
                        size_t out_size);
const char *chat_answer_suffix(ChatTemplate t);

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
    int stop_ids[CHAT_MAX_STOP];
    int stop_count;
    int suffix_ids[32]; /* the answer suffix, tokenized */
    int suffix_count;
    int think_open, think_close; /* <think> / </think> token ids, -1 if absent */
    int hide_think;              /* 1: the think block is not emitted */
    int thinking;                /* inside a hidden think block */
    int after_think;             /* newlines right after a hidden block are dropped too */
} Chat;

/* A conversation for this model and vocabulary (no tokens run yet).
 * Returns 0, or -1 with a one-line reason in err. */
int chat_create(Chat *c, const Transformer *t, const Tokenizer *tok, ChatTemplate tmpl, const char *system,
                char *err, size_t err_size);
void chat_destroy(Chat *c);
/* Forgets every turn (the system prompt stays). */
void chat_reset(Chat *c);
/* Drops the oldest turns (the system part stays) until `needed` more tokens
 * fit; the rest is re-prefilled by the next turn. Returns the number of
 * turns dropped, or -1 when even an empty history leaves too little room. */
int chat_slide(Chat *c, int needed);

/* Tokens the turn for `user` adds to the history (template and text). */
int chat_turn_tokens(const Chat *c, const Tokenizer *tok, const char *user, char *err, size_t err_size);

/* One turn: appends the user's turn, prefills everything the KV cache does
 * not hold yet, samples the answer (streamed through io, at most max_new
 * tokens, <= 0: no limit but the context) until a stop token, then closes the
 * answer with the template's suffix. Returns 0, -1 with a reason in err, or
 * CHAT_NO_ROOM (err says how many tokens are missing; nothing changed). */
int chat_turn(Chat *c, Transformer *t, const Tokenizer *tok, Sampler *s, const char *user, int max_new,
              const GenerateIO *io, GenerateStats *stats, char *err, size_t err_size);

#endif
