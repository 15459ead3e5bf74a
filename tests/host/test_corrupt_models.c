/* test_corrupt_models.c - the corrupted-model suite: the shared checkpoints
 * (v0, ak42 v1, ak42 v2 int8) and tok512.bin truncated at many cut points and
 * with header fields set to bad, huge and inconsistent values. Every case must
 * be refused (-1) with a non-empty one-line reason; the sanitizers catch any
 * out-of-bounds read on the way. Also drives build/host/llmrun with a few
 * corrupted files: exit status 1 with an "llmrun:" line, never a signal. */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "llm/format/checkpoint.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/model/model.h"
#include "tests/host/llm_test_util.h"

static int cases_run;
static int group_failures; /* FAIL lines printed in the current group */

static void report_case(const char *group, const char *what, const char *why, const char *err) {
    cases_run++;
    if (!why) return;
    if (group_failures++ < 20) printf("FAIL - %s: %s: %s (reason: '%.120s')\n", group, what, why, err);
    failures++;
}

/* Loads `size` bytes of `bytes` from an exact-size heap copy (so ASan sees
 * any overread); expects a refusal. */
static void expect_model_refused(const char *group, const char *what, const uint8_t *bytes, size_t size) {
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, bytes, size);
    char err[256];
    memset(err, 0x55, sizeof err);
    Model t;
    int rc = model_create(&t, copy, size, NULL, err, sizeof err);
    if (rc == 0) model_destroy(&t);
    report_case(group, what, bad_reason(rc, err, sizeof err), rc == 0 ? "" : err);
    free(copy);
}

static void expect_tokenizer_refused(const char *group, const char *what, const uint8_t *bytes, size_t size,
                                     int vocab_size) {
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, bytes, size);
    char err[256];
    memset(err, 0x55, sizeof err);
    Tokenizer t;
    int rc = tokenizer_create(&t, copy, size, vocab_size, err, sizeof err);
    if (rc == 0) tokenizer_destroy(&t);
    report_case(group, what, bad_reason(rc, err, sizeof err), rc == 0 ? "" : err);
    free(copy);
}

static void group_begin(void) {
    group_failures = 0;
}

static void group_end(const char *group, int start_cases, int start_failures) {
    int n = cases_run - start_cases, bad = failures - start_failures;
    if (bad == 0)
        printf("ok - %s (%d cases)\n", group, n);
    else
        printf("FAIL - %s: %d of %d cases not refused cleanly\n", group, bad, n);
}

/* Every 1/64 of the file plus cuts around the given header boundaries. */
static void truncations(const char *name, const uint8_t *data, size_t size, const size_t *bounds,
                        int n_bounds, int is_tokenizer, int vocab) {
    char group[160], what[64];
    snprintf(group, sizeof group, "%s: truncations", name);
    int c0 = cases_run, f0 = failures;
    group_begin();
    for (int k = 0; k < 64; k++) {
        size_t cut = size * (size_t)k / 64;
        snprintf(what, sizeof what, "cut at %zu (%d/64)", cut, k);
        if (is_tokenizer)
            expect_tokenizer_refused(group, what, data, cut, vocab);
        else
            expect_model_refused(group, what, data, cut);
    }
    for (int i = 0; i < n_bounds; i++) {
        for (int delta = -1; delta <= 1; delta++) {
            size_t cut = bounds[i] + (size_t)delta;
            if (bounds[i] == 0 && delta < 0) continue;
            if (cut >= size) continue;
            snprintf(what, sizeof what, "cut at %zu (header boundary %zu%+d)", cut, bounds[i], delta);
            if (is_tokenizer)
                expect_tokenizer_refused(group, what, data, cut, vocab);
            else
                expect_model_refused(group, what, data, cut);
        }
    }
    if (!is_tokenizer) {
        /* The last bytes missing, and extra bytes after the end. */
        for (size_t off = 1; off <= 4 && off < size; off++) {
            snprintf(what, sizeof what, "cut at size-%zu", off);
            expect_model_refused(group, what, data, size - off);
        }
        uint8_t *longer = calloc(size + 64, 1);
        memcpy(longer, data, size);
        for (size_t extra = 1; extra <= 64; extra *= 4) {
            snprintf(what, sizeof what, "%zu extra bytes", extra);
            expect_model_refused(group, what, longer, size + extra);
        }
        free(longer);
    }
    group_end(group, c0, f0);
}

