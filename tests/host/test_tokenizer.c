/* test_tokenizer.c - llama2.c tokenizer: reference encodings (REFERENCE_OUTPUTS.md
 * section 3, golden prompt ids, llama.cpp's llama-spm cases), decoding,
 * merge order against a naive llama2.c-style encoder, bad files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/tokenizer/tokenizer.h"
#include "tests/host/llm_test_util.h"

static void format_ids(char *out, size_t size, const int *ids, int n) {
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used + 12 < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%d", i ? " " : "", ids[i]);
}

/* Encodes and compares with expected ids; prints one line. */
static void check_encode(const Tokenizer *t, const char *name, const char *text, int bos, const int *expected,
                         int expected_n) {
    size_t cap = tokenizer_max_tokens(strlen(text));
    int *ids = malloc(cap * sizeof(int));
    char err[128];
    int n = tokenizer_encode(t, text, bos, 0, ids, cap, err, sizeof err);
    int ok = n == expected_n && memcmp(ids, expected, (size_t)n * sizeof(int)) == 0;
    char why[4096] = "";
    if (!ok) {
        char got[1800], want[1800];
        if (n < 0)
            snprintf(got, sizeof got, "error %s", err);
        else
            format_ids(got, sizeof got, ids, n);
        format_ids(want, sizeof want, expected, expected_n);
        snprintf(why, sizeof why, "got [%s] want [%s]", got, want);
    }
    check_plain(ok, name, why);
    free(ids);
}

static int parse_ids(const char *s, int *ids, int max) {
    int n = 0;
    char *end;
    for (;;) {
        long v = strtol(s, &end, 10);
        if (end == s || n == max) break;
        ids[n++] = (int)v;
        s = end;
    }
    return n;
}

static void test_reference_section3(const Tokenizer *t) {
    static const struct {
        const char *text;
        int ids[64];
        int n;
    } cases[] = {
        {"", {1}, 1},
        {"I believe the meaning of life is", {1, 306, 4658, 278, 6593, 310, 2834, 338}, 8},
        {"Simply put, the theory of relativity states that ",
         {1, 3439, 17632, 1925, 29892, 278, 6368, 310, 14215, 537, 5922, 393, 29871},
         13},
        {"A brief message congratulating the team on the launch:\n\n        Hi everyone,\n\n        I just ",
         {1,     319, 11473, 2643, 378,  629,   271,   18099, 278, 3815, 373, 278, 6826,
          29901, 13,  13,    4706, 6324, 14332, 29892, 13,    13,  4706, 306, 925, 29871},
         26},
        {"Translate English to French:\n\n        sea otter => loutre de mer\n        peppermint => menthe "
         "poivr\xc3\xa9"
         "e\n        plush girafe => girafe peluche\n        cheese =>",
         {1,    4103, 9632, 4223, 304,   5176,  29901, 13,   13,   4706, 7205, 4932, 357,
          1149, 301,  449,  276,  316,   2778,  13,    4706, 1236, 407,  837,  524,  1149,
          6042, 354,  772,  440,  29878, 1318,  13,    4706, 715,  1878, 330,  3055, 1725,
          1149, 330,  3055, 1725, 4639,  28754, 13,    4706, 923,  968,  1149},
         50},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "reference section 3 case %zu (with BOS)", i + 1);
        check_encode(t, name, cases[i].text, 1, cases[i].ids, cases[i].n);
    }
}

/* golden/NAME__prompt_ids.txt: lines of 'text' id id ... (BOS included). */
static void test_golden_prompt_ids(const Tokenizer *t, const char *dir, const char *file) {
    size_t size;
    char *data = read_file_in(dir, file, &size);
    if (!data) {
        check_plain(0, file, "cannot read");
        return;
    }
    int cases = 0;
    for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n")) {
        if (line[0] != '\'') continue;
        char *close = strchr(line + 1, '\'');
        if (!close) continue;
        *close = '\0';
        int ids[256];
        int n = parse_ids(close + 1, ids, 256);
        char name[160];
        snprintf(name, sizeof name, "%s '%s'", file, line + 1);
        check_encode(t, name, line + 1, 1, ids, n);
        cases++;
    }
    check_plain(cases == 4, "golden prompt file has 4 cases", "wrong case count");
    free(data);
}

