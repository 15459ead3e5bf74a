/* test_gguf_parse.c - the GGUF reader: every shipped GGUF file parses with
 * the expected metadata; hostile inputs (truncation at every point of the
 * header, bad magic/version, too many dims, offsets past the end or
 * misaligned, element-count overflow, huge string lengths, unknown value
 * types) fail with a one-line error and no sanitizer report. */
#include <string.h>

#include "llm/tensor/ggml_types.h"
#include "llm/format/gguf.h"
#include "llm/model/model.h"
#include "tests/host/llm_test_util.h"

static const char *models_dir;

static void *load(const char *rel, size_t *size) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", models_dir, rel);
    return read_file(path, size);
}

static int one_line(const char *err) {
    return err[0] && !strchr(err, '\n');
}

static void test_all_files(void) {
    static const char *const files[] = {"gguf-tests/synthA-F32.gguf",
                                        "gguf-tests/synthA-F16.gguf",
                                        "gguf-tests/synthA-BF16.gguf",
                                        "gguf-tests/synthA-Q8_0.gguf",
                                        "gguf-tests/synthA-Q4_0.gguf",
                                        "gguf-tests/synthA-Q4_1.gguf",
                                        "gguf-tests/synthA-Q5_0.gguf",
                                        "gguf-tests/synthA-Q5_1.gguf",
                                        "gguf-tests/synthA-Q2_K.gguf",
                                        "gguf-tests/synthA-Q3_K.gguf",
                                        "gguf-tests/synthA-Q4_K.gguf",
                                        "gguf-tests/synthA-Q5_K.gguf",
                                        "gguf-tests/synthA-Q6_K.gguf",
                                        "gguf-tests/synthA-Q4_K_M.gguf",
                                        "gguf-tests/synthA-Q5_K_M.gguf",
                                        "gguf-arch/qwen2-F32.gguf",
                                        "gguf-arch/qwen2-Q4_K.gguf",
                                        "gguf-arch/qwen3-tied-Q8_0.gguf",
                                        "gguf-arch/qwen3-untied-F32.gguf",
                                        "vocab/ggml-vocab-llama-spm.gguf",
                                        "vocab/ggml-vocab-gpt-2.gguf",
                                        "vocab/ggml-vocab-falcon.gguf",
                                        "vocab/ggml-vocab-phi-3.gguf",
                                        "vocab/ggml-vocab-starcoder.gguf",
                                        "vocab/ggml-vocab-deepseek-coder.gguf",
                                        "stories260K.gguf",
                                        "tinyllamas-stories-260k-q8_0.gguf",
                                        "llama-2-tiny-random.gguf"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        size_t size;
        void *data = load(files[i], &size);
        GgufFile f;
        char err[256] = "", name[256];
        snprintf(name, sizeof name, "parse %s", files[i]);
        int rc = data ? gguf_create(&f, data, size, err, sizeof err) : -1;
        check(rc == 0, name, "%s", data ? err : "missing");
        if (rc == 0) {
            GgufString arch;
            snprintf(name, sizeof name, "%s has general.architecture", files[i]);
            check(gguf_get_string(&f, "general.architecture", &arch) == 0 && arch.len > 0, name, "absent");
            /* Walk every string array to the end (tokenizer vocabularies). */
            GgufArray tokens;
            if (gguf_get_array(&f, "tokenizer.ggml.tokens", &tokens) == 0) {
                GgufArrayIter it;
                GgufString s;
                uint64_t count = 0;
                gguf_array_iter_init(&it, &tokens);
                while (gguf_array_iter_next_string(&it, &s)) count++;
                snprintf(name, sizeof name, "%s token strings walk to the end", files[i]);
                check(count == tokens.count && it.next == tokens.end, name, "%llu of %llu",
                      (unsigned long long)count, (unsigned long long)tokens.count);
            }
            gguf_destroy(&f);
        }
        free(data);
    }
}

