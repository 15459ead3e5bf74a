/* test_corrupt_gguf_meta.c - the corrupted-GGUF suite, meaning: the four
 * shared GGUF models rebuilt with model metadata dropped, retyped or out of
 * range, and with vocabularies that disagree with the embedding, per-token
 * arrays of the wrong length or type, bad token types, special ids outside
 * the vocabulary and bad merges. Each case says which loader must refuse it
 * (see corrupt_gguf_util.h). */
#include "tests/host/corrupt_gguf_util.h"

/* ------------------------------------------------------------ rebuilt files */

static void drop(const char *group, const GgufLayout *L, const char *key, int must) {
    if (!gguf_layout_find(L, key)) return;
    char what[160];
    snprintf(what, sizeof what, "%s dropped", key);
    GgufEdit e = {key, GGUF_EDIT_DROP, 0, NULL, 0};
    edit_case(group, L, what, &e, 1, must);
}

static void set_u32(const char *group, const GgufLayout *L, const char *key, uint32_t value, int must) {
    char what[160];
    snprintf(what, sizeof what, "%s = %u", key, value);
    GgufEdit e = {key, GGUF_EDIT_SET, GGUF_TYPE_UINT32, &value, 4};
    edit_case(group, L, what, &e, 1, must);
}

static void set_i32(const char *group, const GgufLayout *L, const char *key, int32_t value, int must) {
    char what[160];
    snprintf(what, sizeof what, "%s = %d (i32)", key, value);
    GgufEdit e = {key, GGUF_EDIT_SET, GGUF_TYPE_INT32, &value, 4};
    edit_case(group, L, what, &e, 1, must);
}

static void set_f32(const char *group, const GgufLayout *L, const char *key, float value, int must) {
    char what[160];
    snprintf(what, sizeof what, "%s = %g", key, (double)value);
    GgufEdit e = {key, GGUF_EDIT_SET, GGUF_TYPE_FLOAT32, &value, 4};
    edit_case(group, L, what, &e, 1, must);
}

static void set_string(const char *group, const GgufLayout *L, const char *key, const char *value, int must) {
    char what[160];
    snprintf(what, sizeof what, "%s = '%.40s'", key, value);
    GgufBuf b = {0};
    gguf_buf_string(&b, value, strlen(value));
    GgufEdit e = {key, GGUF_EDIT_SET, GGUF_TYPE_STRING, b.p, b.n};
    edit_case(group, L, what, &e, 1, must);
    free(b.p);
}

/* A key's value replaced by another key's value (type and bytes). */
static void set_from(const char *group, const GgufLayout *L, const char *key, const char *source, int must) {
    const GgufKvSpan *src = gguf_layout_find(L, source);
    if (!src) return;
    char what[160];
    snprintf(what, sizeof what, "%s given the value of %s", key, source);
    GgufEdit e = {key, GGUF_EDIT_SET, src->type, L->data + src->value_at, src->value_end - src->value_at};
    edit_case(group, L, what, &e, 1, must);
}

static void set_array_strings(const char *group, const GgufLayout *L, const char *what, const char *key,
                              const char *const *items, int n, int must) {
    GgufBuf b = {0};
    gguf_buf_u32(&b, GGUF_TYPE_STRING);
    gguf_buf_u64(&b, (uint64_t)n);
    for (int i = 0; i < n; i++) gguf_buf_string(&b, items[i], strlen(items[i]));
    GgufEdit e = {key, GGUF_EDIT_SET, GGUF_TYPE_ARRAY, b.p, b.n};
    edit_case(group, L, what, &e, 1, must);
    free(b.p);
}