/* llama.cpp's tokenizer cases: inputs split on "\n__ggml_vocab_test__\n" (the
 * file ends with a separator, giving a final empty case), one output line each. */
static void test_llama_spm_cases(const Tokenizer *t, const char *dir) {
    size_t inp_size, out_size;
    char *inp = read_file_in(dir, "vocab/ggml-vocab-llama-spm.gguf.inp", &inp_size);
    char *out = read_file_in(dir, "vocab/ggml-vocab-llama-spm.gguf.out", &out_size);
    if (!inp || !out) {
        check_plain(0, "llama-spm vocab cases", "cannot read .inp/.out");
        free(inp);
        free(out);
        return;
    }
    const char *sep = "\n__ggml_vocab_test__\n";
    char *in_cursor = inp, *out_cursor = out;
    int index = 0, passed = 0;
    for (;;) {
        char *in_end = strstr(in_cursor, sep);
        char *out_end = strchr(out_cursor, '\n');
        if (!out_end) out_end = out_cursor + strlen(out_cursor);
        int last = in_end == NULL;
        if (in_end) *in_end = '\0';
        char saved = *out_end;
        *out_end = '\0';
        int ids[1024];
        int n = parse_ids(out_cursor, ids, 1024);
        char name[64];
        snprintf(name, sizeof name, "llama-spm case %d", index);
        int before = failures;
        check_encode(t, name, in_cursor, 0, ids, n);
        if (failures == before) passed++;
        index++;
        if (last) break;
        in_cursor = in_end + strlen(sep);
        out_cursor = saved ? out_end + 1 : out_end;
    }
    char why[64];
    snprintf(why, sizeof why, "%d cases, %d passed", index, passed);
    check_plain(index == 47 && passed == 47, "llama-spm: all 47 cases", why);
    free(inp);
    free(out);
}

/* Raw pieces (no BOS stripping or safe-print) must spell " " + text exactly. */
static void test_raw_round_trip(const Tokenizer *t, const char *name, const char *text) {
    size_t cap = tokenizer_max_tokens(strlen(text));
    int *ids = malloc(cap * sizeof(int));
    int n = tokenizer_encode(t, text, 0, 0, ids, cap, NULL, 0);
    char *joined = malloc(strlen(text) * 8 + 8);
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        const char *piece = tokenizer_piece(t, ids[i]);
        unsigned value;
        if (strlen(piece) == 6 && sscanf(piece, "<0x%02X>", &value) == 1)
            joined[len++] = (char)value;
        else {
            memcpy(joined + len, piece, strlen(piece));
            len += strlen(piece);
        }
    }
    int ok = n >= 0 && (strlen(text) == 0 ? len == 0
                                          : (len == strlen(text) + 1 && joined[0] == ' ' &&
                                             memcmp(joined + 1, text, strlen(text)) == 0));
    check_plain(ok, name, "pieces do not spell the text");
    free(joined);
    free(ids);
}

/* run.c-style decode of encode(text, bos=1): ASCII text comes back exactly. */
static void test_decode_round_trip(const Tokenizer *t, const char *name, const char *text,
                                   const char *expected) {
    size_t cap = tokenizer_max_tokens(strlen(text));
    int *ids = malloc(cap * sizeof(int));
    int n = tokenizer_encode(t, text, 1, 0, ids, cap, NULL, 0);
    char out[4096];
    size_t used = 0;
    for (int i = 1; i < n; i++) {
        size_t len;
        const char *piece = tokenizer_decode(t, ids[i - 1], ids[i], &len);
        if (used + len < sizeof out) memcpy(out + used, piece, len), used += len;
    }
    out[used] = '\0';
    char why[4200];
    snprintf(why, sizeof why, "got '%s'", out);
    check_plain(strcmp(out, expected) == 0, name, why);
    free(ids);
}

