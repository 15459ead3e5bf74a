/* tokenizer.c - llama2.c's BPE tokenizer: loading, encoding, decoding. */
#include "llm/tokenizer/tokenizer.h"
#include "llm/tokenizer/merge_heap.h"
#include "llm/tokenizer/tokenizer_internal.h"

#include "lib/ctype.h"
#include "lib/format.h"
#include "lib/arena.h"
#include "lib/stdlib.h"
#include "lib/string.h"

/* llama2.c starts its best-merge search at this score, so pairs scoring at or
 * below it are never merged. */
#define MERGE_SCORE_FLOOR (-1e10f)

static void tokenizer_set_error(char *err, size_t err_size, const char *message) {
    if (err && err_size) strlcpy(err, message, err_size);
}
#define set_error tokenizer_set_error

static uint32_t read_u32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* FNV-1a over two byte ranges, so a pair can be looked up without joining it. */
uint32_t tokenizer_hash_bytes(uint32_t h, const char *s, size_t len) {
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}
#define hash_bytes tokenizer_hash_bytes
#define HASH_SEED TOKENIZER_HASH_SEED

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* llama2.c decodes with sscanf(piece, "<0x%02hhX>"): "<0x" and one or two hex digits. */
static int parse_byte_piece(const char *piece) {
    if (piece[0] != '<' || piece[1] != '0' || piece[2] != 'x') return -1;
    int high = hex_digit(piece[3]);
    if (high < 0) return -1;
    int low = hex_digit(piece[4]);
    return low < 0 ? high : high * 16 + low;
}

int tokenizer_lookup_pair(const Tokenizer *t, const char *a, size_t alen, const char *b, size_t blen) {
    return tokenizer_lookup_hashed(t, hash_bytes(hash_bytes(HASH_SEED, a, alen), b, blen), a, alen, b, blen);
}

int tokenizer_lookup_hashed(const Tokenizer *t, uint32_t hash, const char *a, size_t alen, const char *b,
                            size_t blen) {
    if (!t->hash_slots) return -1;
    for (uint32_t slot = hash & t->hash_mask;; slot = (slot + 1) & t->hash_mask) {
        int id = t->hash_slots[slot].id;
        if (id < 0) return -1;
        if (t->hash_slots[slot].hash == hash && (size_t)t->piece_lengths[id] == alen + blen &&
            memcmp(t->pieces[id], a, alen) == 0 && memcmp(t->pieces[id] + alen, b, blen) == 0)
            return id;
    }
}

#define lookup_pair tokenizer_lookup_pair

int tokenizer_lookup(const Tokenizer *t, const char *piece, size_t len) {
    return lookup_pair(t, piece, len, "", 0);
}

const char *tokenizer_piece(const Tokenizer *t, int token) {
    if (token < 0 || token >= t->vocab_size) return "";
    return t->pieces[token];
}

/* Walks the entries once: counts them (when vocab_size <= 0) and checks every
 * length against the buffer. Returns the entry count or -1. */
static int scan_entries(const unsigned char *data, size_t size, int vocab_size, size_t *string_bytes,
                        char *err, size_t err_size) {
    size_t offset = 4;
    int count = 0;
    *string_bytes = 0;
    while (vocab_size <= 0 ? offset < size : count < vocab_size) {
        if (size - offset < 8) {
            char msg[128];
            if (vocab_size > 0)
                snprintf(msg, sizeof msg,
                         "tokenizer: truncated at entry %d of %d (the model needs %d tokens)", count,
                         vocab_size, vocab_size);
            else
                snprintf(msg, sizeof msg, "tokenizer: truncated entry %d", count);
            set_error(err, err_size, msg);
            return -1;
        }
        int32_t len = (int32_t)read_u32(data + offset + 4);
        if (len < 0 || (size_t)len > size - offset - 8) {
            char msg[128];
            snprintf(msg, sizeof msg, "tokenizer: entry %d has length %d, past the end of the file", count,
                     (int)len);
            set_error(err, err_size, msg);
            return -1;
        }
        offset += 8 + (size_t)len;
        *string_bytes += (size_t)len + 1;
        count++;
        if (count > (1 << 24)) {
            set_error(err, err_size, "tokenizer: more than 16M entries, not a tokenizer file");
            return -1;
        }
    }
    return count;
}