static void model_metadata(const char *name, const GgufLayout *L) {
    char group[160], key[128];
    snprintf(group, sizeof group, "%s: model metadata", name);
    group_begin();
    const char *a = L->arch;
    drop(group, L, "general.architecture", MODEL);
    set_string(group, L, "general.architecture", "gpt-neox", MODEL);
    set_string(group, L, "general.architecture", "", MODEL);
    set_u32(group, L, "general.architecture", 3, MODEL);
    set_u32(group, L, "general.alignment", 0, BOTH);
    set_u32(group, L, "general.alignment", 3, BOTH);
    set_u32(group, L, "general.alignment", 1u << 20, BOTH);
    set_string(group, L, "general.alignment", "32", BOTH);
    static const char *const required[] = {"embedding_length", "feed_forward_length", "block_count",
                                           "attention.head_count"};
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "%s.%s", a, required[i]);
        const GgufKvSpan *kv = gguf_layout_find(L, key);
        if (!kv) {
            check(0, group, "the intact file has no %s", key);
            continue;
        }
        uint32_t orig = kv->u32;
        drop(group, L, key, MODEL);
        const uint32_t bad[] = {0, orig + 1, orig * 2, 0xFFFFFFFFu, 1u << 25};
        for (size_t j = 0; j < 5; j++) set_u32(group, L, key, bad[j], MODEL);
        set_i32(group, L, key, -1, MODEL);
        set_string(group, L, key, "64", MODEL);
        set_f32(group, L, key, (float)orig, MODEL);
    }
    snprintf(key, sizeof key, "%s.attention.head_count", a);
    const GgufKvSpan *heads_kv = gguf_layout_find(L, key);
    uint32_t heads = heads_kv ? heads_kv->u32 : 1;
    snprintf(key, sizeof key, "%s.attention.head_count_kv", a);
    set_u32(group, L, key, heads + 1, MODEL);
    set_u32(group, L, key, 0, MODEL);
    if (heads % 3) set_u32(group, L, key, 3, MODEL);
    snprintf(key, sizeof key, "%s.context_length", a);
    set_u32(group, L, key, 0, MODEL);
    set_u32(group, L, key, 0xFFFFFFFFu, MODEL);
    set_string(group, L, key, "2048", MODEL);
    snprintf(key, sizeof key, "%s.attention.key_length", a);
    set_u32(group, L, key, 7, MODEL);
    set_u32(group, L, key, 4096, MODEL);
    snprintf(key, sizeof key, "%s.rope.dimension_count", a);
    set_u32(group, L, key, 3, MODEL);
    set_u32(group, L, key, 1u << 20, MODEL);
    snprintf(key, sizeof key, "%s.attention.layer_norm_rms_epsilon", a);
    set_f32(group, L, key, -1.0f, MODEL);
    set_f32(group, L, key, NAN, MODEL);
    set_f32(group, L, key, INFINITY, MODEL);
    snprintf(key, sizeof key, "%s.rope.freq_base", a);
    set_f32(group, L, key, 0.0f, MODEL);
    set_f32(group, L, key, NAN, MODEL);
    group_end(group);
}