static void test_decode_rules(const Tokenizer *t) {
    size_t len;
    const char *p = tokenizer_decode(t, 1, 15043, &len); /* " Hello" after BOS */
    check_plain(len == 5 && memcmp(p, "Hello", 5) == 0, "decode strips the space after BOS", "wrong piece");
    p = tokenizer_decode(t, 500, 15043, &len);
    check_plain(len == 6 && memcmp(p, " Hello", 6) == 0, "decode keeps the space elsewhere", "wrong piece");
    p = tokenizer_decode(t, 500, 13 + 0, &len); /* <0x0A> */
    check_plain(len == 1 && p[0] == '\n', "decode <0x0A> is a newline", "wrong piece");
    p = tokenizer_decode(t, 500, 0x41 + 3, &len);
    check_plain(len == 1 && p[0] == 'A', "decode <0x41> is 'A'", "wrong piece");
    p = tokenizer_decode(t, 500, 0x07 + 3, &len);
    check_plain(len == 0, "decode drops an unprintable byte (<0x07>)", "byte was kept");
    p = tokenizer_decode(t, 500, 0xF0 + 3, &len);
    check_plain(len == 0, "decode drops a lone high byte (<0xF0>) like safe_printf", "byte was kept");
    p = tokenizer_decode(t, 500, 99999, &len);
    check_plain(len == 0 && p != NULL, "decode of an out-of-range token is empty", "not empty");
    check_plain(tokenizer_lookup(t, " Hello", 6) == 15043, "lookup ' Hello'", "wrong id");
    check_plain(tokenizer_lookup(t, "no such piece!!", 15) == -1, "lookup of a missing piece is -1", "found");
}

/* ---- merge order against a naive llama2.c encoder on a synthetic vocabulary with many ties */

static void put_entry(unsigned char **p, float score, const char *s) {
    int32_t len = (int32_t)strlen(s);
    memcpy(*p, &score, 4);
    memcpy(*p + 4, &len, 4);
    memcpy(*p + 8, s, (size_t)len);
    *p += 8 + len;
}

static int naive_encode(const Tokenizer *t, const char *text, int *tokens) {
    int n = 0;
    if (*text) tokens[n++] = tokenizer_lookup(t, " ", 1);
    for (const char *c = text; *c; c++) tokens[n++] = tokenizer_lookup(t, c, 1);
    for (;;) {
        float best = -1e10f;
        int best_idx = -1, best_id = -1;
        for (int i = 0; i + 1 < n; i++) {
            char buf[256];
            snprintf(buf, sizeof buf, "%s%s", tokenizer_piece(t, tokens[i]),
                     tokenizer_piece(t, tokens[i + 1]));
            int id = tokenizer_lookup(t, buf, strlen(buf));
            if (id != -1 && t->scores[id] > best) best = t->scores[id], best_idx = i, best_id = id;
        }
        if (best_idx < 0) break;
        tokens[best_idx] = best_id;
        memmove(tokens + best_idx + 1, tokens + best_idx + 2, (size_t)(n - best_idx - 2) * sizeof(int));
        n--;
    }
    return n;
}

