/* tokenizer.h - llama2.c's byte-fallback BPE tokenizer (tokenizer.bin format).
 *
 * File format: int32 max_token_length, then vocab_size entries of
 * {float32 score, int32 length, length bytes}. Pieces are treated as C
 * strings, like llama2.c does. Encoding reproduces llama2.c's encode()
 * exactly (dummy-prefix space, code-point lookup with <0xNN> byte fallback,
 * then merging the best-scoring adjacent pair, first occurrence on ties);
 * decoding reproduces decode() + safe_printf().
 *
 * The same Tokenizer also holds a GGUF vocabulary (tokenizer_create_gguf):
 * SentencePiece ("llama") or byte-level BPE ("gpt2"), encoded exactly as
 * llama.cpp does. tokenizer_encode/tokenizer_decode dispatch on `kind`. */
#ifndef LLM_TOKENIZER_H
#define LLM_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

#define TOKEN_BOS 1
#define TOKEN_EOS 2

typedef enum {
    TOKENIZER_LLAMA2C = 0, /* tokenizer.bin */
    TOKENIZER_SPM,         /* GGUF tokenizer.ggml.model = "llama" */
    TOKENIZER_BPE,         /* GGUF tokenizer.ggml.model = "gpt2" (byte-level) */
} TokenizerKind;

/* GGUF tokenizer.ggml.token_type values. */
enum {
    TOKEN_TYPE_UNDEFINED = 0,
    TOKEN_TYPE_NORMAL = 1,
    TOKEN_TYPE_UNKNOWN = 2,
    TOKEN_TYPE_CONTROL = 3,
    TOKEN_TYPE_USER_DEFINED = 4,
    TOKEN_TYPE_UNUSED = 5,
    TOKEN_TYPE_BYTE = 6,
};

/* Flags of tokenizer_encode_ex. */
#define TOKENIZE_ADD_BOS 1u       /* prepend bos_id (when the vocabulary has one) */
#define TOKENIZE_ADD_EOS 2u       /* append eos_id */
#define TOKENIZE_PARSE_SPECIAL 4u /* match control-token text ("<|im_start|>") in the text */

typedef struct {
    int from, to; /* rank = index in tokenizer.ggml.merges */
    int result;
} TokenizerMerge;

/* A slot of the piece hash: the token and its full hash, so probing past
 * other pieces compares integers rather than strings. */
typedef struct {
    int32_t id; /* -1: empty */
    uint32_t hash;
} TokenizerSlot;

/* A slot of the merge hash: the pair itself, so a probe reads one place. */
typedef struct {
    int32_t from, to, rank; /* rank -1: empty */
} TokenizerMergeSlot;

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
    TokenizerSlot *hash_slots; /* open addressing on the piece bytes */
    uint32_t hash_mask;
    unsigned char byte_chars[256]; /* storage that byte pieces decode to */
    void *arena;                   /* the single allocation everything lives in */

    /* GGUF vocabularies (kind != TOKENIZER_LLAMA2C); for tokenizer.bin the
     * ids are TOKEN_BOS/TOKEN_EOS and the rest stays zero/NULL. */
    TokenizerKind kind;
    int bos_id, eos_id, unk_id, pad_id; /* -1 when the vocabulary has none */
    int add_bos, add_eos;               /* tokenizer.ggml.add_bos_token / add_eos_token */
    int add_space_prefix;               /* SentencePiece dummy prefix */
    int pretokenizer;                   /* PretokenizerKind (BPE) */
    int ignore_merges;                  /* BPE: a whole word that is a token skips the merges */
    char warning[160];                  /* one line the caller may print after loading, "" if none */
    uint8_t *token_types;               /* TOKEN_TYPE_* per token */
    const char **decoded;               /* the bytes each token prints as */
    int *decoded_lengths;
    int byte_tokens[256];   /* SPM: <0xNN>; BPE: the byte's own token; -1 if none */
    TokenizerMerge *merges; /* BPE: in rank order */
    int merge_count;
    TokenizerMergeSlot *merge_slots; /* open addressing on (from, to) */
    uint32_t merge_mask;
    int *special_ids; /* control/user-defined/unknown tokens, longest text first */
    int special_count;
    const char *pre_name;      /* tokenizer.ggml.pre ("" when absent) */
    const char *chat_template; /* tokenizer.chat_template, NULL when absent */
} Tokenizer;