static void set_i32(uint8_t *p, int32_t v) {
    memcpy(p, &v, 4);
}
static int32_t get_i32(const uint8_t *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return v;
}

static const char *const param_names[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                                           "n_kv_heads", "vocab_size", "seq_len"};
enum { P_DIM, P_HIDDEN, P_LAYERS, P_HEADS, P_KV_HEADS, P_VOCAB, P_SEQ };

/* Writes one header field, loads, restores. */
static void mutate_field(const char *group, uint8_t *data, size_t size, size_t offset, const char *field,
                         int32_t value) {
    char what[96];
    int32_t saved = get_i32(data + offset);
    set_i32(data + offset, value);
    snprintf(what, sizeof what, "%s = %d", field, (int)value);
    expect_model_refused(group, what, data, size);
    set_i32(data + offset, saved);
}

/* Sets several params at once (value 0 = leave as is). */
static void mutate_params(const char *group, uint8_t *data, size_t size, size_t params_at, const char *what,
                          const int32_t values[7]) {
    int32_t saved[7];
    for (int i = 0; i < 7; i++) {
        saved[i] = get_i32(data + params_at + 4 * i);
        if (values[i]) set_i32(data + params_at + 4 * i, values[i]);
    }
    expect_model_refused(group, what, data, size);
    for (int i = 0; i < 7; i++) set_i32(data + params_at + 4 * i, saved[i]);
}

static void header_fields(const char *name, uint8_t *data, size_t size) {
    char group[160];
    snprintf(group, sizeof group, "%s: header fields", name);
    int c0 = cases_run, f0 = failures;
    group_begin();
    int ak42 = (uint32_t)get_i32(data) == CHECKPOINT_MAGIC;
    int version = ak42 ? get_i32(data + 4) : 0;
    size_t params_at = ak42 ? 8 : 0;

    for (int f = 0; f < 7; f++) {
        size_t at = params_at + 4 * (size_t)f;
        int32_t orig = get_i32(data + at);
        /* Invalid anywhere. */
        const int32_t invalid[] = {0, -1, INT_MAX, INT_MIN, 1 << 30, -(1 << 30), (1 << 21) + 1};
        for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
            /* v0: a negative vocab_size means "separate classifier": -orig and -1 change the layout. */
            mutate_field(group, data, size, at, param_names[f], invalid[i]);
        }
        if (f == P_VOCAB && version == 0) mutate_field(group, data, size, at, "vocab_size", -orig);
        /* Valid in isolation but inconsistent with the file size. seq_len only
         * shapes a v0 file (its unused RoPE tables). */
        if (f == P_SEQ && version != 0) continue;
        const int32_t resized[] = {1, orig + 1, orig - 1, orig * 2, orig + 32};
        for (size_t i = 0; i < sizeof resized / sizeof resized[0]; i++)
            if (resized[i] > 0 && resized[i] != orig)
                mutate_field(group, data, size, at, param_names[f], resized[i]);
    }

    /* Inconsistent combinations. */
    int32_t dim = get_i32(data + params_at), heads = get_i32(data + params_at + 12);
