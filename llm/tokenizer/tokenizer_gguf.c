/* tokenizer_gguf.c - GGUF vocabularies: loading the tokenizer.* metadata
 * (pieces, types, merges, special tokens) and decoding ids to text, with
 * llama.cpp's semantics. Encoding is tokenizer_gguf_encode.c. */
#include <stdarg.h>

#include "lib/format.h"
#include "lib/arena.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/format/gguf.h"
#include "llm/tokenizer/pretokenize.h"
#include "llm/tokenizer/tokenizer_internal.h"
#include "llm/tokenizer/unicode.h"

#define MAX_VOCAB (1 << 24)
#define MAX_PIECE_BYTES 65536

int tokenizer_fail(char *err, size_t err_size, const char *fmt, ...) {
    if (err && err_size) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, err_size, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Optional id key: absent keeps the default; -1 (stored as u32 0xFFFFFFFF
 * by llama.cpp's converters) means "no such token"; otherwise it must name a token. */
static int read_id(const GgufFile *f, const char *key, int vocab, int *id, char *err, size_t err_size) {
    if (!gguf_find_key(f, key)) return 0;
    int64_t v;
    if (gguf_kv_i64(gguf_find_key(f, key), &v) != 0)
        return tokenizer_fail(err, err_size, "tokenizer: %s is not an integer", key);
    if (v == -1 || v == 0xFFFFFFFFLL) {
        *id = -1;
        return 0;
    }
    if (v < 0 || v >= vocab)
        return tokenizer_fail(err, err_size, "tokenizer: %s = %lld is outside the vocabulary (%d tokens)",
                              key, (long long)v, vocab);
    *id = (int)v;
    return 0;
}

static int read_flag(const GgufFile *f, const char *key, int *flag, char *err, size_t err_size) {
    if (!gguf_find_key(f, key)) return 0;
    if (gguf_get_bool(f, key, flag) != 0)
        return tokenizer_fail(err, err_size, "tokenizer: %s is not a bool", key);
    return 0;
}

/* A per-token array must exist with the vocabulary's length (or be absent when optional). */
static int token_array(const GgufFile *f, const char *key, uint64_t vocab, GgufArray *a, int *present,
                       char *err, size_t err_size) {
    *present = gguf_find_key(f, key) != NULL;
    if (!*present) return 0;
    if (gguf_get_array(f, key, a) != 0)
        return tokenizer_fail(err, err_size, "tokenizer: %s is not an array", key);
    if (a->count != vocab)
        return tokenizer_fail(err, err_size, "tokenizer: %s has %llu entries for %llu tokens", key,
                              (unsigned long long)a->count, (unsigned long long)vocab);
    return 0;
}

static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

/* "<0xNN>" -> NN, else -1. */
static int byte_piece_value(const char *p, size_t len) {
    if (len != 6 || memcmp(p, "<0x", 3) != 0 || p[5] != '>') return -1;
    int hi = hex_value(p[3]), lo = hex_value(p[4]);
    return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/* What a token prints as (see tokenizer.h); writes at most len bytes to out. */
static size_t decode_piece(const Tokenizer *t, int id, const int *unicode_to_byte, char *out) {
    const char *p = t->pieces[id];
    size_t len = (size_t)t->piece_lengths[id], n = 0;
    int type = t->token_types[id];
    if (type == TOKEN_TYPE_USER_DEFINED) {
        memcpy(out, p, len);
        return len;
    }
    if (t->kind == TOKENIZER_SPM && type == TOKEN_TYPE_BYTE) {
        int b = byte_piece_value(p, len);
        if (b < 0) return 0;
        out[0] = (char)b;
        return 1;
    }
    if (type != TOKEN_TYPE_NORMAL) return 0; /* control, unknown, unused: not printed */
    for (size_t i = 0; i < len;) {
        if (t->kind == TOKENIZER_SPM) {
            if (len - i >= 3 && memcmp(p + i, "\xE2\x96\x81", 3) == 0) {
                out[n++] = ' ';
                i += 3;
            } else {
                out[n++] = p[i++];
            }
            continue;
        }
        uint32_t cp;
        size_t used = unicode_decode_utf8((const unsigned char *)p + i, len - i, &cp);
        if (cp < 0x144 && unicode_to_byte[cp] >= 0 && used > 0) {
            out[n++] = (char)unicode_to_byte[cp];
        } else {
            memcpy(out + n, p + i, used); /* not a byte character: keep it */
            n += used;
        }
        i += used;
    }
    return n;
}

static int compare_special(const void *a, const void *b) {
    const int *x = a, *y = b; /* {length, id} */
    if (x[0] != y[0]) return x[0] > y[0] ? -1 : 1;
    return x[1] < y[1] ? -1 : x[1] > y[1];
}

static int build_specials(Tokenizer *t) {
    int *pairs = malloc((size_t)t->vocab_size * 2 * sizeof(int) + 1);
    if (!pairs) return -1;
    int n = 0;
    for (int id = 0; id < t->vocab_size; id++) {
        int type = t->token_types[id];
        if ((type == TOKEN_TYPE_CONTROL || type == TOKEN_TYPE_USER_DEFINED || type == TOKEN_TYPE_UNKNOWN) &&
            t->piece_lengths[id] > 0) {
            pairs[2 * n] = t->piece_lengths[id];
            pairs[2 * n + 1] = id;
            n++;
        }
    }
    qsort(pairs, (size_t)n, 2 * sizeof(int), compare_special);
    for (int i = 0; i < n; i++) t->special_ids[i] = pairs[2 * i + 1];
    t->special_count = n;
    free(pairs);
    return 0;
}

/* Merges are resolved in batches so the hash-table reads of one batch are
 * fetched from memory together (each merge needs four random reads). */
#define MERGE_BATCH 16

typedef struct {
    GgufString s;
    size_t a_len;
    uint32_t a_hash, b_hash, pair_hash;
    int from, to, result;
} PendingMerge;

static void prefetch_piece_slot(const Tokenizer *t, uint32_t hash) {
    __builtin_prefetch(&t->hash_slots[hash & t->hash_mask]);
}

/* Parses "A B" merges into (from, to, result) with a hash on (from, to). */
static int load_merges(Tokenizer *t, const GgufArray *merges, char *err, size_t err_size) {
    GgufArrayIter it;
    gguf_array_iter_init(&it, merges);
    memset(t->merge_slots, 0xff, ((size_t)t->merge_mask + 1) * sizeof(TokenizerMergeSlot));
    PendingMerge batch[MERGE_BATCH];
    int kept = 0, more = 1;
    for (uint64_t first = 0; more; first += MERGE_BATCH) {
        int n = 0;
        while (n < MERGE_BATCH && (more = gguf_array_iter_next_string(&it, &batch[n].s))) {
            PendingMerge *m = &batch[n];
            const char *space = m->s.len > 1 ? memchr(m->s.ptr + 1, ' ', m->s.len - 1) : NULL;
            if (!space)
                return tokenizer_fail(err, err_size,
                                      "tokenizer: merge %llu is not two tokens separated by a space",
                                      (unsigned long long)(first + (uint64_t)n));
            m->a_len = (size_t)(space - m->s.ptr);
            m->a_hash = tokenizer_hash_bytes(TOKENIZER_HASH_SEED, m->s.ptr, m->a_len);
            m->b_hash = tokenizer_hash_bytes(TOKENIZER_HASH_SEED, space + 1, m->s.len - m->a_len - 1);
            m->pair_hash = tokenizer_hash_bytes(m->a_hash, space + 1, m->s.len - m->a_len - 1);
            prefetch_piece_slot(t, m->a_hash);
            prefetch_piece_slot(t, m->b_hash);
            prefetch_piece_slot(t, m->pair_hash);
            n++;
        }
        for (int k = 0; k < n; k++) {
            PendingMerge *m = &batch[k];
            const char *a = m->s.ptr, *b = a + m->a_len + 1;
            size_t b_len = m->s.len - m->a_len - 1;
            m->from = tokenizer_lookup_hashed(t, m->a_hash, a, m->a_len, "", 0);
            m->to = tokenizer_lookup_hashed(t, m->b_hash, b, b_len, "", 0);
            if (m->from < 0 || m->to < 0)
                return tokenizer_fail(
                    err, err_size,
                    "tokenizer: merge %llu ('%.*s') names a token that is not in the vocabulary",
                    (unsigned long long)(first + (uint64_t)k), (int)(m->s.len > 60 ? 60 : m->s.len),
                    m->s.ptr);
            m->result = tokenizer_lookup_hashed(t, m->pair_hash, a, m->a_len, b, b_len);
            __builtin_prefetch(&t->merge_slots[bpe_merge_hash(m->from, m->to) & t->merge_mask]);
        }
        for (int k = 0; k < n; k++) {
            const PendingMerge *m = &batch[k];
            /* A merge whose result is no token can never produce one: skipped. A
             * repeated pair keeps its first rank, as in llama.cpp. */
            if (m->result < 0) continue;
            TokenizerMergeSlot *slot = bpe_merge_slot(t, m->from, m->to);
            if (slot->rank >= 0) continue;
            t->merges[kept] = (TokenizerMerge){m->from, m->to, m->result};
            *slot = (TokenizerMergeSlot){m->from, m->to, kept++};
            t->merge_count = kept;
        }
    }
    return 0;
}

/* The text-to-id table. Inserted from the last id down: a repeated piece
 * resolves to its highest id, as llama.cpp's text-to-token map does. */
static void index_pieces(Tokenizer *t) {
    for (int id = t->vocab_size - 1; id >= 0; id--) {
        uint32_t hash =
            tokenizer_hash_bytes(TOKENIZER_HASH_SEED, t->pieces[id], (size_t)t->piece_lengths[id]);
        uint32_t slot = hash & t->hash_mask;
        while (t->hash_slots[slot].id >= 0) slot = (slot + 1) & t->hash_mask;
        t->hash_slots[slot] = (TokenizerSlot){id, hash};
    }
}

/* Each piece's decoded bytes, written from strings on. */
static void decode_pieces(Tokenizer *t, char *strings) {
    int unicode_to_byte[0x144];
    for (int i = 0; i < 0x144; i++) unicode_to_byte[i] = -1;
    for (int b = 0; b < 256; b++) {
        char piece[4];
        size_t len = bpe_byte_encoding((unsigned)b, piece);
        uint32_t cp;
        unicode_decode_utf8((const unsigned char *)piece, len, &cp);
        unicode_to_byte[cp] = b;
    }
    for (int id = 0; id < t->vocab_size; id++) {
        size_t len = decode_piece(t, id, unicode_to_byte, strings);
        strings[len] = '\0';
        t->decoded[id] = strings;
        t->decoded_lengths[id] = (int)len;
        strings += len + 1;
    }
}

/* Specials and flags, with llama.cpp's defaults per model. */
static int read_specials(Tokenizer *t, const GgufFile *f, char *err, size_t err_size) {
    int n = t->vocab_size;
    int spm = t->kind == TOKENIZER_SPM;
    t->bos_id = spm ? 1 : 11;
    t->eos_id = spm ? 2 : 11;
    t->unk_id = spm ? 0 : -1;
    t->pad_id = -1;
    if (t->bos_id >= n) t->bos_id = -1;
    if (t->eos_id >= n) t->eos_id = -1;
    t->add_bos = spm;
    t->add_eos = 0;
    t->add_space_prefix = spm;
    if (read_id(f, "tokenizer.ggml.bos_token_id", n, &t->bos_id, err, err_size) ||
        read_id(f, "tokenizer.ggml.eos_token_id", n, &t->eos_id, err, err_size) ||
        read_id(f, "tokenizer.ggml.unknown_token_id", n, &t->unk_id, err, err_size) ||
        read_id(f, "tokenizer.ggml.padding_token_id", n, &t->pad_id, err, err_size) ||
        read_flag(f, "tokenizer.ggml.add_bos_token", &t->add_bos, err, err_size) ||
        read_flag(f, "tokenizer.ggml.add_eos_token", &t->add_eos, err, err_size) ||
        read_flag(f, "tokenizer.ggml.add_space_prefix", &t->add_space_prefix, err, err_size))
        return -1;
    return 0;
}

/* tokenizer.ggml.model: SentencePiece ("llama") or byte-level BPE ("gpt2"). */
static int read_model_kind(Tokenizer *t, const GgufFile *f, char *err, size_t err_size) {
    GgufString model;
    if (gguf_get_string(f, "tokenizer.ggml.model", &model) != 0)
        return tokenizer_fail(err, err_size, "tokenizer: the GGUF file has no tokenizer.ggml.model");
    if (gguf_string_eq(model, "llama"))
        t->kind = TOKENIZER_SPM;
    else if (gguf_string_eq(model, "gpt2"))
        t->kind = TOKENIZER_BPE;
    else
        return tokenizer_fail(err, err_size,
                              "tokenizer: tokenizer.ggml.model '%.*s' is not supported (llama or gpt2)",
                              (int)(model.len > 40 ? 40 : model.len), model.ptr);
    return 0;
}

/* tokenizer.ggml.pre and tokenizer.chat_template, each optional (pre keeps
 * "", chat NULL when absent). */
static int read_pre_and_template(const GgufFile *f, GgufString *pre, GgufString *chat, char *err,
                                 size_t err_size) {
    if (gguf_find_key(f, "tokenizer.ggml.pre") && gguf_get_string(f, "tokenizer.ggml.pre", pre) != 0)
        return tokenizer_fail(err, err_size, "tokenizer: tokenizer.ggml.pre is not a string");
    if (pre->len > 256) return tokenizer_fail(err, err_size, "tokenizer: tokenizer.ggml.pre is too long");
    if (gguf_find_key(f, "tokenizer.chat_template") &&
        gguf_get_string(f, "tokenizer.chat_template", chat) != 0)
        return tokenizer_fail(err, err_size, "tokenizer: tokenizer.chat_template is not a string");
    if (chat->len > (1u << 24))
        return tokenizer_fail(err, err_size, "tokenizer: tokenizer.chat_template is too long");
    return 0;
}

/* The vocabulary's arrays in the file, their types checked. */
typedef struct {
    GgufArray tokens, scores, types, merges;
    int has_scores, has_types;
} VocabArrays;

static int read_vocab_arrays(const Tokenizer *t, const GgufFile *f, VocabArrays *v, char *err,
                             size_t err_size) {
    memset(v, 0, sizeof *v);
    if (gguf_get_array(f, "tokenizer.ggml.tokens", &v->tokens) != 0 || v->tokens.type != GGUF_TYPE_STRING)
        return tokenizer_fail(err, err_size,
                              "tokenizer: tokenizer.ggml.tokens is missing or not a string array");
    if (v->tokens.count == 0 || v->tokens.count > MAX_VOCAB)
        return tokenizer_fail(err, err_size, "tokenizer: %llu tokens (need 1..%d)",
                              (unsigned long long)v->tokens.count, MAX_VOCAB);
    uint64_t n = v->tokens.count;
    if (token_array(f, "tokenizer.ggml.scores", n, &v->scores, &v->has_scores, err, err_size) ||
        token_array(f, "tokenizer.ggml.token_type", n, &v->types, &v->has_types, err, err_size))
        return -1;
    if (v->has_scores && v->scores.type != GGUF_TYPE_FLOAT32)
        return tokenizer_fail(err, err_size, "tokenizer: tokenizer.ggml.scores is not an f32 array");
    if (v->has_types && v->types.type != GGUF_TYPE_INT32 && v->types.type != GGUF_TYPE_UINT32)
        return tokenizer_fail(err, err_size, "tokenizer: tokenizer.ggml.token_type is not an i32 array");
    if (t->kind == TOKENIZER_BPE &&
        (gguf_get_array(f, "tokenizer.ggml.merges", &v->merges) != 0 || v->merges.type != GGUF_TYPE_STRING))
        return tokenizer_fail(err, err_size,
                              "tokenizer: a gpt2 vocabulary needs tokenizer.ggml.merges (a string array)");
    if (v->merges.count > MAX_VOCAB) return tokenizer_fail(err, err_size, "tokenizer: too many merges");
    return 0;
}

/* Bytes of all the token strings with their terminators; every string is
 * checked before anything is allocated. */
static int measure_pieces(const GgufArray *tokens, size_t *bytes, char *err, size_t err_size) {
    GgufArrayIter it;
    GgufString s;
    *bytes = 0;
    gguf_array_iter_init(&it, tokens);
    for (int id = 0; gguf_array_iter_next_string(&it, &s); id++) {
        if (s.len > MAX_PIECE_BYTES)
            return tokenizer_fail(err, err_size, "tokenizer: token %d is %llu bytes long (limit %d)", id,
                                  (unsigned long long)s.len, MAX_PIECE_BYTES);
        *bytes += s.len + 1;
    }
    return 0;
}

static char *copy_string(char *to, GgufString from) {
    memcpy(to, from.ptr, from.len);
    to[from.len] = '\0';
    return to;
}

/* The tokenizer's tables in one allocation (t->arena): a first pass
 * measures it, the second carves it. Sets *strings to the room for the
 * pieces and their decoded forms. */
static int carve_tables(Tokenizer *t, size_t n, uint64_t merges, size_t piece_bytes, GgufString pre,
                        GgufString chat, char **strings, char *err, size_t err_size) {
    uint32_t slots = 1, merge_slots = 1;
    while (slots < (uint32_t)n * 2) slots <<= 1;
    /* At most 3/4 full: half the memory of 1/2 full, and probes stay short. */
    while (merge_slots < (uint32_t)merges / 3 * 4 + 2) merge_slots <<= 1;
    Arena arena = {0};
    char *pre_copy = NULL, *chat_copy = NULL;
    for (int pass = 0; pass < 2; pass++) {
        if (pass) {
            if (arena.overflow || arena.used > SIZE_MAX / 2 || !(arena.base = malloc((size_t)arena.used)))
                return tokenizer_fail(err, err_size, "tokenizer: out of memory (%llu bytes)",
                                      (unsigned long long)arena.used);
            t->arena = arena.base;
            arena.used = 0;
        }
        t->pieces = arena_take(&arena, n, sizeof(char *), 8);
        t->decoded = arena_take(&arena, n, sizeof(char *), 8);
        t->piece_lengths = arena_take(&arena, n, sizeof(int), 8);
        t->decoded_lengths = arena_take(&arena, n, sizeof(int), 8);
        t->special_ids = arena_take(&arena, n, sizeof(int), 8);
        t->scores = arena_take(&arena, n, sizeof(float), 8);
        t->hash_slots = arena_take(&arena, slots, sizeof(TokenizerSlot), 8);
        t->token_types = arena_take(&arena, n, 1, 8);
        t->merges = arena_take(&arena, merges, sizeof(TokenizerMerge), 8);
        t->merge_slots = arena_take(&arena, merge_slots, sizeof(TokenizerMergeSlot), 8);
        *strings = arena_take(&arena, 2 * piece_bytes, 1, 8);
        pre_copy = arena_take(&arena, pre.len + 1, 1, 8);
        if (chat.ptr) chat_copy = arena_take(&arena, chat.len + 1, 1, 8);
    }
    t->pre_name = copy_string(pre_copy, pre);
    if (chat_copy) t->chat_template = copy_string(chat_copy, chat);
    t->vocab_size = (int)n;
    t->hash_mask = slots - 1;
    t->merge_mask = merge_slots - 1;
    memset(t->hash_slots, 0xff, slots * sizeof(TokenizerSlot));
    return 0;
}

/* Each token's piece, score and type into the tables; returns the room
 * after the pieces (for their decoded forms), or NULL with err set. */
static char *fill_pieces(Tokenizer *t, const VocabArrays *v, char *strings, char *err, size_t err_size) {
    GgufArrayIter it;
    GgufString s;
    gguf_array_iter_init(&it, &v->tokens);
    for (int id = 0; gguf_array_iter_next_string(&it, &s); id++) {
        t->pieces[id] = copy_string(strings, s);
        t->piece_lengths[id] = (int)s.len;
        if ((int)s.len > t->longest_piece) t->longest_piece = (int)s.len;
        strings += s.len + 1;
        float score = 0.0f;
        if (v->has_scores) gguf_array_f32(&v->scores, (uint64_t)id, &score);
        t->scores[id] = score;
        int32_t type = TOKEN_TYPE_NORMAL;
        if (v->has_types &&
            (gguf_array_i32(&v->types, (uint64_t)id, &type) != 0 || type < 0 || type > TOKEN_TYPE_BYTE)) {
            tokenizer_fail(err, err_size, "tokenizer: token %d has an unknown token type", id);
            return NULL;
        }
        t->token_types[id] = (uint8_t)type;
    }
    return strings;
}

/* The token of each byte (<0xNN> in SentencePiece, GPT-2's byte alphabet in BPE). */
static void find_byte_tokens(Tokenizer *t) {
    for (int b = 0; b < 256; b++) {
        char piece[8];
        size_t len = t->kind == TOKENIZER_SPM ? (size_t)snprintf(piece, sizeof piece, "<0x%02X>", b)
                                              : bpe_byte_encoding((unsigned)b, piece);
        t->byte_tokens[b] = tokenizer_lookup(t, piece, len);
    }
}

static int load_from(Tokenizer *t, const GgufFile *f, char *err, size_t err_size) {
    VocabArrays v;
    size_t piece_bytes;
    GgufString pre = {"", 0}, chat = {NULL, 0};
    if (read_model_kind(t, f, err, err_size) || read_vocab_arrays(t, f, &v, err, err_size) ||
        measure_pieces(&v.tokens, &piece_bytes, err, err_size) ||
        read_pre_and_template(f, &pre, &chat, err, err_size))
        return -1;
    if (t->kind == TOKENIZER_BPE) {
        /* Never refused: an unknown name splits like the closest family. */
        PretokenizerChoice choice = pretokenizer_choose(pre.ptr, pre.len, t->warning, sizeof t->warning);
        t->pretokenizer = choice.kind;
        t->ignore_merges = choice.ignore_merges;
    }
    char *strings;
    if (carve_tables(t, (size_t)v.tokens.count, v.merges.count, piece_bytes, pre, chat, &strings, err,
                     err_size) ||
        !(strings = fill_pieces(t, &v, strings, err, err_size)))
        return -1;
    index_pieces(t);
    if (v.has_types) tokenizer_correct_token_types(t);
    find_byte_tokens(t);
    decode_pieces(t, strings);
    if (read_specials(t, f, err, err_size)) return -1;
    if (build_specials(t) != 0) return tokenizer_fail(err, err_size, "tokenizer: out of memory");
    if (t->kind == TOKENIZER_BPE && load_merges(t, &v.merges, err, err_size) != 0) return -1;
    return 0;
}

int tokenizer_create_gguf(Tokenizer *t, const void *gguf_data, size_t size, char *err, size_t err_size) {
    memset(t, 0, sizeof *t);
    GgufFile f;
    if (gguf_create(&f, gguf_data, size, err, err_size) != 0) return -1;
    int rc = load_from(t, &f, err, err_size);
    gguf_destroy(&f);
    if (rc != 0) {
        free(t->arena);
        memset(t, 0, sizeof *t);
    }
    return rc;
}

void gguf_tokenizer_destroy(Tokenizer *t) {
    (void)t; /* everything lives in t->arena */
}

const char *gguf_tokenizer_decode(const Tokenizer *t, int prev_token, int token, size_t *len) {
    *len = 0;
    if (token < 0 || token >= t->vocab_size) return "";
    const char *piece = t->decoded[token];
    size_t n = (size_t)t->decoded_lengths[token];
    /* The dummy prefix comes back off the first piece of a text. */
    if (t->kind == TOKENIZER_SPM && t->add_space_prefix && (prev_token < 0 || prev_token == t->bos_id) && n &&
        piece[0] == ' ' && t->token_types[token] == TOKEN_TYPE_NORMAL) {
        piece++;
        n--;
    }
    *len = n;
    return piece;
}
