/* tokenizer_gguf_encode.c - text to token ids with a GGUF vocabulary: the
 * special tokens split out first, then SentencePiece or byte-level BPE on
 * the raw fragments between them (bpe.c); and the ids of a text as a line. */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/tokenizer/tokenizer_internal.h"

#define MAX_TEXT_BYTES 0x3fffffff

typedef struct {
    int id; /* -1: raw text */
    size_t start, len;
} Fragment;

/* First occurrence of piece in base[0..len), or -1. */
static long find_piece(const char *base, size_t len, const char *piece, size_t plen) {
    for (size_t at = 0; at + plen <= len;) {
        const char *hit = memchr(base + at, piece[0], len - plen - at + 1);
        if (!hit) return -1;
        if (memcmp(hit, piece, plen) == 0) return hit - base;
        at = (size_t)(hit - base) + 1;
    }
    return -1;
}

/* What a text holds, to skip special tokens that cannot occur in it without
 * searching: which byte pairs appear, and the longest run of each byte (the
 * whitespace-run tokens of Gemma-style vocabularies are uniform). */
typedef struct {
    uint8_t pairs[65536 / 8];
    uint32_t longest_run[256];
} TextDigest;

static void digest_text(TextDigest *d, const char *text, size_t len) {
    memset(d, 0, sizeof *d);
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        run = i > 0 && text[i - 1] == text[i] ? run + 1 : 1;
        if (run > d->longest_run[c]) d->longest_run[c] = (uint32_t)run;
        if (i + 1 < len) {
            unsigned pair = (unsigned)c << 8 | (unsigned char)text[i + 1];
            d->pairs[pair >> 3] |= (uint8_t)(1u << (pair & 7));
        }
    }
}

static int may_occur(const TextDigest *d, const char *piece, size_t len) {
    unsigned char first = (unsigned char)piece[0];
    if (d->longest_run[first] == 0) return 0;
    size_t same = 1;
    while (same < len && piece[same] == piece[0]) same++;
    if (same > d->longest_run[first]) return 0;
    for (size_t i = 0; i + 1 < len; i++) {
        unsigned pair = (unsigned)(unsigned char)piece[i] << 8 | (unsigned char)piece[i + 1];
        if (!(d->pairs[pair >> 3] & (1u << (pair & 7)))) return 0;
    }
    return 1;
}

/* Whether [at, at + len) overlaps one of the plain spans. */
static int in_plain_span(const TokenizerSpans *plain, size_t at, size_t len) {
    for (int i = 0; plain && i < plain->count; i++)
        if (at < plain->spans[i].end && plain->spans[i].start < at + len) return 1;
    return 0;
}

/* Splits the raw fragments at every occurrence of the special tokens,
 * longest token first (llama.cpp's tokenizer_st_partition). User-defined
 * tokens always match; control and unknown ones only with parse_special.
 * Each token rewrites the list from one buffer into the other (each holds
 * text_len + 1 fragments: fragments are never empty); returns the final one. */
static Fragment *partition(const Tokenizer *t, const char *text, size_t text_len, int parse_special,
                           const TokenizerSpans *plain, const TextDigest *digest, Fragment *frags,
                           Fragment *spare, size_t *count_out) {
    size_t count = 0;
    frags[count++] = (Fragment){-1, 0, text_len};
    for (int k = 0; k < t->special_count; k++) {
        int id = t->special_ids[k];
        int type = t->token_types[id];
        if (!parse_special && type != TOKEN_TYPE_USER_DEFINED) continue;
        const char *piece = t->pieces[id];
        size_t plen = (size_t)t->piece_lengths[id];
        if (plen > text_len || !may_occur(digest, piece, plen)) continue;
        size_t out = 0;
        for (size_t i = 0; i < count; i++) {
            Fragment f = frags[i];
            size_t at = f.start, scan = f.start, end = f.start + f.len;
            long found;
            /* [left raw] [token], then the right part is scanned again; a
             * control token touching a plain span is text, not a token. */
            while (f.id < 0 && end - scan >= plen &&
                   (found = find_piece(text + scan, end - scan, piece, plen)) >= 0) {
                size_t hit = scan + (size_t)found;
                if (type != TOKEN_TYPE_USER_DEFINED && in_plain_span(plain, hit, plen)) {
                    scan = hit + 1;
                    continue;
                }
                if (hit > at) spare[out++] = (Fragment){-1, at, hit - at};
                spare[out++] = (Fragment){id, hit, plen};
                at = scan = hit + plen;
            }
            if (f.id >= 0)
                spare[out++] = f;
            else if (at < end)
                spare[out++] = (Fragment){-1, at, end - at};
        }
        Fragment *swap = frags;
        frags = spare, spare = swap;
        count = out;
    }
    *count_out = count;
    return frags;
}