#define COMBO(what, ...)                                                                                     \
    do {                                                                                                     \
        int32_t values[7] = {__VA_ARGS__};                                                                   \
        mutate_params(group, data, size, params_at, what, values);                                           \
    } while (0)
    COMBO("n_kv_heads > n_heads", [P_HEADS] = heads, [P_KV_HEADS] = heads * 2);
    COMBO("n_heads = 3 does not divide dim", [P_HEADS] = 3, [P_KV_HEADS] = 3);
    COMBO("n_heads = dim + 1", [P_HEADS] = dim + 1, [P_KV_HEADS] = 1);
    COMBO("odd head size", [P_HEADS] = dim, [P_KV_HEADS] = dim);
    COMBO("n_kv_heads = 3 does not divide n_heads", [P_HEADS] = 8, [P_KV_HEADS] = 3, [P_DIM] = 64);
    COMBO("all params at the limits", 1 << 16, 1 << 18, 1024, 1 << 15, 1 << 15, 1 << 20, 1 << 20);
    COMBO("sizes past 32 bits", 1 << 16, 1 << 18, 1024, 64, 64, 1 << 20, 1 << 20);
    COMBO("dim*dim*layers past 32 bits", 1 << 16, 16, 1024, 2, 2, 16, 16);
    COMBO("vocab*dim past 32 bits", 1 << 16, 16, 1, 2, 2, 1 << 20, 16);
    COMBO("kv cache past 32 bits", 1 << 14, 16, 1024, 2, 2, 16, 1 << 20);
    COMBO("seq_len past the limit", [P_SEQ] = (1 << 20) + 1);
    COMBO("everything INT_MAX", INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX, INT_MAX);
    COMBO("everything INT_MIN", INT_MIN, INT_MIN, INT_MIN, INT_MIN, INT_MIN, INT_MIN, INT_MIN);
    COMBO("everything -1", -1, -1, -1, -1, -1, -1, -1);
    COMBO("everything 1", 1, 1, 1, 1, 1, 1, 1);
    COMBO("everything 2", 2, 2, 2, 2, 2, 2, 2);
#undef COMBO

    /* Magic and version. */
    if (ak42) {
        uint8_t saved_magic = data[3];
        data[3] ^= 0x20; /* "ak42" -> not ak42: read as a v0 header with a huge dim */
        expect_model_refused(group, "magic corrupted", data, size);
        data[3] = saved_magic;
        const int32_t versions[] = {0, 3, -1, INT_MAX, INT_MIN, version == 1 ? 2 : 1};
        for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++)
            mutate_field(group, data, size, 4, "version", versions[i]);
        /* The shared-classifier flag changes the layout. */
        uint8_t flag = data[36];
        data[36] = !flag;
        expect_model_refused(group, "shared_classifier flipped", data, size);
        data[36] = flag;
        if (version == 2) {
            int32_t gs = get_i32(data + 37);
            const int32_t groups[] = {0, -1, INT_MAX, INT_MIN, 1 << 17, 3,      5,
                                      1, 2,  4,       gs * 2,  gs + 1,  1 << 16};
            for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++)
                if (groups[i] != gs) mutate_field(group, data, size, 37, "group_size", groups[i]);
        }
    } else {
        /* A v0 file given the ak42 magic: its hidden_dim is read as the version. */
        mutate_field(group, data, size, 0, "magic", (int32_t)CHECKPOINT_MAGIC);
    }

    /* The whole file one byte off alignment. */
    uint8_t *shifted = malloc(size + 1);
    memcpy(shifted + 1, data, size);
    char err[256];
    Model t;
    memset(err, 0x55, sizeof err);
    int rc = model_create(&t, shifted + 1, size, NULL, err, sizeof err);
    if (rc == 0) model_destroy(&t);
    report_case(group, "misaligned buffer", bad_reason(rc, err, sizeof err), err);
    free(shifted);
    group_end(group, c0, f0);
}