static void vocabulary(const char *name, const GgufLayout *L) {
    char group[160];
    snprintf(group, sizeof group, "%s: vocabulary", name);
    group_begin();
    const GgufKvSpan *tokens = gguf_layout_find(L, "tokenizer.ggml.tokens");
    if (!tokens) {
        check(0, group, "the intact file has no tokenizer.ggml.tokens");
        return;
    }
    int vocab = (int)tokens->count;
    int spm = L->tokenizer_spm;
    int has_scores = gguf_layout_find(L, "tokenizer.ggml.scores") != NULL;
    int has_types = gguf_layout_find(L, "tokenizer.ggml.token_type") != NULL;
    int per_token = has_scores || has_types ? TOK : 0;

    /* Vocabularies that disagree with the embedding's rows. */
    for (int delta = -1; delta <= 1; delta += 2) {
        GgufBuf t = {0}, s = {0}, ty = {0};
        gguf_layout_resized_array(L, "tokenizer.ggml.tokens", delta, &t);
        GgufEdit all[3] = {{"tokenizer.ggml.tokens", GGUF_EDIT_SET, GGUF_TYPE_ARRAY, t.p, t.n}};
        int n = 1;
        char what[160];
        snprintf(what, sizeof what, "tokens %+d (per-token arrays unchanged)", delta);
        edit_case(group, L, what, all, 1, MODEL | per_token);
        if (has_scores && gguf_layout_resized_array(L, "tokenizer.ggml.scores", delta, &s) == 0)
            all[n++] = (GgufEdit){"tokenizer.ggml.scores", GGUF_EDIT_SET, GGUF_TYPE_ARRAY, s.p, s.n};
        if (has_types && gguf_layout_resized_array(L, "tokenizer.ggml.token_type", delta, &ty) == 0)
            all[n++] = (GgufEdit){"tokenizer.ggml.token_type", GGUF_EDIT_SET, GGUF_TYPE_ARRAY, ty.p, ty.n};
        snprintf(what, sizeof what, "vocabulary %+d token (consistent, disagrees with the embedding)", delta);
        /* The tokenizer alone may accept it (ids are checked against the new size). */
        edit_case(group, L, what, all, n, MODEL);
        free(t.p), free(s.p), free(ty.p);
    }
    for (int delta = -1; delta <= 1; delta += 2) {
        static const char *const keys[] = {"tokenizer.ggml.scores", "tokenizer.ggml.token_type"};
        for (int k = 0; k < 2; k++) {
            GgufBuf b = {0};
            if (gguf_layout_resized_array(L, keys[k], delta, &b) != 0) continue;
            char what[160];
            snprintf(what, sizeof what, "%s %+d entries", keys[k], delta);
            GgufEdit e = {keys[k], GGUF_EDIT_SET, GGUF_TYPE_ARRAY, b.p, b.n};
            edit_case(group, L, what, &e, 1, TOK);
            free(b.p);
        }
    }
    drop(group, L, "tokenizer.ggml.model", TOK);
    set_string(group, L, "tokenizer.ggml.model", "bert", TOK);
    set_u32(group, L, "tokenizer.ggml.model", 1, TOK);
    drop(group, L, "tokenizer.ggml.tokens", TOK);
    set_u32(group, L, "tokenizer.ggml.tokens", 1, TOK);
    set_array_strings(group, L, "no tokens at all", "tokenizer.ggml.tokens", NULL, 0, BOTH);
    set_from(group, L, "tokenizer.ggml.scores", "tokenizer.ggml.token_type", TOK);
    set_from(group, L, "tokenizer.ggml.token_type", "tokenizer.ggml.tokens", TOK);
    set_from(group, L, "tokenizer.ggml.scores", "tokenizer.ggml.tokens", TOK);
    if (has_types) {
        const int32_t bad_types[] = {7, -1, 1000};
        for (int j = 0; j < 3; j++) {
            GgufBuf b = {0};
            gguf_layout_resized_array(L, "tokenizer.ggml.token_type", 0, &b);
            memcpy(b.p + 12 + 4 * 3, &bad_types[j], 4); /* token 3 */
            char what[96];
            snprintf(what, sizeof what, "token 3 has type %d", bad_types[j]);
            GgufEdit e = {"tokenizer.ggml.token_type", GGUF_EDIT_SET, GGUF_TYPE_ARRAY, b.p, b.n};
            edit_case(group, L, what, &e, 1, TOK);
            free(b.p);
        }
    }
    /* A 70000-byte token. */
    {
        GgufBuf b = {0};
        gguf_layout_resized_array(L, "tokenizer.ggml.tokens", 0, &b);
        GgufBuf big = {0};
        gguf_buf_u32(&big, GGUF_TYPE_STRING);
        gguf_buf_u64(&big, (uint64_t)vocab);
        char *huge = malloc(70000);
        memset(huge, 'a', 70000);
        gguf_buf_string(&big, huge, 70000);
        /* The rest of the tokens after the first. */
        size_t at = 12;
        uint64_t first_len;
        memcpy(&first_len, b.p + at, 8);
        at += 8 + first_len;
        gguf_buf_append(&big, b.p + at, b.n - at);
        GgufEdit e = {"tokenizer.ggml.tokens", GGUF_EDIT_SET, GGUF_TYPE_ARRAY, big.p, big.n};
        edit_case(group, L, "token 0 is 70000 bytes long", &e, 1, TOK);
        free(huge), free(b.p), free(big.p);
    }
    /* Special ids. */
    static const char *const id_keys[] = {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id",
                                          "tokenizer.ggml.unknown_token_id",
                                          "tokenizer.ggml.padding_token_id"};
    for (int k = 0; k < 4; k++) {
        set_u32(group, L, id_keys[k], (uint32_t)vocab, TOK);
        set_u32(group, L, id_keys[k], 0xFFFFFFFEu, TOK);
        set_i32(group, L, id_keys[k], -2, TOK);
        set_string(group, L, id_keys[k], "1", TOK);
    }
    set_u32(group, L, "tokenizer.ggml.add_bos_token", 1, TOK);
    set_string(group, L, "tokenizer.ggml.add_space_prefix", "yes", TOK);
    set_u32(group, L, "tokenizer.chat_template", 1, TOK);
    set_u32(group, L, "tokenizer.ggml.pre", 7, TOK);
    if (!spm) {
        /* Loads, splitting like the closest family, with a warning (not refused). */
        set_string(group, L, "tokenizer.ggml.pre", "no-such-pre-tokenizer", 0);
        drop(group, L, "tokenizer.ggml.merges", TOK);
        set_u32(group, L, "tokenizer.ggml.merges", 1, TOK);
        set_from(group, L, "tokenizer.ggml.merges", "tokenizer.ggml.token_type", TOK);
        static const char *const no_space[] = {"ab"}, *const unknown[] = {"zzq\xC4\xA0 xyzzy_not_a_token"},
                                 *const empty[] = {""}, *const lone_space[] = {" "},
                                 *const trailing[] = {"a "};
        set_array_strings(group, L, "merge without a space", "tokenizer.ggml.merges", no_space, 1, TOK);
        set_array_strings(group, L, "merge of unknown tokens", "tokenizer.ggml.merges", unknown, 1, TOK);
        set_array_strings(group, L, "empty merge", "tokenizer.ggml.merges", empty, 1, TOK);
        set_array_strings(group, L, "merge ' '", "tokenizer.ggml.merges", lone_space, 1, TOK);
        set_array_strings(group, L, "merge 'a '", "tokenizer.ggml.merges", trailing, 1, TOK);
    }
    group_end(group);
}

static int suite(const char *name) {
    GgufLayout L;
    if (corrupt_gguf_open(&L, name) != 0) return -1;
    model_metadata(name, &L);
    vocabulary(name, &L);
    gguf_layout_free(&L);
    return 0;
}

int main(void) {
    if (access(models_path(corrupt_gguf_models[0]), R_OK) != 0) {
        printf("SKIP: %s not found (set MODELS_DIR)\n", models_path(corrupt_gguf_models[0]));
        return 77;
    }
    for (int i = 0; i < 4; i++) suite(corrupt_gguf_models[i]);
    return corrupt_gguf_finish("corrupted-GGUF suite (metadata and vocabulary)");
}
