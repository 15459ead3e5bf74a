/* gen_gguf_vocab.h - the metadata side of gen_gguf: a growing buffer of
 * GGUF key/value pairs, and the two vocabularies it writes: Llama 2's
 * SentencePiece one read from a llama2.c tokenizer.bin, and a synthetic
 * byte-level BPE one of any size laid out as Llama 3's (256 byte tokens,
 * merged tokens with their merges, then 256 special tokens at the end, so a
 * 128256-token vocabulary has <|begin_of_text|> at 128000). Header only:
 * every tools/NAME.c is a program of its own (gen_gguf, gguf_convert), and
 * its functions are inline so a program may use some of them. */
#ifndef TOOLS_GEN_GGUF_VOCAB_H
#define TOOLS_GEN_GGUF_VOCAB_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/format/gguf.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/tokenizer/tokenizer_internal.h"

typedef struct {
    uint8_t *data;
    size_t len, cap;
    uint64_t n_kv;
} MetaBuf;

static inline void meta_put(MetaBuf *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2 + 4096;
        b->data = realloc(b->data, b->cap);
        if (!b->data) {
            fprintf(stderr, "gen_gguf: out of memory\n");
            exit(1);
        }
    }
    memcpy(b->data + b->len, p, n);
    b->len += n;
}
static inline void meta_u32(MetaBuf *b, uint32_t v) {
    meta_put(b, &v, 4);
}
static inline void meta_u64(MetaBuf *b, uint64_t v) {
    meta_put(b, &v, 8);
}
static inline void meta_str(MetaBuf *b, const char *s, size_t n) {
    meta_u64(b, n);
    meta_put(b, s, n);
}
static inline void meta_key(MetaBuf *b, const char *key, uint32_t type) {
    meta_str(b, key, strlen(key));
    meta_u32(b, type);
    b->n_kv++;
}
static inline void kv_string(MetaBuf *b, const char *key, const char *v) {
    meta_key(b, key, GGUF_TYPE_STRING);
    meta_str(b, v, strlen(v));
}
static inline void kv_uint32(MetaBuf *b, const char *key, uint32_t v) {
    meta_key(b, key, GGUF_TYPE_UINT32);
    meta_u32(b, v);
}
static inline void kv_uint16(MetaBuf *b, const char *key, uint16_t v) {
    meta_key(b, key, GGUF_TYPE_UINT16);
    meta_put(b, &v, 2);
}
static inline void kv_int32(MetaBuf *b, const char *key, int32_t v) {
    meta_key(b, key, GGUF_TYPE_INT32);
    meta_put(b, &v, 4);
}
static inline void kv_float32(MetaBuf *b, const char *key, float v) {
    meta_key(b, key, GGUF_TYPE_FLOAT32);
    meta_put(b, &v, 4);
}
static inline void kv_bool(MetaBuf *b, const char *key, int v) {
    uint8_t byte = v != 0;
    meta_key(b, key, GGUF_TYPE_BOOL);
    meta_put(b, &byte, 1);
}
/* An array's header; the caller appends count elements of elem_type. */
static inline void kv_array(MetaBuf *b, const char *key, uint32_t elem_type, uint64_t count) {
    meta_key(b, key, GGUF_TYPE_ARRAY);
    meta_u32(b, elem_type);
    meta_u64(b, count);
}

/* An array whose count elements of elem_type are the bytes of elems. */
static inline void kv_array_of(MetaBuf *b, const char *key, uint32_t elem_type, uint64_t count,
                               const MetaBuf *elems) {
    kv_array(b, key, elem_type, count);
    meta_put(b, elems->data, elems->len);
}

/* Llama 2's vocabulary from a llama2.c tokenizer.bin (max_token_length,
 * then per token: f32 score, i32 length, bytes). Returns the token count,
 * or 0 when the file cannot be read. */
static inline int vocab_llama2(MetaBuf *b, const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int32_t max_len;
    MetaBuf tokens = {0}, scores = {0}, types = {0};
    int n = 0;
    if (fread(&max_len, 4, 1, f) == 1) {
        float score;
        int32_t len;
        char piece[1024];
        while (fread(&score, 4, 1, f) == 1 && fread(&len, 4, 1, f) == 1 && len >= 0 &&
               len < (int32_t)sizeof piece && fread(piece, 1, (size_t)len, f) == (size_t)len) {
            /* llama2.c's export wrote SentencePiece's word marker U+2581 as ' ',
             * and BOS and EOS as "\n<s>\n" and "\n</s>\n" */
            char marked[3 * sizeof piece];
            size_t marked_len = 0;
            if (n == 1 || n == 2) len = snprintf(piece, sizeof piece, n == 1 ? "<s>" : "</s>");
            for (int32_t i = 0; i < len; i++)
                if (piece[i] == ' ')
                    memcpy(marked + marked_len, "\xe2\x96\x81", 3), marked_len += 3;
                else
                    marked[marked_len++] = piece[i];
            meta_str(&tokens, marked, marked_len);
            meta_put(&scores, &score, 4);
            unsigned byte;
            int32_t type = n == 0                                             ? TOKEN_TYPE_UNKNOWN
                           : n <= 2                                           ? TOKEN_TYPE_CONTROL
                           : len == 6 && sscanf(piece, "<0x%2X>", &byte) == 1 ? TOKEN_TYPE_BYTE
                                                                              : TOKEN_TYPE_NORMAL;
            meta_put(&types, &type, 4);
            n++;
        }
    }
    fclose(f);
    if (n >= 3) {
        kv_string(b, "tokenizer.ggml.model", "llama");
        kv_array_of(b, "tokenizer.ggml.tokens", GGUF_TYPE_STRING, (uint64_t)n, &tokens);
        kv_array_of(b, "tokenizer.ggml.scores", GGUF_TYPE_FLOAT32, (uint64_t)n, &scores);
        kv_array_of(b, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, (uint64_t)n, &types);
        kv_uint32(b, "tokenizer.ggml.unknown_token_id", 0);
        kv_uint32(b, "tokenizer.ggml.bos_token_id", 1);
        kv_uint32(b, "tokenizer.ggml.eos_token_id", 2);
        kv_bool(b, "tokenizer.ggml.add_bos_token", 1);
    }
    free(tokens.data), free(scores.data), free(types.data);
    return n >= 3 ? n : 0;
}

