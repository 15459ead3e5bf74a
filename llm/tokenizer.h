/* tokenizer.h - llama2.c's byte-fallback BPE tokenizer (tokenizer.bin format).
 *
 * File format: int32 max_token_length, then vocab_size entries of
 * {float32 score, int32 length, length bytes}. Pieces are treated as C
 * strings, like llama2.c does. Encoding reproduces llama2.c's encode()
 * exactly (dummy-prefix space, code-point lookup with <0xNN> byte fallback,
 * then merging the best-scoring adjacent pair, first occurrence on ties);
 * decoding reproduces decode() + safe_printf(). */
#ifndef LLM_TOKENIZER_H
#define LLM_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#define TOKEN_BOS 1
#define TOKEN_EOS 2

typedef struct {
    int vocab_size;
    int max_token_length; /* from the file header */
    int longest_piece;    /* longest piece actually present */
    size_t bytes_read;    /* of the file; less than its size when it holds more tokens than asked for */
    const char **pieces;  /* NUL-terminated copies */
    int *piece_lengths;
    float *scores;
    /* Raw byte a piece stands for (<0xNN>), -1 if none; the second half is
     * for the piece with its leading space stripped (the after-BOS case). */
    int16_t *byte_values;
    int32_t *hash_slots; /* open addressing, token id or -1 */
    uint32_t hash_mask;
    unsigned char byte_chars[256]; /* storage that byte pieces decode to */
    void *arena;                   /* the single allocation everything lives in */
} Tokenizer;

/* Parses a tokenizer held in memory (strings are copied, the buffer may be
 * freed afterwards). vocab_size comes from the model; <= 0 means "every entry
 * in the buffer". Returns 0, or -1 with a one-line reason in err. */
int tokenizer_load(Tokenizer *t, const void *data, size_t size, int vocab_size, char *err, size_t err_size);
void tokenizer_free(Tokenizer *t);

/* Room `tokens` needs for tokenizer_encode of a text of text_len bytes. */
static inline size_t tokenizer_max_tokens(size_t text_len) {
    return text_len + 3;
}

/* llama2.c encode(text, bos, eos): writes the ids to tokens (capacity
 * max_tokens) and returns how many, or -1 with a reason in err. */
int tokenizer_encode(const Tokenizer *t, const char *text, int bos, int eos, int *tokens, size_t max_tokens,
                     char *err, size_t err_size);

/* The bytes run.c would print for `token` following `prev_token` (leading
 * space stripped after BOS, <0xNN> as the raw byte, unprintable single bytes
 * dropped). Never NULL; *len may be 0. Does no allocation or parsing. */
const char *tokenizer_decode(const Tokenizer *t, int prev_token, int token, size_t *len);

/* Token id of exactly these bytes, or -1. */
int tokenizer_lookup(const Tokenizer *t, const char *piece, size_t len);
/* The raw vocabulary piece of a token ("" when out of range). */
const char *tokenizer_piece(const Tokenizer *t, int token);

#endif
