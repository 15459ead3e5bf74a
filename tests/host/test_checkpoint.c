/* test_checkpoint - malformed llama2.c checkpoints are refused with a clear
 * one-line message (never a crash or sanitizer report): truncations,
 * zero/negative/huge dimensions, bad head counts, bad magic/version/group
 * size, trailing bytes and misaligned buffers. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/model/model.h"
#include "tests/host/llm_test_util.h"

/* Loading must fail with a message containing `expect`; nothing is left allocated
 * (LeakSanitizer would report it). */
static void expect_reject(const char *name, const void *data, size_t size, const char *expect) {
    Model t;
    char err[256] = "";
    int rc = model_create(&t, data, size, NULL, err, sizeof(err));
    if (rc == 0) {
        check(0, name, "loaded a bad checkpoint");
        model_destroy(&t);
        return;
    }
    printf("# %s -> %s\n", name, err);
    check(err[0] != '\0' && strchr(err, '\n') == NULL && strstr(err, expect) != NULL, name,
          "message '%s' does not mention '%s'", err, expect);
}

static void put_i32(uint8_t *p, int32_t v) {
    memcpy(p, &v, 4);
}

/* Copies the model, patches one int32 at byte offset `at`, expects a rejection. */
static void expect_reject_patched(const char *name, const uint8_t *model, size_t size, size_t at,
                                  int32_t value, const char *expect) {
    uint8_t *copy = malloc(size);
    memcpy(copy, model, size);
    put_i32(copy + at, value);
    expect_reject(name, copy, size, expect);
    free(copy);
}

static void test_legacy(const uint8_t *m, size_t size) {
    static const size_t cuts[] = {0, 1, 27, 28, 29, 1000, 131072, 1056540 / 2, 1056540 - 4, 1056540 - 1};
    char name[128];
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        if (cuts[i] >= size) continue;
        uint8_t *copy = malloc(cuts[i] ? cuts[i] : 1); /* exact-size buffer: ASan catches over-reads */
        memcpy(copy, m, cuts[i]);
        snprintf(name, sizeof(name), "v0 truncated to %zu bytes rejected", cuts[i]);
        expect_reject(name, copy, cuts[i], "truncated");
        free(copy);
    }
    expect_reject("NULL data rejected", NULL, 0, "checkpoint");

    struct {
        const char *name;
        int field;
        int32_t value;
        const char *expect;
    } patches[] = {
        {"dim 0", 0, 0, "dim"},
        {"dim negative", 0, -64, "dim"},
        {"dim huge", 0, 1 << 30, "dim"},
        {"hidden_dim 0", 1, 0, "hidden_dim"},
        {"hidden_dim huge", 1, 0x7fffffff, "hidden_dim"},
        {"n_layers 0", 2, 0, "n_layers"},
        {"n_layers huge", 2, 1 << 20, "n_layers"},
        {"n_heads 0", 3, 0, "n_heads"},
        {"n_heads not dividing dim", 3, 7, "does not divide dim"},
        {"n_heads giving odd head size", 3, 64, "odd"},
        {"n_kv_heads 0", 4, 0, "n_kv_heads"},
        {"n_kv_heads not dividing n_heads", 4, 3, "does not divide n_heads"},
        {"n_kv_heads > n_heads", 4, 16, "n_kv_heads"},
        {"vocab 0", 5, 0, "vocab_size"},
        {"vocab INT32_MIN", 5, INT32_MIN, "vocab_size"},
        {"vocab huge", 5, 1 << 30, "vocab_size"},
        {"seq_len 0", 6, 0, "seq_len"},
        {"seq_len negative", 6, -1, "seq_len"},
        {"seq_len huge", 6, 0x7fffffff, "seq_len"},
        {"larger shape than the file", 2, 6, "truncated"},
        {"negative vocab (separate classifier) missing wcls", 5, -512, "truncated"},
        {"smaller shape than the file", 2, 4, "size mismatch"},
    };
    for (size_t i = 0; i < sizeof(patches) / sizeof(patches[0]); i++) {
        snprintf(name, sizeof(name), "v0 %s rejected", patches[i].name);
        expect_reject_patched(name, m, size, 4 * patches[i].field, patches[i].value, patches[i].expect);
    }

    uint8_t *longer = calloc(size + 4, 1);
    memcpy(longer, m, size);
    expect_reject("v0 with trailing bytes rejected", longer, size + 4, "size mismatch");
    free(longer);

    /* Weights at an address that is not 4-byte aligned: refuse rather than copy. */
    uint8_t *shifted = malloc(size + 1);
    memcpy(shifted + 1, m, size);
    expect_reject("v0 at a misaligned address rejected", shifted + 1, size, "misaligned");
    free(shifted);
}

