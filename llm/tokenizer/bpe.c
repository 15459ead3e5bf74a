/* bpe.c - the merge loops of GGUF vocabularies, as llama.cpp runs them.
 *
 * Both start from one symbol per character (SentencePiece: per UTF-8
 * character of the escaped text; byte-level BPE: per byte of a pre-tokenised
 * word) and repeatedly merge the best adjacent pair, leftmost on ties:
 * SentencePiece ranks a pair by the score of the token it spells, BPE by the
 * rank of the pair in tokenizer.ggml.merges. A heap of candidates over a
 * linked list of symbols; a candidate is stale once either side changed. */
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/tokenizer/merge_heap.h"
#include "llm/tokenizer/pretokenize.h"
#include "llm/tokenizer/tokenizer_internal.h"
#include "llm/tokenizer/unicode.h"

typedef struct {
    int start, len; /* bytes of the fragment; len 0 = merged away */
    int id;         /* token of the symbol, -1 when it is none */
    int prev, next;
} Symbol;

typedef struct {
    const Tokenizer *t;
    const char *text;
    Symbol *symbols;
    MergeHeap heap;
    int spm; /* 1: SentencePiece scores, 0: BPE merge ranks */
} MergeState;

/* Rank of the merge (from, to), or -1. */
static int bpe_merge_rank(const Tokenizer *t, int from, int to);

static void try_pair(MergeState *m, int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol *l = &m->symbols[left], *r = &m->symbols[right];
    MergeCandidate c = {0, left, right, l->len, r->len, -1};
    if (m->spm) {
        c.result = tokenizer_lookup_pair(m->t, m->text + l->start, (size_t)l->len, m->text + r->start,
                                         (size_t)r->len);
        if (c.result < 0) return;
        c.priority = m->t->scores[c.result];
    } else {
        if (l->id < 0 || r->id < 0) return;
        int rank = bpe_merge_rank(m->t, l->id, r->id);
        if (rank < 0) return;
        c.result = m->t->merges[rank].result;
        c.priority = -(float)rank;
    }
    merge_heap_push(&m->heap, c);
}

/* Runs the merges over count symbols already linked in order. */
static void merge_symbols(MergeState *m, int count) {
    Symbol *s = m->symbols;
    for (int i = 0; i + 1 < count; i++) try_pair(m, i, i + 1);
    while (m->heap.count) {
        MergeCandidate c = merge_heap_pop(&m->heap);
        Symbol *l = &s[c.left], *r = &s[c.right];
        /* A symbol changes only by taking in its right neighbour (which then
         * has length 0), so equal lengths and adjacency mean unchanged. */
        if (l->len != c.left_tag || r->len != c.right_tag || l->next != c.right) continue;
        l->len += r->len;
        l->id = c.result;
        r->len = 0;
        l->next = r->next;
        if (r->next >= 0) s[r->next].prev = c.left;
        try_pair(m, l->prev, c.left);
        try_pair(m, c.left, l->next);
    }
}

static int merge_state_init(MergeState *m, const Tokenizer *t, const char *text, size_t count, int spm) {
    m->t = t;
    m->text = text;
    m->spm = spm;
    /* count - 1 initial pairs and at most two per merge. */
    size_t heap_cap = 3 * count + 1;
    m->symbols = malloc(count * sizeof(Symbol) + heap_cap * sizeof(MergeCandidate));
    if (!m->symbols) return -1;
    m->heap.items = (MergeCandidate *)(m->symbols + count);
    m->heap.count = 0;
    return 0;
}

/* llama.cpp's character length: from the lead byte only. */
static size_t utf8_lead_length(unsigned char b) {
    static const unsigned char lengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
    return lengths[b >> 4];
}

int spm_encode_fragment(const Tokenizer *t, const char *text, size_t len, TokenOutput *out) {
    if (len == 0) return 0;
    MergeState m;
    if (merge_state_init(&m, t, text, len, 1) != 0) return -1;
    int count = 0;
    for (size_t offset = 0; offset < len; count++) {
        size_t n = utf8_lead_length((unsigned char)text[offset]);
        if (n > len - offset) n = len - offset;
        m.symbols[count] = (Symbol){(int)offset, (int)n, -1, count - 1, -1};
        if (count > 0) m.symbols[count - 1].next = count;
        offset += n;
    }
    merge_symbols(&m, count);

    for (int i = 0; i >= 0; i = m.symbols[i].next) {
        const Symbol *s = &m.symbols[i];
        int id = tokenizer_lookup(t, text + s->start, (size_t)s->len);
        if (id >= 0) {
            token_output_push(out, id);
            continue;
        }
        /* Byte fallback; a merged symbol is always a token, so this is one character. */
        for (int b = 0; b < s->len; b++) {
            int byte_id = t->byte_tokens[(unsigned char)text[s->start + b]];
            if (byte_id < 0) byte_id = t->unk_id;
            if (byte_id >= 0) token_output_push(out, byte_id);
        }
    }
    free(m.symbols);
    return 0;
}