int tokenizer_create(Tokenizer *t, const void *data, size_t size, int vocab_size, char *err,
                     size_t err_size) {
    const unsigned char *bytes = data;
    memset(t, 0, sizeof *t);
    if (!data || size < 4) {
        set_error(err, err_size, "tokenizer: file is too small");
        return -1;
    }
    int32_t max_token_length = (int32_t)read_u32(bytes);
    if (max_token_length < 0) {
        set_error(err, err_size, "tokenizer: negative max_token_length, not a tokenizer file");
        return -1;
    }
    size_t string_bytes;
    int count = scan_entries(bytes, size, vocab_size, &string_bytes, err, err_size);
    if (count < 0) return -1;
    if (count == 0) {
        set_error(err, err_size, "tokenizer: no tokens");
        return -1;
    }

    uint32_t slots = 1;
    while (slots < (uint32_t)count * 2) slots <<= 1;

    /* One allocation: a first pass measures it, the second carves it. */
    size_t n = (size_t)count;
    Arena arena = {0};
    char *strings = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass &&
            (arena.overflow || arena.used > SIZE_MAX / 2 || !(arena.base = malloc((size_t)arena.used)))) {
            set_error(err, err_size, "tokenizer: out of memory");
            return -1;
        }
        arena.used = 0;
        t->pieces = arena_take(&arena, n, sizeof(char *), _Alignof(char *));
        t->piece_lengths = arena_take(&arena, n, sizeof(int), _Alignof(int));
        t->scores = arena_take(&arena, n, sizeof(float), _Alignof(float));
        t->hash_slots = arena_take(&arena, slots, sizeof(TokenizerSlot), _Alignof(TokenizerSlot));
        t->byte_values = arena_take(&arena, 2 * n, sizeof(int16_t), _Alignof(int16_t));
        strings = arena_take(&arena, string_bytes, 1, 1);
    }
    t->arena = arena.base;
    t->vocab_size = count;
    t->max_token_length = max_token_length;
    t->hash_mask = slots - 1;
    t->kind = TOKENIZER_LLAMA2C;
    t->bos_id = TOKEN_BOS;
    t->eos_id = TOKEN_EOS;
    t->unk_id = 0;
    t->pad_id = -1;
    memset(t->hash_slots, 0xff, slots * sizeof(TokenizerSlot));
    for (int b = 0; b < 256; b++) t->byte_chars[b] = (unsigned char)b;

    size_t offset = 4;
    for (int id = 0; id < count; id++) {
        memcpy(&t->scores[id], bytes + offset, sizeof(float));
        size_t len = read_u32(bytes + offset + 4);
        memcpy(strings, bytes + offset + 8, len);
        strings[len] = '\0';
        offset += 8 + len;
        t->pieces[id] = strings;
        /* Like llama2.c, a piece ends at its first NUL. */
        t->piece_lengths[id] = (int)strlen(strings);
        if (t->piece_lengths[id] > t->longest_piece) t->longest_piece = t->piece_lengths[id];
        t->byte_values[id] = (int16_t)parse_byte_piece(strings);
        t->byte_values[count + id] = (int16_t)(strings[0] == ' ' ? parse_byte_piece(strings + 1) : -1);
        strings += len + 1;

        /* Inserted in id order, so a duplicate piece resolves to its lowest id. */
        uint32_t hash = hash_bytes(HASH_SEED, t->pieces[id], (size_t)t->piece_lengths[id]);
        uint32_t slot = hash & t->hash_mask;
        while (t->hash_slots[slot].id >= 0) slot = (slot + 1) & t->hash_mask;
        t->hash_slots[slot] = (TokenizerSlot){id, hash};
    }
    t->bytes_read = offset;
    return 0;
}