/* The special tokens of Llama 3, at their offsets from the first special. */
static const char *const LLAMA3_SPECIALS[] = {
    "<|begin_of_text|>",
    "<|end_of_text|>",
    NULL,
    NULL,
    "<|finetune_right_pad_id|>",
    NULL,
    "<|start_header_id|>",
    "<|end_header_id|>",
    "<|eom_id|>",
    "<|eot_id|>",
    "<|python_tag|>",
};
#define BPE_SPECIALS 256

/* A synthetic byte-level BPE vocabulary of n tokens (n >= 512 + 256): the
 * 256 byte tokens, then tokens of two and three characters built from
 * space ('G' with a dot: U+0120) and printable ASCII, each with its merge,
 * then 256 Llama 3 special tokens. */
static inline void vocab_bpe(MetaBuf *b, int n) {
    static const char order[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                ".,!?'\"-:;()[]{}<>/\\|@#$%^&*_+=~`";
    char base[96][4]; /* the characters merged tokens are made of, byte-encoded */
    base[0][bpe_byte_encoding(' ', base[0])] = '\0';
    int n_base = 1;
    for (const char *c = order; *c; c++, n_base++)
        base[n_base][bpe_byte_encoding((unsigned char)*c, base[n_base])] = '\0';
    int n_merged = n - 256 - BPE_SPECIALS;
    MetaBuf tokens = {0}, merges = {0}, types = {0};
    char piece[32], merge[40];
    for (int byte = 0; byte < 256; byte++) meta_str(&tokens, piece, bpe_byte_encoding((unsigned)byte, piece));
    /* two characters: all pairs; three: a pair then a character, in order */
    for (int k = 0; k < n_merged; k++) {
        int pairs = n_base * n_base;
        const char *left, *right;
        char pair[16];
        if (k < pairs) {
            left = base[k / n_base], right = base[k % n_base];
        } else {
            int p = (k - pairs) / n_base;
            snprintf(pair, sizeof pair, "%s%s", base[p / n_base], base[p % n_base]);
            left = pair, right = base[(k - pairs) % n_base];
        }
        int len = snprintf(piece, sizeof piece, "%s%s", left, right);
        meta_str(&tokens, piece, (size_t)len);
        len = snprintf(merge, sizeof merge, "%s %s", left, right);
        meta_str(&merges, merge, (size_t)len);
    }
    int first_special = n - BPE_SPECIALS, reserved = 0;
    for (int k = 0; k < BPE_SPECIALS; k++) {
        const char *name =
            k < (int)(sizeof LLAMA3_SPECIALS / sizeof *LLAMA3_SPECIALS) ? LLAMA3_SPECIALS[k] : NULL;
        int len = name ? snprintf(piece, sizeof piece, "%s", name)
                       : snprintf(piece, sizeof piece, "<|reserved_special_token_%d|>", reserved++);
        meta_str(&tokens, piece, (size_t)len);
    }
    for (int id = 0; id < n; id++) {
        int32_t type = id >= first_special ? TOKEN_TYPE_CONTROL : TOKEN_TYPE_NORMAL;
        meta_put(&types, &type, 4);
    }
    kv_string(b, "tokenizer.ggml.model", "gpt2");
    kv_string(b, "tokenizer.ggml.pre", "llama-bpe");
    kv_array_of(b, "tokenizer.ggml.tokens", GGUF_TYPE_STRING, (uint64_t)n, &tokens);
    kv_array_of(b, "tokenizer.ggml.token_type", GGUF_TYPE_INT32, (uint64_t)n, &types);
    kv_array_of(b, "tokenizer.ggml.merges", GGUF_TYPE_STRING, (uint64_t)n_merged, &merges);
    kv_uint32(b, "tokenizer.ggml.bos_token_id", (uint32_t)first_special);
    kv_uint32(b, "tokenizer.ggml.eos_token_id", (uint32_t)first_special + 1);
    kv_bool(b, "tokenizer.ggml.add_bos_token", 1);
    free(tokens.data), free(merges.data), free(types.data);
}

#endif
