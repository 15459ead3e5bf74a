/* test_tokenizer_gguf.c - GGUF tokenizers against llama.cpp's test vectors
 * (models/vocab/NAME.gguf.inp/.out and gguf-arch/tokenizer.inp/.out), round
 * trips, special-token parsing, and hostile metadata. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <string.h>

#include "llm/tokenizer/tokenizer.h"
#include "tests/host/gguf_layout.h"
#include "tests/host/llm_test_util.h"

#define SEPARATOR "\n__ggml_vocab_test__\n"

static char models_dir[512];

typedef struct {
    const char *name, *gguf, *cases;
} Vocab;

static const Vocab vocabs[] = {
    {"llama-spm", "vocab/ggml-vocab-llama-spm.gguf", "vocab/ggml-vocab-llama-spm.gguf"},
    {"phi-3", "vocab/ggml-vocab-phi-3.gguf", "vocab/ggml-vocab-phi-3.gguf"},
    {"gpt-2", "vocab/ggml-vocab-gpt-2.gguf", "vocab/ggml-vocab-gpt-2.gguf"},
    {"deepseek-coder", "vocab/ggml-vocab-deepseek-coder.gguf", "vocab/ggml-vocab-deepseek-coder.gguf"},
    {"falcon", "vocab/ggml-vocab-falcon.gguf", "vocab/ggml-vocab-falcon.gguf"},
    {"starcoder", "vocab/ggml-vocab-starcoder.gguf", "vocab/ggml-vocab-starcoder.gguf"},
    {"qwen2", "gguf-arch/qwen2-F32.gguf", "gguf-arch/tokenizer"},
    {"gemma3-arch", "gguf-arch2/gemma3-F32.gguf", "gguf-arch2/gemma3.tokenizer"},
    /* Real tokenizers converted from Hugging Face files (vocab/README-vocab-real.md). */
    {"llama3", "vocab/llama3.gguf", "vocab/llama3.gguf"},
    {"qwen3", "vocab/qwen3.gguf", "vocab/qwen3.gguf"},
    {"gemma3", "vocab/gemma3.gguf", "vocab/gemma3.gguf"},
};

static void *read_model_file(const char *rel, const char *suffix, size_t *size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s%s", models_dir, rel, suffix);
    return read_file(path, size);
}

/* Encodes without BOS/EOS; returns the count or -1. */
static int encode(const Tokenizer *t, const char *text, size_t len, unsigned flags, int *ids, size_t cap) {
    char err[160];
    return tokenizer_encode_ex(t, text, len, flags, ids, cap, err, sizeof err);
}

static int parse_ids(const char *line, size_t len, int *ids, int cap) {
    int n = 0;
    char buf[32];
    for (size_t i = 0; i < len;) {
        while (i < len && line[i] == ' ') i++;
        if (i >= len) break;
        size_t j = 0;
        while (i < len && line[i] != ' ' && j + 1 < sizeof buf) buf[j++] = line[i++];
        buf[j] = '\0';
        if (n < cap) ids[n++] = atoi(buf);
    }
    return n;
}

/* One case as its own check: "NAME case K \"text\"", and on a mismatch the
 * ids got and wanted. */
static void report_case(const char *vocab, int index, const char *text, size_t len, const int *got, int ngot,
                        const int *want, int nwant) {
    char name[160], why[600];
    int k = snprintf(name, sizeof name, "%s case %d \"", vocab, index);
    for (size_t i = 0; i < len && i < 32 && k < 150; i++) {
        unsigned char c = (unsigned char)text[i];
        k += snprintf(name + k, sizeof name - (size_t)k, c < 0x20 || c == '%' ? "\\x%02x" : "%c", c);
    }
    snprintf(name + k, sizeof name - (size_t)k, "%s\"", len > 32 ? "..." : "");
    int same = ngot == nwant && memcmp(got, want, (size_t)(nwant > 0 ? nwant : 0) * sizeof(int)) == 0;
    k = snprintf(why, sizeof why, "got");
    for (int i = 0; i < ngot && i < 24 && k < 280; i++)
        k += snprintf(why + k, sizeof why - (size_t)k, " %d", got[i]);
    k += snprintf(why + k, sizeof why - (size_t)k, "; want");
    for (int i = 0; i < nwant && i < 24 && k < 560; i++)
        k += snprintf(why + k, sizeof why - (size_t)k, " %d", want[i]);
    check_plain(same, name, why);
}