void tokenizer_destroy(Tokenizer *t) {
    if (t->kind != TOKENIZER_LLAMA2C) gguf_tokenizer_destroy(t);
    free(t->arena);
    memset(t, 0, sizeof *t);
}

const char *tokenizer_decode(const Tokenizer *t, int prev_token, int token, size_t *len) {
    if (t->kind != TOKENIZER_LLAMA2C) return gguf_tokenizer_decode(t, prev_token, token, len);
    *len = 0;
    if (token < 0 || token >= t->vocab_size) return "";
    const char *piece = t->pieces[token];
    size_t piece_len = (size_t)t->piece_lengths[token];
    int byte = t->byte_values[token];
    /* After BOS, SentencePiece drops the leading space of the piece. */
    if (prev_token == TOKEN_BOS && piece[0] == ' ') {
        piece++;
        piece_len--;
        byte = t->byte_values[t->vocab_size + token];
    }
    if (byte >= 0) {
        piece = (const char *)&t->byte_chars[byte];
        piece_len = byte == 0 ? 0 : 1; /* llama2.c's byte piece for 0x00 is an empty string */
    }
    /* safe_printf: a lone byte that is neither printable nor whitespace is skipped. */
    if (piece_len == 1 && !(isprint((unsigned char)piece[0]) || isspace((unsigned char)piece[0]))) return "";
    *len = piece_len;
    return piece;
}

/* ------------------------------------------------------------ encoding */

static void push_pair(const Tokenizer *t, MergeHeap *heap, const int *tokens, int left, int right) {
    int a = tokens[left], b = tokens[right];
    int merged =
        lookup_pair(t, t->pieces[a], (size_t)t->piece_lengths[a], t->pieces[b], (size_t)t->piece_lengths[b]);
    if (merged < 0 || !(t->scores[merged] > MERGE_SCORE_FLOOR)) return;
    MergeCandidate c = {t->scores[merged], left, right, a, b, merged};
    merge_heap_push(heap, c);
}

/* Repeatedly merges the best adjacent pair (a heap of candidates over a
 * linked list of symbols: O(n log n) instead of llama2.c's O(n^2), same
 * result). Returns the new count or -1 when out of memory. */
static int merge_pairs(const Tokenizer *t, int *tokens, int count) {
    if (count < 2) return count;
    size_t n = (size_t)count;
    /* n-1 initial pairs, and each merge adds at most two. */
    size_t heap_capacity = 3 * n;
    void *block = malloc(2 * n * sizeof(int) + heap_capacity * sizeof(MergeCandidate));
    if (!block) return -1;
    MergeHeap heap = {(MergeCandidate *)block, 0};
    int *next = (int *)(heap.items + heap_capacity);
    int *prev = next + n;
    for (int i = 0; i < count; i++) {
        next[i] = i + 1 < count ? i + 1 : -1;
        prev[i] = i - 1;
    }
    for (int i = 0; i + 1 < count; i++) push_pair(t, &heap, tokens, i, i + 1);

    while (heap.count) {
        MergeCandidate c = merge_heap_pop(&heap);
        if (tokens[c.left] != c.left_tag || next[c.left] != c.right || tokens[c.right] != c.right_tag)
            continue;
        tokens[c.left] = c.result;
        tokens[c.right] = -1; /* dead */
        next[c.left] = next[c.right];
        if (next[c.left] >= 0) prev[next[c.left]] = c.left;
        if (prev[c.left] >= 0) push_pair(t, &heap, tokens, prev[c.left], c.left);
        if (next[c.left] >= 0) push_pair(t, &heap, tokens, c.left, next[c.left]);
    }

    int out = 0;
    for (int i = 0; i >= 0; i = next[i]) tokens[out++] = tokens[i];
    free(block);
    return out;
}