static void test_merge_order_synthetic(void) {
    const char *alphabet = "ab c";
    unsigned char *data = malloc(1 << 20), *p = data;
    int32_t max_len = 8;
    memcpy(p, &max_len, 4);
    p += 4;
    put_entry(&p, 0, "<unk>");
    put_entry(&p, 0, "<s>");
    put_entry(&p, 0, "</s>");
    for (int b = 0; b < 256; b++) {
        char piece[8];
        snprintf(piece, sizeof piece, "<0x%02X>", b);
        put_entry(&p, 0, piece);
    }
    int count = 259;
    /* Single characters, then every 2..4-character string over the alphabet, scores from a small set (ties).
     */
    for (const char *c = alphabet; *c; c++) {
        char s[2] = {*c, 0};
        put_entry(&p, -100, s), count++;
    }
    unsigned seed = 12345;
    for (int len = 2; len <= 4; len++) {
        int total = 1;
        for (int i = 0; i < len; i++) total *= 4;
        for (int k = 0; k < total; k++) {
            char s[8];
            int v = k;
            for (int i = 0; i < len; i++) s[i] = alphabet[v % 4], v /= 4;
            s[len] = 0;
            seed = seed * 1103515245u + 12345u;
            if ((seed >> 16) % 3 == 0) continue; /* leave gaps so merges must route around them */
            put_entry(&p, (float)((seed >> 8) % 4), s), count++;
        }
    }
    Tokenizer t;
    char err[128];
    int ok = tokenizer_create(&t, data, (size_t)(p - data), count, err, sizeof err) == 0;
    check_plain(ok, "synthetic tokenizer loads", err);
    if (!ok) {
        free(data);
        return;
    }
    int mismatches = 0;
    char first_bad[128] = "";
    for (int trial = 0; trial < 400; trial++) {
        char text[80];
        seed = seed * 1103515245u + 12345u;
        int len = (int)((seed >> 16) % 60);
        for (int i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            text[i] = alphabet[(seed >> 16) % 4];
        }
        text[len] = 0;
        int fast[200], slow[200];
        int nf = tokenizer_encode(&t, text, 0, 0, fast, 200, NULL, 0);
        int ns = naive_encode(&t, text, slow);
        if (nf != ns || memcmp(fast, slow, (size_t)ns * sizeof(int)) != 0) {
            if (!mismatches) snprintf(first_bad, sizeof first_bad, "text '%s'", text);
            mismatches++;
        }
    }
    check_plain(mismatches == 0, "merge order equals llama2.c's naive loop (400 random texts, tied scores)",
                first_bad);
    tokenizer_destroy(&t);
    free(data);
}

static void test_bad_files(const char *tok_data, size_t tok_size) {
    Tokenizer t;
    char err[128] = "";
    check_plain(tokenizer_create(&t, tok_data, 3, 32000, err, sizeof err) == -1 && err[0],
                "rejects a 3-byte file", err);
    err[0] = 0;
    check_plain(tokenizer_create(&t, tok_data, tok_size / 2, 32000, err, sizeof err) == -1 &&
                    strstr(err, "truncated"),
                "rejects a truncated file", err);
    err[0] = 0;
    check_plain(tokenizer_create(&t, tok_data, tok_size, 32001, err, sizeof err) == -1 && err[0],
                "rejects a vocab size larger than the file", err);
    unsigned char bad[4 + 8 + 4];
    int32_t max_len = 4, len = 1000;
    float score = 0;
    memcpy(bad, &max_len, 4);
    memcpy(bad + 4, &score, 4);
    memcpy(bad + 8, &len, 4);
    memcpy(bad + 12, "abcd", 4);
    err[0] = 0;
    check_plain(tokenizer_create(&t, bad, sizeof bad, 1, err, sizeof err) == -1 && strstr(err, "length"),
                "rejects a piece length past the end", err);
    len = -5;
    memcpy(bad + 8, &len, 4);
    err[0] = 0;
    check_plain(tokenizer_create(&t, bad, sizeof bad, 1, err, sizeof err) == -1 && err[0],
                "rejects a negative length", err);
    /* Inferred size: every entry of the buffer. */
    int ok = tokenizer_create(&t, tok_data, tok_size, 0, err, sizeof err) == 0 && t.vocab_size == 32000;
    check_plain(ok, "vocab size 0 counts the entries", err);
    if (ok) tokenizer_destroy(&t);
}