/* Every case of one vocabulary; returns 0 when the files are missing. */
static int check_vocab(const Vocab *v) {
    size_t gsize, isize, osize;
    void *gguf = read_model_file(v->gguf, "", &gsize);
    char *inp = read_model_file(v->cases, ".inp", &isize);
    char *out = read_model_file(v->cases, ".out", &osize);
    if (!gguf || !inp || !out) {
        free(gguf), free(inp), free(out);
        return 0;
    }
    Tokenizer t;
    char err[200], name[128];
    int rc = tokenizer_create_gguf(&t, gguf, gsize, err, sizeof err);
    free(gguf);
    snprintf(name, sizeof name, "%s: load", v->name);
    check(rc == 0, name, "%s", err);
    if (rc != 0) {
        free(inp), free(out);
        return 1;
    }

    int cases = 0, exact = 0, round_trips = 0, round_trip_cases = 0;
    const char *ip = inp, *iend = inp + isize, *op = out, *oend = out + osize;
    static int got[8192], want[8192];
    static char decoded[16384];
    while (ip < iend) {
        const char *sep = memmem(ip, (size_t)(iend - ip), SEPARATOR, strlen(SEPARATOR));
        if (!sep) break;
        size_t len = (size_t)(sep - ip);
        const char *eol = memchr(op, '\n', (size_t)(oend - op));
        if (!eol) eol = oend;
        int nwant = parse_ids(op, (size_t)(eol - op), want, 8192);
        int ngot = encode(&t, ip, len, 0, got, 8192);
        int same = ngot == nwant && memcmp(got, want, (size_t)nwant * sizeof(int)) == 0;
        exact += same;
        report_case(v->name, cases, ip, len, got, ngot, want, nwant);
        /* decode(encode(x)) == x holds for valid UTF-8 text. */
        size_t dlen = 0;
        int prev = -1;
        for (int i = 0; i < ngot; i++) {
            size_t n;
            const char *piece = tokenizer_decode(&t, prev, got[i], &n);
            if (dlen + n < sizeof decoded) memcpy(decoded + dlen, piece, n);
            dlen += n;
            prev = got[i];
        }
        int valid_utf8 = 1;
        for (size_t i = 0; i < len; i++)
            if ((unsigned char)ip[i] >= 0xF8 || (unsigned char)ip[i] == 0xC0 || (unsigned char)ip[i] == 0xC1)
                valid_utf8 = 0;
        if (valid_utf8) {
            round_trip_cases++;
            round_trips += dlen == len && memcmp(decoded, ip, len) == 0;
        }
        cases++;
        ip = sep + strlen(SEPARATOR);
        op = eol < oend ? eol + 1 : oend;
    }
    snprintf(name, sizeof name, "%s: %d cases exact", v->name, cases);
    check(cases > 0 && exact == cases, name, "%d of %d exact", exact, cases);
    snprintf(name, sizeof name, "%s: decode(encode(x)) == x", v->name);
    check(round_trips == round_trip_cases, name, "%d of %d round trips", round_trips, round_trip_cases);
    tokenizer_destroy(&t);
    free(inp), free(out);
    return 1;
}

/* ------------------------------------------------ crafted GGUF metadata */

/* A GGUF file in memory (tests/host/gguf_layout.h's writer) and how many
 * key/values it holds. */
typedef struct {
    GgufBuf buf;
    uint64_t n_kv;
} Builder;

