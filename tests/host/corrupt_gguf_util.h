/* corrupt_gguf_util.h - shared by the corrupted-GGUF suites
 * (test_corrupt_gguf.c: truncations, header/metadata/tensor-info fields,
 * llmrun; test_corrupt_gguf_meta.c: rebuilt files with model metadata and
 * vocabularies changed). Each case names the loaders that must refuse it;
 * a loader that may accept it must then work. */
#ifndef TESTS_HOST_CORRUPT_GGUF_UTIL_H
#define TESTS_HOST_CORRUPT_GGUF_UTIL_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llm/format/gguf.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/model/model.h"
#include "tests/host/gguf_layout.h"
#include "tests/host/llm_test_util.h"

enum { MODEL = 1, TOK = 2, BOTH = 3, NEITHER = 0 };

static int cases_run, group_failures, group_cases, group_bad;

static __attribute__((unused)) void report(const char *group, const char *what, const char *loader,
                                           const char *why, const char *err) {
    if (!why) return;
    if (group_failures++ < 20)
        printf("FAIL - %s: %s: %s %s (reason: '%.120s')\n", group, what, loader, why, err);
    group_bad++;
}

/* A tokenizer that loaded must encode (specials parsed) and decode. */
static __attribute__((unused)) const char *exercise_tokenizer(const Tokenizer *t) {
    static const char text[] =
        "Once upon a time <|im_start|>user\n h\xC3\xA9llo  world 12345 <s></s> \xF0\x9F\x98\x80!";
    int ids[256];
    char err[256];
    int n = tokenizer_encode_ex(t, text, sizeof text - 1, TOKENIZE_ADD_BOS | TOKENIZE_PARSE_SPECIAL, ids, 256,
                                err, sizeof err);
    if (n < 0) return "encoding failed";
    for (int i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->vocab_size) return "encoded an id outside the vocabulary";
        size_t len;
        const char *piece = tokenizer_decode(t, i ? ids[i - 1] : -1, ids[i], &len);
        if (!piece) return "decode returned NULL";
        volatile char sink = len ? piece[len - 1] : 0;
        (void)sink;
    }
    return NULL;
}

/* Runs both loaders on an exact-size heap copy; `must` says which ones have to refuse. */
static __attribute__((unused)) void run_case(const char *group, const char *what, const uint8_t *bytes,
                                             size_t size, int must) {
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, bytes, size);
    char err[256];
    cases_run++;
    group_cases++;

    memset(err, 0x55, sizeof err);
    Model t;
    int rc = model_create(&t, copy, size, NULL, err, sizeof err);
    if (rc == 0) {
        model_destroy(&t);
        if (must & MODEL) report(group, what, "model_create", "accepted", "");
    } else {
        report(group, what, "model_create", bad_reason(rc, err, sizeof err), err);
    }

    memset(err, 0x55, sizeof err);
    Tokenizer tok;
    rc = tokenizer_create_gguf(&tok, copy, size, err, sizeof err);
    if (rc == 0) {
        report(group, what, "tokenizer", (must & TOK) ? "accepted" : exercise_tokenizer(&tok), "");
        tokenizer_destroy(&tok);
    } else {
        report(group, what, "tokenizer_create_gguf", bad_reason(rc, err, sizeof err), err);
    }
    free(copy);
}

static __attribute__((unused)) void group_begin(void) {
    group_failures = group_cases = group_bad = 0;
}

static __attribute__((unused)) void group_end(const char *group) {
    if (group_bad == 0)
        printf("ok - %s (%d cases)\n", group, group_cases);
    else
        printf("FAIL - %s: %d of %d cases not handled cleanly\n", group, group_bad, group_cases);
    failures += group_bad;
}

/* The shared GGUF models the suites run on. */
static const char *const corrupt_gguf_models[] = {"stories260K.gguf", "gguf-arch/qwen3-tied-Q8_0.gguf",
                                                  "gguf-tests/synthA-Q4_K.gguf", "llama-2-tiny-random.gguf"};

/* Reads a model's layout; checks that the intact file loads (model and
 * vocabulary) and that a rebuild without edits is byte-identical. */
static __attribute__((unused)) int corrupt_gguf_open(GgufLayout *L, const char *name) {
    char err[256];
    if (gguf_layout_read(L, models_path(name), err, sizeof err) != 0) {
        check(0, name, "%s", err);
        return -1;
    }
    Model t;
    Tokenizer tok;
    int rc = model_create(&t, L->data, L->size, NULL, err, sizeof err);
    check(rc == 0, name, "the intact file does not load: %s", err);
    if (rc == 0) model_destroy(&t);
    rc = tokenizer_create_gguf(&tok, L->data, L->size, err, sizeof err);
    check(rc == 0, name, "the intact vocabulary does not load: %s", err);
    if (rc == 0) tokenizer_destroy(&tok);
    size_t size;
    uint8_t *same = gguf_layout_rebuild(L, NULL, 0, &size);
    char label[160];
    snprintf(label, sizeof label, "%s: rebuilt unchanged", name);
    check(same && size == L->size && memcmp(same, L->data, size) == 0, label, "the rebuild differs");
    free(same);
    return 0;
}

/* Rebuilds with edits, runs the case, frees. */
static __attribute__((unused)) void edit_case(const char *group, const GgufLayout *L, const char *what,
                                              const GgufEdit *edits, int n, int must) {
    size_t size;
    uint8_t *file = gguf_layout_rebuild(L, edits, n, &size);
    if (!file) {
        report(group, what, "test", "could not rebuild the file", "");
        group_cases++;
        return;
    }
    run_case(group, what, file, size, must);
    free(file);
}

static __attribute__((unused)) int corrupt_gguf_finish(const char *suite) {
    if (failures)
        printf("FAIL - %s: %d failures in %d cases\n", suite, failures, cases_run);
    else
        printf("ok - %s cases run: %d\n", suite, cases_run);
    return failures ? 1 : 0;
}

#endif
