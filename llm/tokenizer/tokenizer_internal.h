/* tokenizer_internal.h - shared between tokenizer.c (tokenizer.bin),
 * tokenizer_gguf.c (GGUF loading, specials, decoding), tokenizer_gguf_encode.c
 * (GGUF encoding) and bpe.c (the SentencePiece and byte-level BPE merge
 * loops). Not a public interface. */
#ifndef LLM_TOKENIZER_INTERNAL_H
#define LLM_TOKENIZER_INTERNAL_H

#include "llm/tokenizer/tokenizer.h"

#define TOKENIZER_HASH_SEED 2166136261u

/* FNV-1a, chainable so a pair can be hashed without joining it. */
uint32_t tokenizer_hash_bytes(uint32_t h, const char *s, size_t len);
/* Token id of the bytes a followed by b, or -1. */
int tokenizer_lookup_pair(const Tokenizer *t, const char *a, size_t alen, const char *b, size_t blen);
/* The same, with hash = the chained tokenizer_hash_bytes of a then b. */
int tokenizer_lookup_hashed(const Tokenizer *t, uint32_t hash, const char *a, size_t alen, const char *b,
                            size_t blen);
/* Formats the message into err (when given); returns -1. */
int tokenizer_fail(char *err, size_t err_size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Where encoders append ids; `overflow` is set instead of writing past cap. */
typedef struct {
    int *ids;
    size_t count, cap;
    int overflow;
} TokenOutput;

static inline void token_output_push(TokenOutput *out, int id) {
    if (out->count < out->cap)
        out->ids[out->count++] = id;
    else
        out->overflow = 1;
}

/* SentencePiece on one text fragment (spaces already U+2581). 0, or -1 when
 * out of memory. */
int spm_encode_fragment(const Tokenizer *t, const char *text, size_t len, TokenOutput *out);
/* Byte-level BPE on one text fragment: pre-tokenise, then merge each word. */
int bpe_encode_fragment(const Tokenizer *t, const char *text, size_t len, TokenOutput *out);
/* GPT-2's bytes_to_unicode: the UTF-8 of the character byte b stands for
 * (4 bytes of room); returns its length. */
size_t bpe_byte_encoding(unsigned b, char *out);
/* The slot of the merge (from, to): its own, or the empty one where it
 * would go (rank -1). */
/* Where the probe for (from, to) starts, before masking. */
uint32_t bpe_merge_hash(int from, int to);
TokenizerMergeSlot *bpe_merge_slot(const Tokenizer *t, int from, int to);

/* Makes the end-of-turn and fill-in-the-middle markers control tokens, as
 * llama.cpp's vocabulary loader does (tokenizer_token_types.c); needs the
 * text-to-id table. */
void tokenizer_correct_token_types(Tokenizer *t);

/* GGUF dispatch targets (tokenizer_gguf.c, tokenizer_gguf_encode.c). */
int gguf_tokenizer_encode(const Tokenizer *t, const char *text, size_t text_len, unsigned flags, int *tokens,
                          size_t max_tokens, char *err, size_t err_size);
int gguf_tokenizer_encode_spans(const Tokenizer *t, const char *text, size_t text_len, unsigned flags,
                                const TokenizerSpans *plain, int *tokens, size_t max_tokens, char *err,
                                size_t err_size);
const char *gguf_tokenizer_decode(const Tokenizer *t, int prev_token, int token, size_t *len);
void gguf_tokenizer_destroy(Tokenizer *t);

#endif