static void test_long_prompt_speed(const Tokenizer *t) {
    const char *sentence = "Once upon a time, there was a little girl named Lily who loved the sea. ";
    size_t n = 200;
    size_t slen = strlen(sentence);
    char *text = malloc(n * slen + 1);
    for (size_t i = 0; i < n; i++) memcpy(text + i * slen, sentence, slen);
    text[n * slen] = 0;
    size_t cap = tokenizer_max_tokens(n * slen);
    int *ids = malloc(cap * sizeof(int));
    clock_t start = clock();
    int count = tokenizer_encode(t, text, 1, 0, ids, cap, NULL, 0);
    double seconds = (double)(clock() - start) / CLOCKS_PER_SEC;
    char why[128];
    snprintf(why, sizeof why, "%d tokens in %.3f s", count, seconds);
    /* 14400 characters: the O(n^2) loop would take seconds under the sanitizers. */
    check_plain(count > 2000 && seconds < 2.0, "encodes a 14 KB prompt quickly", why);
    printf("# long prompt: %s\n", why);
    free(ids);
    free(text);
}

int main(void) {
    const char *dir = getenv("MODELS_DIR");
    if (!dir) dir = "../shared/models";
    size_t big_size, small_size;
    char *big = read_file_in(dir, "tokenizer.bin", &big_size);
    char *small = read_file_in(dir, "tok512.bin", &small_size);
    if (!big || !small) {
        printf("SKIP: tokenizer.bin / tok512.bin not found in %s (set MODELS_DIR)\n", dir);
        return 77;
    }
    Tokenizer t32k, t512;
    char err[128];
    if (tokenizer_create(&t32k, big, big_size, 32000, err, sizeof err) != 0 ||
        tokenizer_create(&t512, small, small_size, 512, err, sizeof err) != 0) {
        printf("FAIL - load tokenizers: %s\n", err);
        return 1;
    }
    check_plain(t32k.max_token_length == 27 && t512.max_token_length == 7, "header max_token_length",
                "wrong value");
    check_plain(t512.bytes_read == small_size && t32k.bytes_read == big_size, "the whole file is read",
                "bytes left over");

    test_reference_section3(&t32k);
    test_golden_prompt_ids(&t32k, dir, "golden/stories15M__prompt_ids.txt");
    test_golden_prompt_ids(&t512, dir, "golden/stories260K__prompt_ids.txt");
    test_llama_spm_cases(&t32k, dir);

    test_raw_round_trip(&t32k, "raw pieces spell the text (byte fallback, emoji)",
                        " this is \xf0\x9f\xa6\x99.cpp");
    test_raw_round_trip(&t32k, "raw pieces spell the text (CJK)",
                        "\xe7\x9a\x84\xe4\xb8\x80\xe6\x98\xaf\xe4\xb8\x8d x");
    test_raw_round_trip(&t512, "raw pieces spell the text (tok512, byte fallback)",
                        "Caf\xc3\xa9 \xe2\x82\xac 42!");
    test_raw_round_trip(&t512, "raw pieces of an empty text", "");
    test_decode_round_trip(&t32k, "decode(encode) = text (tokenizer.bin)", "Hello, world! It's 3:15\tnow.\n",
                           "Hello, world! It's 3:15\tnow.\n");
    test_decode_round_trip(&t512, "decode(encode) = text (tok512)", "The little dog ran to the park.",
                           "The little dog ran to the park.");
    test_decode_round_trip(&t32k, "decode keeps a leading space of the text", " lead", " lead");
    test_decode_round_trip(&t32k, "decode drops byte-fallback bytes like run.c", "a\xf0\x9f\xa6\x99z", "az");
    test_decode_rules(&t32k);

    {
        int ids[8];
        int n = tokenizer_encode(&t512, "hi", 1, 1, ids, 8, NULL, 0);
        check_plain(n >= 3 && ids[0] == 1 && ids[n - 1] == 2, "encode with BOS and EOS", "missing BOS/EOS");
        check_plain(tokenizer_encode(&t512, "hello", 1, 0, ids, 4, err, sizeof err) == -1,
                    "encode refuses a too-small token buffer", "accepted");
    }
    test_merge_order_synthetic();
    test_bad_files(big, big_size);
    test_long_prompt_speed(&t32k);

    tokenizer_destroy(&t32k);
    tokenizer_destroy(&t512);
    free(big);
    free(small);
    return failures ? 1 : 0;
}