int tokenizer_encode(const Tokenizer *t, const char *text, int bos, int eos, int *tokens, size_t max_tokens,
                     char *err, size_t err_size) {
    if (!text) {
        set_error(err, err_size, "tokenizer: cannot encode a NULL text");
        return -1;
    }
    size_t text_len = strlen(text);
    if (t->kind != TOKENIZER_LLAMA2C) {
        unsigned flags =
            (bos && t->add_bos ? TOKENIZE_ADD_BOS : 0) | (eos || (bos && t->add_eos) ? TOKENIZE_ADD_EOS : 0);
        return gguf_tokenizer_encode(t, text, text_len, flags, tokens, max_tokens, err, err_size);
    }
    if (max_tokens < tokenizer_max_tokens(text_len)) {
        set_error(err, err_size, "tokenizer: token buffer too small");
        return -1;
    }
    if (t->vocab_size < 256 + 3) {
        /* Byte fallback needs ids 3..258. */
        set_error(err, err_size, "tokenizer: vocabulary too small for byte fallback (needs 259 tokens)");
        return -1;
    }
    if (text_len > 0x3fffffff) {
        set_error(err, err_size, "tokenizer: text too long");
        return -1;
    }

    int count = 0;
    if (bos) tokens[count++] = TOKEN_BOS;
    /* The dummy prefix: SentencePiece's add_dummy_prefix. */
    if (text_len > 0) {
        int space = tokenizer_lookup(t, " ", 1);
        tokens[count++] = space >= 0 ? space : ' ' + 3;
    }

    /* One UTF-8 code point at a time: a byte plus its continuation bytes, at
     * most 4 bytes (llama2.c's rule, also for malformed input). */
    size_t i = 0;
    while (i < text_len) {
        size_t start = i++;
        while (i < text_len && ((unsigned char)text[i] & 0xC0) == 0x80 && i - start < 4) i++;
        int id = tokenizer_lookup(t, text + start, i - start);
        if (id >= 0) {
            tokens[count++] = id;
        } else {
            /* Byte fallback: <0x00>..<0xFF> follow <unk>, <s>, </s>. */
            for (size_t b = start; b < i; b++) tokens[count++] = (unsigned char)text[b] + 3;
        }
    }

    count = merge_pairs(t, tokens, count);
    if (count < 0) {
        set_error(err, err_size, "tokenizer: out of memory");
        return -1;
    }
    if (eos) tokens[count++] = TOKEN_EOS;
    return count;
}

int tokenizer_encode_spans(const Tokenizer *t, const char *text, size_t text_len, unsigned flags,
                           const TokenizerSpans *plain, int *tokens, size_t max_tokens, char *err,
                           size_t err_size) {
    if (text && t->kind != TOKENIZER_LLAMA2C)
        return gguf_tokenizer_encode_spans(t, text, text_len, flags | TOKENIZE_PARSE_SPECIAL, plain, tokens,
                                           max_tokens, err, err_size);
    return tokenizer_encode_ex(t, text, text_len, flags, tokens, max_tokens, err, err_size);
}

int tokenizer_encode_ex(const Tokenizer *t, const char *text, size_t text_len, unsigned flags, int *tokens,
                        size_t max_tokens, char *err, size_t err_size) {
    if (!text) {
        set_error(err, err_size, "tokenizer: cannot encode a NULL text");
        return -1;
    }
    if (t->kind != TOKENIZER_LLAMA2C)
        return gguf_tokenizer_encode(t, text, text_len, flags, tokens, max_tokens, err, err_size);
    if (memchr(text, 0, text_len)) {
        set_error(err, err_size, "tokenizer: tokenizer.bin vocabularies cannot encode NUL bytes");
        return -1;
    }
    /* llama2.c's encoder reads a C string; text_len bytes end at a NUL or need a copy. */
    char *copy = malloc(text_len + 1);
    if (!copy) {
        set_error(err, err_size, "tokenizer: out of memory");
        return -1;
    }
    memcpy(copy, text, text_len);
    copy[text_len] = '\0';
    int n = tokenizer_encode(t, copy, (flags & TOKENIZE_ADD_BOS) != 0, (flags & TOKENIZE_ADD_EOS) != 0,
                             tokens, max_tokens, err, err_size);
    free(copy);
    return n;
}