static void test_metadata_values(void) {
    size_t size;
    void *data = load("gguf-tests/synthA-Q4_K_M.gguf", &size);
    GgufFile f;
    char err[256] = "";
    if (!data || gguf_create(&f, data, size, err, sizeof err) != 0) {
        check(0, "synthA-Q4_K_M metadata", "cannot open: %s", err);
        free(data);
        return;
    }
    uint32_t v32 = 0, heads = 0, kv = 0, ft = 0;
    float eps = 0;
    GgufString arch;
    check(f.version == 3 || f.version == 2, "synthA version", "version %u", f.version);
    check(gguf_get_string(&f, "general.architecture", &arch) == 0 && gguf_string_eq(arch, "llama"),
          "synthA architecture is llama", "wrong");
    check(gguf_get_u32(&f, "llama.embedding_length", &v32) == 0 && v32 == 256, "llama.embedding_length 256",
          "got %u", v32);
    check(gguf_get_u32(&f, "llama.attention.head_count", &heads) == 0 && heads == 8 &&
              gguf_get_u32(&f, "llama.attention.head_count_kv", &kv) == 0 && kv == 4,
          "head counts 8/4", "got %u/%u", heads, kv);
    check(gguf_get_u32(&f, "general.file_type", &ft) == 0 && ft == 15, "general.file_type 15 (Q4_K_M)",
          "got %u", ft);
    check(gguf_get_f32(&f, "llama.attention.layer_norm_rms_epsilon", &eps) == 0 && eps > 0 && eps < 1e-3f,
          "rms epsilon present", "got %g", eps);
    check(gguf_get_u32(&f, "no.such.key", &v32) == -1 &&
              gguf_get_string(&f, "llama.embedding_length", &arch) == -1,
          "absent key and wrong type give -1", "accepted");
    const GgufTensorInfo *t = gguf_find_tensor(&f, "output.weight");
    check(t && t->type == GGML_TYPE_Q6_K && t->n_dims == 2 && t->ne[0] == 256 && t->ne[1] == 512 &&
              (const uint8_t *)t->data + t->n_bytes <= (const uint8_t *)data + size &&
              ((const uint8_t *)t->data - (const uint8_t *)data) % f.alignment == 0,
          "output.weight is Q6_K [256, 512], aligned, inside the file", "unexpected");
    t = gguf_find_tensor(&f, "blk.0.attn_q.weight");
    check(t && t->type == GGML_TYPE_Q4_K && t->n_bytes == 256 / 256 * 144 * 256,
          "blk.0.attn_q.weight is Q4_K", "unexpected");
    GgufArray toks;
    GgufString s;
    check(gguf_get_array(&f, "tokenizer.ggml.tokens", &toks) == 0 && toks.count == 512 &&
              gguf_array_string(&toks, 511, &s) == 0 && gguf_array_string(&toks, 512, &s) == -1,
          "tokenizer.ggml.tokens: 512 strings, index checked", "unexpected");
    gguf_destroy(&f);
    free(data);
}

/* A small hand-made file: header, kv pairs, one tensor. */
typedef struct {
    uint8_t b[4096];
    size_t n;
} Buf;

static void put(Buf *w, const void *p, size_t n) {
    memcpy(w->b + w->n, p, n);
    w->n += n;
}
static void put32(Buf *w, uint32_t v) {
    put(w, &v, 4);
}
static void put64(Buf *w, uint64_t v) {
    put(w, &v, 8);
}
static void putstr(Buf *w, const char *s) {
    put64(w, strlen(s));
    put(w, s, strlen(s));
}

/* Options for the synthetic file's faults. */
typedef struct {
    uint32_t version, n_dims, type, kv_type;
    uint64_t ne0, offset, str_len, arr_count;
} Shape;

static size_t make_file(Buf *w, Shape s) {
    w->n = 0;
    put32(w, GGUF_MAGIC);
    put32(w, s.version);
    put64(w, 1); /* tensors */
    put64(w, 3); /* kv */
    putstr(w, "general.architecture");
    put32(w, s.kv_type);
    put64(w, s.str_len);
    put(w, "llama", 5);
    putstr(w, "tokenizer.ggml.tokens");
    put32(w, GGUF_TYPE_ARRAY);
    put32(w, GGUF_TYPE_STRING);
    put64(w, s.arr_count);
    putstr(w, "a");
    putstr(w, "bc");
    putstr(w, "nested");
    put32(w, GGUF_TYPE_ARRAY);
    put32(w, GGUF_TYPE_ARRAY);
    put64(w, 2);
    put32(w, GGUF_TYPE_INT32), put64(w, 2), put32(w, 7), put32(w, (uint32_t)-3);
    put32(w, GGUF_TYPE_STRING), put64(w, 1), putstr(w, "x");
    putstr(w, "t");
    put32(w, s.n_dims);
    for (uint32_t d = 0; d < s.n_dims && d < 8; d++) put64(w, d == 0 ? s.ne0 : 2);
    put32(w, s.type);
    put64(w, s.offset);
    while (w->n % 32) w->b[w->n++] = 0;
    size_t data_bytes = 64 * 2 * 4;
    memset(w->b + w->n, 0, data_bytes);
    w->n += data_bytes;
    return w->n;
}

static Shape good(void) {
    Shape s = {3, 2, GGML_TYPE_F32, GGUF_TYPE_STRING, 64, 0, 5, 2};
    return s;
}

static void expect_fail(const char *name, Shape s) {
    static Buf w;
    make_file(&w, s);
    GgufFile f;
    char err[256] = "";
    int rc = gguf_create(&f, w.b, w.n, err, sizeof err);
    check(rc == -1 && one_line(err), name, "rc %d err '%s'", rc, err);
    if (rc == 0) gguf_destroy(&f);
}

