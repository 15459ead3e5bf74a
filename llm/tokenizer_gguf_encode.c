/* tokenizer_gguf_encode.c - text to token ids with a GGUF vocabulary: the
 * special tokens split out first, then SentencePiece or byte-level BPE on
 * the raw fragments between them (bpe.c); and the ids of a text as a line. */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/tokenizer_internal.h"

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

/* Splits the raw fragments at every occurrence of the special tokens,
 * longest token first (llama.cpp's tokenizer_st_partition). User-defined
 * tokens always match; control and unknown ones only with parse_special. */
static size_t partition(const Tokenizer *t, const char *text, size_t text_len, int parse_special,
                        Fragment *frags) {
    size_t count = 0;
    frags[count++] = (Fragment){-1, 0, text_len};
    for (int k = 0; k < t->special_count; k++) {
        int id = t->special_ids[k];
        int type = t->token_types[id];
        if (!parse_special && type != TOKEN_TYPE_USER_DEFINED) continue;
        const char *piece = t->pieces[id];
        size_t plen = (size_t)t->piece_lengths[id];
        for (size_t i = 0; i < count; i++) {
            Fragment f = frags[i];
            if (f.id >= 0 || f.len < plen) continue;
            long found = find_piece(text + f.start, f.len, piece, plen);
            if (found < 0) continue;
            size_t pos = (size_t)found;
            /* [left raw] [token] [right raw]: the right part is scanned next. */
            Fragment parts[3];
            size_t n = 0;
            if (pos > 0) parts[n++] = (Fragment){-1, f.start, pos};
            parts[n++] = (Fragment){id, f.start + pos, plen};
            if (pos + plen < f.len) parts[n++] = (Fragment){-1, f.start + pos + plen, f.len - pos - plen};
            memmove(&frags[i + n], &frags[i + 1], (count - i - 1) * sizeof(Fragment));
            memcpy(&frags[i], parts, n * sizeof(Fragment));
            count += n - 1;
            i += pos > 0; /* now at the token; the loop moves to the right part */
        }
    }
    return count;
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
    if (text_len > MAX_TEXT_BYTES) return tokenizer_fail(err, err_size, "tokenizer: text too long");
    TokenOutput out = {tokens, 0, max_tokens, 0};
    if ((flags & TOKENIZE_ADD_BOS) && t->bos_id >= 0) token_output_push(&out, t->bos_id);
    Fragment *frags = text_len ? malloc((2 * text_len + 1) * sizeof(Fragment)) : NULL;
    if (text_len && !frags) return tokenizer_fail(err, err_size, "tokenizer: out of memory");
    size_t count = text_len ? partition(t, text, text_len, (flags & TOKENIZE_PARSE_SPECIAL) != 0, frags) : 0;
    int rc = 0, prev_special = 1;
    for (size_t i = 0; i < count && rc == 0; i++) {
        const Fragment *f = &frags[i];
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
    if (used + 2 > out_size) return tokenizer_fail(err, err_size, "tokenizer: output buffer too small for %d ids", n);
    out[used++] = '\n';
    out[used] = '\0';
    return n;
}