static void test_ak42(const uint8_t *m, size_t size, int version) {
    char name[128];
    static const size_t cuts[] = {8, 255, 256, 300, 4096, 200000};
    for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
        if (cuts[i] >= size) continue;
        uint8_t *copy = malloc(cuts[i]);
        memcpy(copy, m, cuts[i]);
        snprintf(name, sizeof(name), "v%d truncated to %zu bytes rejected", version, cuts[i]);
        expect_reject(name, copy, cuts[i], "truncated");
        free(copy);
    }
    snprintf(name, sizeof(name), "v%d truncated by one byte rejected", version);
    expect_reject(name, m, size - 1, "truncated");

    snprintf(name, sizeof(name), "v%d version 3 rejected", version);
    expect_reject_patched(name, m, size, 4, 3, "unsupported checkpoint version 3");
    snprintf(name, sizeof(name), "v%d version 0 rejected", version);
    expect_reject_patched(name, m, size, 4, 0, "unsupported checkpoint version 0");
    /* A different magic makes it look like a legacy file with absurd dims. */
    snprintf(name, sizeof(name), "v%d bad magic rejected", version);
    expect_reject_patched(name, m, size, 0, 0x616b3433, "bad checkpoint header");
    snprintf(name, sizeof(name), "v%d n_heads not dividing dim rejected", version);
    expect_reject_patched(name, m, size, 8 + 12, 6, "does not divide dim");
    snprintf(name, sizeof(name), "v%d dim negative rejected", version);
    expect_reject_patched(name, m, size, 8, -64, "dim");

    uint8_t *copy = malloc(size);
    memcpy(copy, m, size);
    copy[36] = 0; /* claims a separate classifier that is not there */
    snprintf(name, sizeof(name), "v%d missing separate classifier rejected", version);
    expect_reject(name, copy, size, "truncated");
    free(copy);

    if (version == 2) {
        expect_reject_patched("v2 group_size 0 rejected", m, size, 37, 0, "group_size");
        expect_reject_patched("v2 group_size negative rejected", m, size, 37, -32, "group_size");
        expect_reject_patched("v2 group_size not dividing tensors rejected", m, size, 37, 7, "group_size");
        expect_reject_patched("v2 group_size huge rejected", m, size, 37, 1 << 30, "group_size");
        expect_reject_patched("v2 group_size 64 (wrong size) rejected", m, size, 37, 64, "");
    }
}

int main(void) {
    const char *dir = models_dir_from_env();
    char path[1024];
    size_t size0 = 0, size1 = 0, size2 = 0;
    snprintf(path, sizeof(path), "%s/stories260K.bin", dir);
    uint8_t *v0 = read_file(path, &size0);
    snprintf(path, sizeof(path), "%s/stories260K_v1.bin", dir);
    uint8_t *v1 = read_file(path, &size1);
    snprintf(path, sizeof(path), "%s/stories260K_q80.bin", dir);
    uint8_t *v2 = read_file(path, &size2);
    if (!v0 || !v1 || !v2) {
        printf("SKIP: test data missing: stories260K{,_v1,_q80}.bin in %s (set MODELS_DIR)\n", dir);
        free(v0), free(v1), free(v2);
        return 77;
    }
    Model t;
    char err[256] = "";
    int rc = model_create(&t, v0, size0, NULL, err, sizeof(err));
    check(rc == 0, "unmodified stories260K.bin loads", "%s", err);
    if (rc == 0) model_destroy(&t);
    test_legacy(v0, size0);
    test_ak42(v1, size1, 1);
    test_ak42(v2, size2, 2);
    free(v0), free(v1), free(v2);
    return failures ? 1 : 0;
}