static void put(Builder *b, const void *p, size_t n) {
    gguf_buf_append(&b->buf, p, n);
}
static void put_u32(Builder *b, uint32_t v) {
    gguf_buf_u32(&b->buf, v);
}
static void put_u64(Builder *b, uint64_t v) {
    gguf_buf_u64(&b->buf, v);
}
static void put_str(Builder *b, const char *s) {
    gguf_buf_string(&b->buf, s, strlen(s));
}
static void key(Builder *b, const char *k, uint32_t type) {
    put_str(b, k);
    put_u32(b, type);
    b->n_kv++;
}
static void kv_string(Builder *b, const char *k, const char *v) {
    key(b, k, 8);
    put_str(b, v);
}
static void kv_u32(Builder *b, const char *k, uint32_t v) {
    key(b, k, 4);
    put_u32(b, v);
}
static void kv_strings(Builder *b, const char *k, const char *const *v, int n) {
    key(b, k, 9);
    put_u32(b, 8);
    put_u64(b, (uint64_t)n);
    for (int i = 0; i < n; i++) put_str(b, v[i]);
}
static void kv_floats(Builder *b, const char *k, int n) {
    key(b, k, 9);
    put_u32(b, 6);
    put_u64(b, (uint64_t)n);
    for (int i = 0; i < n; i++) {
        float f = (float)-i;
        put(b, &f, 4);
    }
}
static void begin(Builder *b) {
    b->buf.n = 0;
    b->n_kv = 0;
    put_u32(b, 0x46554747u);
    put_u32(b, 3);
    put_u64(b, 0);
    put_u64(b, 0); /* n_kv, patched by finish */
}
static void finish(Builder *b) {
    memcpy(b->buf.p + 16, &b->n_kv, 8);
}

static const char *const small_vocab[] = {"a", "b", "ab", "<s>", "</s>"};

/* Loading must fail with a one-line message containing want. */
static void expect_load_error(Builder *b, const char *name, const char *want) {
    finish(b);
    Tokenizer t;
    char err[200] = "";
    int rc = tokenizer_create_gguf(&t, b->buf.p, b->buf.n, err, sizeof err);
    check(rc == -1 && strstr(err, want) && !strchr(err, '\n'), name, "rc %d, message \"%s\" (want \"%s\")",
          rc, err, want);
    if (rc == 0) tokenizer_destroy(&t);
}

static Builder builder;

static void check_hostile(void) {
    Builder *b = &builder;
    begin(b);
    kv_string(b, "tokenizer.ggml.model", "llama");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    kv_floats(b, "tokenizer.ggml.scores", 4);
    expect_load_error(b, "hostile: score count differs from token count",
                      "scores has 4 entries for 5 tokens");

    begin(b);
    kv_string(b, "tokenizer.ggml.model", "gpt2");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    const char *const merges[] = {"a b", "a zz"};
    kv_strings(b, "tokenizer.ggml.merges", merges, 2);
    expect_load_error(b, "hostile: merge names an unknown token",
                      "merge 1 ('a zz') names a token that is not in the vocabulary");
    /* Past the first batch of merges resolved together: the index is still right. */
    begin(b);
    kv_string(b, "tokenizer.ggml.model", "gpt2");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    const char *many_merges[40];
    for (int i = 0; i < 40; i++) many_merges[i] = i == 37 ? "b zz" : "a b";
    kv_strings(b, "tokenizer.ggml.merges", many_merges, 40);
    expect_load_error(b, "hostile: unknown token in merge 37 (third batch)",
                      "merge 37 ('b zz') names a token");

    begin(b);
    kv_string(b, "tokenizer.ggml.model", "gpt2");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    const char *const bad_merge[] = {"ab"};
    kv_strings(b, "tokenizer.ggml.merges", bad_merge, 1);
    expect_load_error(b, "hostile: merge without a space", "merge 0 is not two tokens");

    begin(b);
    kv_string(b, "tokenizer.ggml.model", "gpt2");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    expect_load_error(b, "hostile: gpt2 without merges", "needs tokenizer.ggml.merges");

    static char huge[100001];
    memset(huge, 'x', sizeof huge - 1);
    const char *const huge_vocab[] = {"a", huge};
    begin(b);
    kv_string(b, "tokenizer.ggml.model", "llama");
    kv_strings(b, "tokenizer.ggml.tokens", huge_vocab, 2);
    expect_load_error(b, "hostile: 100000-byte token", "token 1 is 100000 bytes long");

    begin(b);
    kv_string(b, "tokenizer.ggml.model", "bert");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    expect_load_error(b, "hostile: unsupported model", "'bert' is not supported");

    begin(b);
    kv_string(b, "tokenizer.ggml.model", "llama");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    kv_u32(b, "tokenizer.ggml.bos_token_id", 99);
    expect_load_error(b, "hostile: bos id outside the vocabulary", "bos_token_id = 99 is outside");

    begin(b);
    kv_string(b, "tokenizer.ggml.model", "gpt2");
    kv_string(b, "tokenizer.ggml.pre", "no-such-pre");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    kv_strings(b, "tokenizer.ggml.merges", merges, 1);
    finish(b);
    {
        /* Not refused: the closest family, and a warning the caller prints. */
        Tokenizer t;
        char err[200] = "";
        int rc = tokenizer_create_gguf(&t, b->buf.p, b->buf.n, err, sizeof err);
        check(rc == 0 && strstr(t.warning, "unknown pre-tokenizer 'no-such-pre'") && !strchr(t.warning, '\n'),
              "unknown pre-tokenizer: loads, with a one-line warning", "rc %d \"%s\" warning \"%s\"", rc, err,
              rc == 0 ? t.warning : "");
        if (rc == 0) tokenizer_destroy(&t);
    }

    begin(b);
    kv_string(b, "tokenizer.ggml.model", "llama");
    expect_load_error(b, "hostile: no token list", "tokenizer.ggml.tokens is missing");

    /* A small valid BPE vocabulary loads, merges and decodes. */
    begin(b);
    kv_string(b, "tokenizer.ggml.model", "gpt2");
    kv_strings(b, "tokenizer.ggml.tokens", small_vocab, 5);
    kv_strings(b, "tokenizer.ggml.merges", merges, 1);
    finish(b);
    Tokenizer t;
    char err[200] = "";
    int rc = tokenizer_create_gguf(&t, b->buf.p, b->buf.n, err, sizeof err);
    int ids[16], n = rc == 0 ? encode(&t, "abba", 4, 0, ids, 16) : -1;
    check(n == 3 && ids[0] == 2 && ids[1] == 1 && ids[2] == 0, "crafted gpt2 vocab: \"abba\" -> ab b a",
          "rc %d n %d %s", rc, n, err);
    if (rc == 0) tokenizer_destroy(&t);
}