static void checkpoint_suite(const char *name) {
    size_t size;
    uint8_t *data = read_file(models_path(name), &size);
    if (!data) {
        check(0, name, "cannot read %s", models_path(name));
        return;
    }
    /* The intact file loads: the corruptions below are what fails. */
    Model t;
    char err[256];
    int rc = model_create(&t, data, size, NULL, err, sizeof err);
    check(rc == 0, name, "the intact file does not load: %s", err);
    if (rc == 0) model_destroy(&t);

    int ak42 = size >= 4 && (uint32_t)get_i32(data) == CHECKPOINT_MAGIC;
    size_t bounds_v0[] = {0, 4, 8, 12, 16, 20, 24, 28, 32};
    size_t bounds_ak42[] = {0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 37, 41, 255, 256, 260};
    if (ak42)
        truncations(name, data, size, bounds_ak42, sizeof bounds_ak42 / sizeof bounds_ak42[0], 0, 0);
    else
        truncations(name, data, size, bounds_v0, sizeof bounds_v0 / sizeof bounds_v0[0], 0, 0);
    header_fields(name, data, size);
    free(data);
}

static void tokenizer_suite(const char *name, int vocab) {
    size_t size;
    uint8_t *data = read_file(models_path(name), &size);
    if (!data) {
        check(0, name, "cannot read %s", models_path(name));
        return;
    }
    Tokenizer tok;
    char err[256];
    int rc = tokenizer_create(&tok, data, size, vocab, err, sizeof err);
    check(rc == 0, name, "the intact file does not load: %s", err);
    if (rc == 0) tokenizer_destroy(&tok);

    /* Entry boundaries of the first entries and the last one. */
    size_t bounds[16];
    int n_bounds = 0;
    size_t off = 4, last = 4;
    bounds[n_bounds++] = 0;
    bounds[n_bounds++] = 4;
    for (int i = 0; i < vocab && off + 8 <= size; i++) {
        last = off;
        if (n_bounds < 12) {
            bounds[n_bounds++] = off + 4; /* inside the entry header */
            bounds[n_bounds++] = off + 8;
        }
        off += 8 + (size_t)get_i32(data + off + 4);
    }
    bounds[n_bounds++] = last + 4;
    bounds[n_bounds++] = last + 8;
    truncations(name, data, size, bounds, n_bounds, 1, vocab);

    char group[160], what[96];
    snprintf(group, sizeof group, "%s: header fields", name);
    int c0 = cases_run, f0 = failures;
    group_begin();
    const int32_t negative[] = {-1, INT_MIN, -(1 << 30)};
    for (size_t i = 0; i < 3; i++) {
        int32_t saved = get_i32(data);
        set_i32(data, negative[i]);
        snprintf(what, sizeof what, "max_token_length = %d", (int)negative[i]);
        expect_tokenizer_refused(group, what, data, size, vocab);
        set_i32(data, saved);
    }
    /* Entry lengths that run past the end or are negative, in a few entries. */
    size_t entry = 4;
    for (int i = 0; i < vocab && entry + 8 <= size; i++) {
        int32_t len = get_i32(data + entry + 4);
        if (i < 4 || i % 97 == 0 || i == vocab - 1) {
            const int32_t bad[] = {-1, INT_MIN, INT_MAX, (int32_t)size, (int32_t)(size - entry - 7), 1 << 30};
            for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
                set_i32(data + entry + 4, bad[b]);
                snprintf(what, sizeof what, "entry %d length = %d", i, (int)bad[b]);
                expect_tokenizer_refused(group, what, data, size, vocab);
            }
            set_i32(data + entry + 4, len);
        }
        entry += 8 + (size_t)len;
    }
    expect_tokenizer_refused(group, "more tokens asked for than the file holds", data, size, vocab + 1);
    expect_tokenizer_refused(group, "header only", data, 4, 0);
    expect_tokenizer_refused(group, "empty file", data, 0, 0);
    group_end(group, c0, f0);
    free(data);
}

/* ------------------------------------------------------------ llmrun */