/* Parses a tokenizer held in memory (strings are copied, the buffer may be
 * freed afterwards). vocab_size comes from the model; <= 0 means "every entry
 * in the buffer". Returns 0, or -1 with a one-line reason in err. */
int tokenizer_create(Tokenizer *t, const void *data, size_t size, int vocab_size, char *err, size_t err_size);
void tokenizer_destroy(Tokenizer *t);

/* Loads the tokenizer of a GGUF file held in memory (everything is copied;
 * the buffer may be freed afterwards). Returns 0, or -1 with a one-line
 * reason in err. */
int tokenizer_create_gguf(Tokenizer *t, const void *gguf_data, size_t size, char *err, size_t err_size);

/* Encodes text_len bytes of text (NULs included) with TOKENIZE_* flags;
 * same return convention as tokenizer_encode. For tokenizer.bin, ADD_BOS and
 * ADD_EOS map to tokenizer_encode's bos/eos and PARSE_SPECIAL is ignored. */
int tokenizer_encode_ex(const Tokenizer *t, const char *text, size_t text_len, unsigned flags, int *tokens,
                        size_t max_tokens, char *err, size_t err_size);

/* Byte ranges [start, end) of a text where control-token text is never
 * parsed: message content inside a rendered chat template. */
typedef struct {
    size_t start, end;
} TokenizerSpan;
typedef struct {
    const TokenizerSpan *spans;
    int count;
} TokenizerSpans;

/* tokenizer_encode_ex with TOKENIZE_PARSE_SPECIAL everywhere but the plain
 * spans: the whole text is one input (llama.cpp's fragments, SentencePiece's
 * space prefix), yet a control token overlapping a plain span stays text.
 * tokenizer.bin vocabularies ignore the spans (they parse no special text). */
int tokenizer_encode_spans(const Tokenizer *t, const char *text, size_t text_len, unsigned flags,
                           const TokenizerSpans *plain, int *tokens, size_t max_tokens, char *err,
                           size_t err_size);

/* For llmrun --tokenize: encodes text (no BOS/EOS, special text not parsed,
 * like llama-tokenize --ids --no-bos --no-parse-special) and writes the ids as
 * " ID ID ..." -- each id preceded by a space, the layout of llama.cpp's
 * .out test files -- followed by a newline, into out. Returns the number of
 * ids, or -1 with a reason in err (also when out is too small). */
int tokenizer_format_ids(const Tokenizer *t, const char *text, size_t text_len, char *out, size_t out_size,
                         char *err, size_t err_size);

/* Room `tokens` needs for tokenizer_encode of a text of text_len bytes. */
static inline size_t tokenizer_max_tokens(size_t text_len) {
    return text_len + 3;
}

/* llama2.c encode(text, bos, eos): writes the ids to tokens (capacity
 * max_tokens) and returns how many, or -1 with a reason in err. For a GGUF
 * vocabulary: bos adds the specials the vocabulary asks for (BOS when
 * add_bos_token, EOS when add_eos_token, like llama.cpp's add_special), eos
 * always appends EOS; special-token text is not parsed. */
int tokenizer_encode(const Tokenizer *t, const char *text, int bos, int eos, int *tokens, size_t max_tokens,
                     char *err, size_t err_size);

/* The bytes run.c would print for `token` following `prev_token` (leading
 * space stripped after BOS, <0xNN> as the raw byte, unprintable single bytes
 * dropped). Never NULL; *len may be 0. Does no allocation or parsing.
 * GGUF vocabularies: U+2581 -> space, byte tokens -> their byte, byte-level
 * BPE pieces -> their bytes, control tokens -> nothing; SentencePiece strips
 * the dummy-prefix space after bos_id. */
const char *tokenizer_decode(const Tokenizer *t, int prev_token, int token, size_t *len);

/* Token id of exactly these bytes, or -1. */
int tokenizer_lookup(const Tokenizer *t, const char *piece, size_t len);
/* The raw vocabulary piece of a token ("" when out of range). */
const char *tokenizer_piece(const Tokenizer *t, int token);

#endif
