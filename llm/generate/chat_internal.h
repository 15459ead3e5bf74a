/* chat_internal.h - the pieces a chat turn is made of, shared by the
 * template renderer (chat_template.c) and the conversation (chat.c). */
#ifndef LLM_CHAT_INTERNAL_H
#define LLM_CHAT_INTERNAL_H

#include "llm/generate/chat.h"

typedef enum {
    SEG_BOS,       /* the BOS token (bos_token in the Jinja) */
    SEG_TEMPLATE,  /* template text: special tokens parsed */
    SEG_TEXT,      /* the user's, system's or model's text: never parsed */
    SEG_GEN_THINK, /* template text of the generation prompt only, gone from history (Qwen3's empty block) */
} ChatSegmentKind;

typedef struct {
    ChatSegmentKind kind;
    const char *text;
    size_t len;
} ChatSegment;

#define CHAT_MAX_SEGMENTS 24

typedef struct {
    ChatSegment seg[CHAT_MAX_SEGMENTS];
    int n;
    char *scratch; /* owned: text derived from the system prompt (SmolLM3) */
} ChatParts;

/* Appends one turn: the system part when first, the user's message and the
 * generation prompt. bos: whether the conversation starts with BOS. Returns
 * 0, or -1 when out of memory. */
int chat_parts_turn(ChatParts *p, ChatTemplate t, const ChatOptions *o, const char *system, const char *user,
                    int first, int bos);
void chat_parts_destroy(ChatParts *p);
/* Token ids of the parts in a fresh malloc'd array (*out). */
int chat_parts_encode_alloc(const ChatParts *p, const Tokenizer *tok, int **out, int *gen_think_at, char *err,
                            size_t err_size);

/* Whether a conversation with this template starts with BOS. */
int chat_template_wants_bos(ChatTemplate t, const Tokenizer *tok);
/* Qwen3: earlier answers lose their think block. */
int chat_template_drops_think(ChatTemplate t);
/* Gemma: the system prompt is part of the first user turn. */
int chat_template_folds_system(ChatTemplate t);
/* The text of the template's end-of-turn token, or NULL. */
const char *chat_template_end_of_turn(ChatTemplate t);

/* The Jinja-driven conversation (chat_jinja.c). begin: renders the
 * conversation with `user` next, keeps the tokens the KV cache shares with
 * it, appends the rest (0, -1 or CHAT_NO_ROOM with a reason); end: keeps the
 * answer (tokens from answer_start) as the next message. */
int chat_jinja_begin(Chat *c, const Tokenizer *tok, const char *user, char *err, size_t err_size);
/* Forgets the message chat_jinja_begin added (a turn stopped inside its prefill). */
void chat_jinja_take_back(Chat *c);
int chat_jinja_end(Chat *c, const Tokenizer *tok, char *err, size_t err_size);
int chat_jinja_turn_tokens(const Chat *c, const Tokenizer *tok, const char *user, char *err, size_t err_size);
int chat_jinja_slide(Chat *c, const Tokenizer *tok, int needed);
void chat_forget_said(Chat *c);

#endif