static int write_temp(char *path, size_t path_size, const uint8_t *data, size_t size) {
    snprintf(path, path_size, "/tmp/corrupt_model_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return -1;
    int ok = write(fd, data, size) == (ssize_t)size;
    close(fd);
    return ok ? 0 : -1;
}

/* Runs llmrun on (model, tokenizer); expects exit status 1 and an "llmrun:" line. */
static void llmrun_case(const char *llmrun, const char *what, const char *model, const char *tokenizer) {
    char command[4096], name[128];
    snprintf(command, sizeof command, "'%s' '%s' -z '%s' -n 4 -t 0 -i 'Once' 2>&1", llmrun, model, tokenizer);
    snprintf(name, sizeof name, "llmrun refuses %s", what);
    check_llmrun_refuses(name, command);
    cases_run++;
}

static void llmrun_suite(void) {
    const char *llmrun = "build/host/llmrun";
    if (access(llmrun, X_OK) != 0) {
        check_skipped("llmrun refuses corrupted files", "build/host/llmrun not built (make host)");
        return;
    }
    size_t size, tok_size;
    uint8_t *data = read_file(models_path("stories260K.bin"), &size);
    uint8_t *tok = read_file(models_path("tok512.bin"), &tok_size);
    if (!data || !tok) {
        check(0, "llmrun suite", "cannot read the models");
        free(data);
        free(tok);
        return;
    }
    const char *good_tok = models_path("tok512.bin");
    char path[64];
    struct {
        const char *what;
        size_t cut;   /* 0 = whole file */
        size_t field; /* header offset to overwrite, or SIZE_MAX */
        int32_t value;
    } cases[] = {
        {"a truncated checkpoint", 0, SIZE_MAX, 0},
        {"dim = 0", 0, 0, 0},
        {"n_heads not dividing dim", 0, 12, 7},
        {"seq_len = INT_MAX", 0, 24, INT_MAX},
        {"an ak42 magic with a bad version", 0, 0, (int32_t)CHECKPOINT_MAGIC},
        {"a 10-byte checkpoint", 10, SIZE_MAX, 0},
    };
    cases[0].cut = size / 2;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = cases[i].cut ? cases[i].cut : size;
        uint8_t saved[4];
        if (cases[i].field != SIZE_MAX) {
            memcpy(saved, data + cases[i].field, 4);
            set_i32(data + cases[i].field, cases[i].value);
        }
        if (write_temp(path, sizeof path, data, n) == 0) {
            llmrun_case(llmrun, cases[i].what, path, good_tok);
            unlink(path);
        } else {
            check(0, cases[i].what, "cannot write a temporary file");
        }
        if (cases[i].field != SIZE_MAX) memcpy(data + cases[i].field, saved, 4);
    }
    /* A good model with a truncated tokenizer, and with a missing one. */
    if (write_temp(path, sizeof path, tok, tok_size / 3) == 0) {
        llmrun_case(llmrun, "a truncated tokenizer", models_path("stories260K.bin"), path);
        unlink(path);
    }
    llmrun_case(llmrun, "a missing tokenizer", models_path("stories260K.bin"), "/nonexistent/tok.bin");
    free(data);
    free(tok);
}

int main(void) {
    size_t probe_size;
    void *probe = read_file(models_path("stories260K.bin"), &probe_size);
    if (!probe) {
        printf("SKIP: %s not found (set MODELS_DIR)\n", models_path("stories260K.bin"));
        return 77;
    }
    free(probe);
    checkpoint_suite("stories260K.bin");
    checkpoint_suite("stories260K_v1.bin");
    checkpoint_suite("stories260K_q80.bin");
    tokenizer_suite("tok512.bin", 512);
    llmrun_suite();
    if (failures)
        printf("FAIL - corrupted-model suite: %d failures in %d cases\n", failures, cases_run);
    else
        printf("ok - corrupted-model cases run: %d\n", cases_run);
    return failures ? 1 : 0;
}