uint32_t bpe_merge_hash(int from, int to) {
    /* Fibonacci hashing of the pair: the high half of the product mixes every bit. */
    uint64_t key = ((uint64_t)(uint32_t)from << 32 | (uint32_t)to) * 0x9E3779B97F4A7C15ull;
    return (uint32_t)(key >> 32);
}

TokenizerMergeSlot *bpe_merge_slot(const Tokenizer *t, int from, int to) {
    uint32_t h = bpe_merge_hash(from, to);
    for (uint32_t slot = h & t->merge_mask;; slot = (slot + 1) & t->merge_mask) {
        TokenizerMergeSlot *s = &t->merge_slots[slot];
        if (s->rank < 0 || (s->from == from && s->to == to)) return s;
    }
}

static int bpe_merge_rank(const Tokenizer *t, int from, int to) {
    return t->merge_slots ? bpe_merge_slot(t, from, to)->rank : -1;
}

/* GPT-2's bytes_to_unicode: printable bytes stand for themselves, the others
 * for U+0100 onwards in byte order. */
static uint32_t byte_to_unicode(unsigned b) {
    if ((b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF)) return b;
    uint32_t n = 0;
    for (unsigned x = 0; x < b; x++)
        if (!((x >= 0x21 && x <= 0x7E) || (x >= 0xA1 && x <= 0xAC) || (x >= 0xAE && x <= 0xFF))) n++;
    return 0x100 + n;
}

size_t bpe_byte_encoding(unsigned b, char *out) {
    return unicode_encode_utf8(byte_to_unicode(b), out);
}

/* One pre-tokenised word (raw bytes). */
static int encode_word(const Tokenizer *t, const char *word, size_t len, TokenOutput *out) {
    if (t->ignore_merges) {
        char *encoded = malloc(2 * len + 1);
        if (!encoded) return -1;
        size_t n = 0;
        for (size_t i = 0; i < len; i++) n += bpe_byte_encoding((unsigned char)word[i], encoded + n);
        int id = tokenizer_lookup(t, encoded, n);
        free(encoded);
        if (id >= 0) {
            token_output_push(out, id);
            return 0;
        }
    }
    MergeState m;
    if (merge_state_init(&m, t, word, len, 0) != 0) return -1;
    for (size_t i = 0; i < len; i++) {
        int c = (int)i;
        m.symbols[c] =
            (Symbol){c, 1, t->byte_tokens[(unsigned char)word[i]], c - 1, c + 1 < (int)len ? c + 1 : -1};
    }
    merge_symbols(&m, (int)len);
    for (int i = 0; i >= 0; i = m.symbols[i].next) {
        const Symbol *s = &m.symbols[i];
        if (s->id >= 0) {
            token_output_push(out, s->id);
            continue;
        }
        /* A byte without a token of its own: llama.cpp tries each byte of
         * its encoded character as a one-byte token. */
        char encoded[4];
        size_t n = bpe_byte_encoding((unsigned char)word[s->start], encoded);
        for (size_t b = 0; b < n; b++) {
            int id = tokenizer_lookup(t, encoded + b, 1);
            if (id >= 0) token_output_push(out, id);
        }
    }
    free(m.symbols);
    return 0;
}

int bpe_encode_fragment(const Tokenizer *t, const char *text, size_t len, TokenOutput *out) {
    if (len == 0) return 0;
    /* Code points (malformed UTF-8 becomes U+FFFD, as in llama.cpp), words,
     * and room to re-encode one word. */
    uint32_t *cps = malloc(len * (sizeof(uint32_t) + sizeof(size_t) + 4) + sizeof(uint32_t));
    if (!cps) return -1;
    size_t *ends = (size_t *)(cps + len + (len & 1));
    char *word = (char *)(ends + len);
    size_t count = 0;
    for (size_t offset = 0; offset < len;)
        offset += unicode_decode_utf8((const unsigned char *)text + offset, len - offset, &cps[count++]);
    long words = pretokenize((PretokenizerKind)t->pretokenizer, cps, count, ends);
    int rc = words < 0 ? -1 : 0;
    size_t start = 0;
    for (long w = 0; w < words && rc == 0; w++) {
        size_t n = 0;
        for (size_t i = start; i < ends[w]; i++) n += unicode_encode_utf8(cps[i], word + n);
        rc = encode_word(t, word, n, out);
        start = ends[w];
    }
    free(cps);
    return rc;
}