/* Truncated real files and special-token parsing on the qwen2 vocabulary. */
static void check_qwen2_extras(void) {
    size_t size;
    void *data = read_model_file("gguf-arch/qwen2-F32.gguf", "", &size);
    if (!data) return;
    Tokenizer t;
    char err[200] = "";
    int rc = tokenizer_create_gguf(&t, data, 4000, err, sizeof err);
    check(rc == -1 && err[0] && !strchr(err, '\n'), "truncated GGUF: one-line error", "rc %d \"%s\"", rc,
          err);
    rc = tokenizer_create_gguf(&t, data, size, err, sizeof err);
    free(data);
    if (rc != 0) return;
    const char *text = "<|im_start|>user\nhi<|im_end|>";
    int ids[64];
    int n = encode(&t, text, strlen(text), TOKENIZE_PARSE_SPECIAL, ids, 64);
    check(n >= 3 && ids[0] == 510 && ids[n - 1] == 511,
          "parse_special: <|im_start|> -> 510, <|im_end|> -> 511", "n %d first %d", n, n > 0 ? ids[0] : -1);
    n = encode(&t, text, strlen(text), 0, ids, 64);
    int found = 0;
    for (int i = 0; i < n; i++) found |= ids[i] >= 509;
    check(n > 3 && !found, "plain text never yields special tokens", "n %d", n);
    size_t len;
    tokenizer_decode(&t, 0, 510, &len);
    check(len == 0, "control tokens decode to nothing", "len %zu", len);
    n = tokenizer_encode(&t, "hi", 1, 1, ids, 64, err, sizeof err);
    check(n >= 2 && ids[0] != 509 && ids[n - 1] == 509,
          "tokenizer_encode: add_bos_token=false respected, eos appended", "n %d", n);
    char line[256];
    n = tokenizer_format_ids(&t, "hi", 2, line, sizeof line, err, sizeof err);
    check(n > 0 && line[0] == ' ' && line[strlen(line) - 1] == '\n', "tokenizer_format_ids: \" id...\\n\"",
          "\"%s\"", line);
    tokenizer_destroy(&t);
}

int main(void) {
    snprintf(models_dir, sizeof models_dir, "%s", models_dir_from_env());
    int found = 0;
    for (size_t i = 0; i < sizeof vocabs / sizeof vocabs[0]; i++) found += check_vocab(&vocabs[i]);
    if (!found) {
        printf("SKIP: no vocabularies under %s (set MODELS_DIR)\n", models_dir);
        return 77;
    }
    check(found == (int)(sizeof vocabs / sizeof vocabs[0]), "all vocabularies present", "%d found", found);
    check_hostile();
    check_qwen2_extras();
    return failures ? 1 : 0;
}