/* SentencePiece on one raw fragment: optional dummy prefix, spaces as U+2581. */
static int spm_fragment(const Tokenizer *t, const char *text, size_t len, int prefix, TokenOutput *out) {
    char *escaped = malloc(3 * (len + 1));
    if (!escaped) return -1;
    size_t n = 0;
    for (size_t i = 0; i < len + (size_t)prefix; i++) {
        char ch = i < (size_t)prefix ? ' ' : text[i - (size_t)prefix];
        if (ch == ' ') {
            memcpy(escaped + n, "\xE2\x96\x81", 3);
            n += 3;
        } else {
            escaped[n++] = ch;
        }
    }
    int rc = spm_encode_fragment(t, escaped, n, out);
    free(escaped);
    return rc;
}

int gguf_tokenizer_encode(const Tokenizer *t, const char *text, size_t text_len, unsigned flags, int *tokens,
                          size_t max_tokens, char *err, size_t err_size) {
    return gguf_tokenizer_encode_spans(t, text, text_len, flags, NULL, tokens, max_tokens, err, err_size);
}

int gguf_tokenizer_encode_spans(const Tokenizer *t, const char *text, size_t text_len, unsigned flags,
                                const TokenizerSpans *plain, int *tokens, size_t max_tokens, char *err,
                                size_t err_size) {
    if (text_len > MAX_TEXT_BYTES) return tokenizer_fail(err, err_size, "tokenizer: text too long");
    TokenOutput out = {tokens, 0, max_tokens, 0};
    if ((flags & TOKENIZE_ADD_BOS) && t->bos_id >= 0) token_output_push(&out, t->bos_id);
    Fragment *frags = text_len ? malloc(2 * (text_len + 1) * sizeof(Fragment)) : NULL;
    if (text_len && !frags) return tokenizer_fail(err, err_size, "tokenizer: out of memory");
    TextDigest *digest = text_len ? malloc(sizeof *digest) : NULL;
    if (text_len && !digest) {
        free(frags);
        return tokenizer_fail(err, err_size, "tokenizer: out of memory");
    }
    if (digest) digest_text(digest, text, text_len);
    size_t count = 0;
    const Fragment *parts = frags;
    if (text_len)
        parts = partition(t, text, text_len, (flags & TOKENIZE_PARSE_SPECIAL) != 0, plain, digest, frags,
                          frags + text_len + 1, &count);
    free(digest);
    int rc = 0, prev_special = 1;
    for (size_t i = 0; i < count && rc == 0; i++) {
        const Fragment *f = &parts[i];
        if (f->id >= 0) {
            token_output_push(&out, f->id);
            prev_special = 1;
        } else if (t->kind == TOKENIZER_SPM) {
            rc = spm_fragment(t, text + f->start, f->len, t->add_space_prefix && prev_special, &out);
            prev_special = 0;
        } else {
            rc = bpe_encode_fragment(t, text + f->start, f->len, &out);
        }
    }
    free(frags);
    if (rc != 0) return tokenizer_fail(err, err_size, "tokenizer: out of memory");
    if ((flags & TOKENIZE_ADD_EOS) && t->eos_id >= 0) token_output_push(&out, t->eos_id);
    if (out.overflow) return tokenizer_fail(err, err_size, "tokenizer: token buffer too small");
    return (int)out.count;
}

int tokenizer_format_ids(const Tokenizer *t, const char *text, size_t text_len, char *out, size_t out_size,
                         char *err, size_t err_size) {
    size_t cap = 3 * text_len + 8;
    int *ids = malloc(cap * sizeof(int));
    if (!ids) return tokenizer_fail(err, err_size, "tokenizer: out of memory");
    int n = tokenizer_encode_ex(t, text, text_len, 0, ids, cap, err, err_size);
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(out + used, out_size > used ? out_size - used : 0, " %d", ids[i]);
        used += (size_t)w;
    }
    free(ids);
    if (n < 0) return -1;
    if (used + 2 > out_size)
        return tokenizer_fail(err, err_size, "tokenizer: output buffer too small for %d ids", n);
    out[used++] = '\n';
    out[used] = '\0';
    return n;
}