static void test_hostile(void) {
    static Buf w;
    GgufFile f;
    char err[256] = "";
    make_file(&w, good());
    int rc = gguf_create(&f, w.b, w.n, err, sizeof err);
    check(rc == 0, "synthetic file parses", "%s", err);
    if (rc == 0) {
        GgufArray nested, inner;
        int32_t v;
        GgufString s;
        check(gguf_get_array(&f, "nested", &nested) == 0 && nested.count == 2 &&
                  gguf_array_array(&nested, 0, &inner) == 0 && gguf_array_i32(&inner, 1, &v) == 0 &&
                  v == -3 && gguf_array_array(&nested, 1, &inner) == 0 &&
                  gguf_array_string(&inner, 0, &s) == 0 && gguf_string_eq(s, "x"),
              "nested arrays read back", "wrong");
        check(f.n_tensors == 1 && f.tensors[0].ne[0] == 64 && f.tensors[0].n_bytes == 512, "tensor info read",
              "wrong");
        gguf_destroy(&f);
    }
    /* Truncated at every byte of the header and metadata. */
    size_t header_end = w.n - 512;
    int all_ok = 1;
    char first_bad[256] = "";
    for (size_t cut = 0; cut < header_end; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, w.b, cut);
        err[0] = 0;
        rc = gguf_create(&f, copy, cut, err, sizeof err);
        if (rc != -1 || !one_line(err)) {
            all_ok = 0;
            snprintf(first_bad, sizeof first_bad, "cut %zu rc %d '%s'", cut, rc, err);
        }
        if (rc == 0) gguf_destroy(&f);
        free(copy);
    }
    check(all_ok, "truncated at every header byte: one-line error", "%s", first_bad);
    Shape s = good();
    uint8_t bad_magic[64];
    memcpy(bad_magic, w.b, 64);
    bad_magic[0] = 'X';
    check(gguf_create(&f, bad_magic, 64, err, sizeof err) == -1 && strstr(err, "magic"), "bad magic rejected",
          "%s", err);
    s.version = 1;
    expect_fail("version 1 rejected", s);
    s = good(), s.version = 4;
    expect_fail("version 4 rejected", s);
    s = good(), s.n_dims = 5;
    expect_fail("n_dims 5 rejected", s);
    s = good(), s.n_dims = 0;
    expect_fail("n_dims 0 rejected", s);
    s = good(), s.offset = 1u << 20;
    expect_fail("tensor offset past the end rejected", s);
    s = good(), s.offset = 8;
    expect_fail("misaligned tensor offset rejected", s);
    s = good(), s.ne0 = (uint64_t)1 << 62;
    expect_fail("element count overflow rejected", s);
    s = good(), s.ne0 = 65;
    expect_fail("data larger than the file rejected", s);
    s = good(), s.type = GGML_TYPE_Q4_0, s.ne0 = 33;
    expect_fail("partial quant block rejected", s);
    s = good(), s.str_len = (uint64_t)1 << 62;
    expect_fail("huge string length rejected", s);
    s = good(), s.str_len = (uint64_t)-1;
    expect_fail("string length 2^64-1 rejected", s);
    s = good(), s.arr_count = (uint64_t)1 << 60;
    expect_fail("huge array count rejected", s);
    s = good(), s.kv_type = 13;
    expect_fail("unknown metadata value type rejected", s);
    /* Unknown tensor type: parses (size unknown), the model loader rejects it. */
    s = good(), s.type = 99;
    make_file(&w, s);
    rc = gguf_create(&f, w.b, w.n, err, sizeof err);
    check(rc == 0 && ggml_type_info(f.tensors[0].type) == NULL, "unknown tensor type parses, marked unknown",
          "%s", err);
    if (rc == 0) gguf_destroy(&f);
}

/* Random byte changes in the header and metadata of a real model: the
 * loader either rejects the file with one line or runs it; no crash. */
static void test_mutations(void) {
    size_t size;
    uint8_t *orig = load("stories260K.gguf", &size);
    GgufFile f;
    char err[256];
    if (!orig || gguf_create(&f, orig, size, err, sizeof err) != 0) {
        check(0, "mutated stories260K.gguf", "cannot open the original");
        free(orig);
        return;
    }
    size_t header = (size_t)f.data_offset;
    gguf_destroy(&f);
    uint8_t *copy = malloc(size);
    uint64_t state = 0x9e3779b97f4a7c15ull;
    int loaded = 0, rejected = 0, bad = 0;
    for (int trial = 0; trial < 300; trial++) {
        memcpy(copy, orig, size);
        for (int k = 0; k < 1 + trial % 4; k++) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            size_t at = (size_t)(state % header);
            copy[at] = (uint8_t)(state >> 32);
        }
        Model t;
        err[0] = 0;
        if (model_create(&t, copy, size, NULL, err, sizeof err) == 0) {
            loaded++;
            model_forward(&t, 1, 0);
            model_forward(&t, t.config.vocab_size - 1, 1);
            model_destroy(&t);
        } else {
            rejected++;
            bad += !one_line(err);
        }
    }
    check(bad == 0, "300 mutated stories260K.gguf headers: loaded or one-line error", "%d bad messages", bad);
    printf("# mutations: %d loaded, %d rejected\n", loaded, rejected);
    free(copy);
    free(orig);
}

int main(void) {
    models_dir = models_dir_from_env();
    size_t size;
    void *probe = load("gguf-tests/synthA-F32.gguf", &size);
    if (!probe) {
        printf("SKIP: GGUF test data missing in %s\n", models_dir);
        return 77;
    }
    free(probe);
    test_all_files();
    test_metadata_values();
    test_hostile();
    test_mutations();
    return failures ? 1 : 0;
}
