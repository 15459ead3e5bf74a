/* test_corrupt_gguf.c - the corrupted-GGUF suite, structure: four shared
 * GGUF models (SentencePiece and byte-level BPE vocabularies, F32/Q8_0/Q4_K
 * tensors) truncated at many cut points and with header, metadata and
 * tensor-info fields overwritten in place (bad magic/version, huge counts and
 * lengths, unknown value and tensor types, n_dims over 4, element counts that
 * overflow, offsets past the end or misaligned). Each case says which loader
 * must refuse it (model_create, tokenizer_create_gguf or both): -1 with a
 * non-empty one-line reason, no sanitizer report. Also drives
 * build/host/llmrun with a few corrupted GGUF files. Metadata and vocabulary
 * cases: test_corrupt_gguf_meta.c. */
#include "tests/host/corrupt_gguf_util.h"

/* ------------------------------------------------------------ truncation */

static void truncations(const char *name, const GgufLayout *L) {
    char group[160], what[96];
    snprintf(group, sizeof group, "%s: truncations", name);
    group_begin();
    for (int k = 0; k < 64; k++) {
        size_t cut = L->data_end * (size_t)k / 64;
        snprintf(what, sizeof what, "cut at %zu (%d/64)", cut, k);
        run_case(group, what, L->data, cut, BOTH);
    }
    /* Field boundaries: header, the first and last few key/values and tensor infos. */
    size_t bounds[512];
    int nb = 0;
    const size_t header[] = {3, 4, 7, 8, 15, 16, 23, 24};
    for (size_t i = 0; i < sizeof header / sizeof header[0]; i++) bounds[nb++] = header[i];
    for (int i = 0; i < L->n_kv && nb < 400; i++) {
        if (i > 3 && i < L->n_kv - 3 && !L->kv[i].is_array) continue;
        const GgufKvSpan *kv = &L->kv[i];
        size_t b[] = {kv->at + 4,        kv->at + 8,        kv->type_at,
                      kv->value_at,      kv->value_at + 1,  kv->value_at + 8,
                      kv->value_at + 12, kv->value_at + 13, kv->value_end - 1};
        for (size_t j = 0; j < sizeof b / sizeof b[0]; j++) bounds[nb++] = b[j];
    }
    for (int i = 0; i < L->n_tensors && nb < 500; i++) {
        if (i > 2 && i < L->n_tensors - 2) continue;
        const GgufTensorSpan *ts = &L->tensors[i];
        size_t b[] = {ts->at + 8, ts->ndims_at, ts->ne_at, ts->type_at, ts->offset_at, ts->end - 1};
        for (size_t j = 0; j < sizeof b / sizeof b[0]; j++) bounds[nb++] = b[j];
    }
    bounds[nb++] = L->infos_end;
    bounds[nb++] = L->data_start;
    bounds[nb++] = L->data_start + 1;
    bounds[nb++] = L->data_end - 1;
    for (int i = 0; i < nb; i++) {
        if (bounds[i] >= L->data_end) continue;
        snprintf(what, sizeof what, "cut at %zu (field boundary)", bounds[i]);
        run_case(group, what, L->data, bounds[i], BOTH);
    }
    group_end(group);
}

/* ------------------------------------------------------------ in-place fields */

static void poke(const char *group, const char *what, uint8_t *data, size_t size, size_t at, int bytes,
                 uint64_t value, int must) {
    uint8_t saved[8];
    memcpy(saved, data + at, (size_t)bytes);
    memcpy(data + at, &value, (size_t)bytes); /* little-endian host */
    run_case(group, what, data, size, must);
    memcpy(data + at, saved, (size_t)bytes);
}

static void header_and_metadata(const char *name, GgufLayout *L) {
    char group[160], what[160];
    uint8_t *d = L->data;
    size_t size = L->size;
    snprintf(group, sizeof group, "%s: header and metadata fields", name);
    group_begin();
    const uint32_t magics[] = {0, 0x45554747u, 0x47475546u, 0xFFFFFFFFu};
    for (size_t i = 0; i < 4; i++) {
        snprintf(what, sizeof what, "magic 0x%08x", magics[i]);
        poke(group, what, d, size, 0, 4, magics[i], BOTH);
    }
    const uint32_t versions[] = {0, 1, 4, 0x03000000u, 0xFFFFFFFFu};
    for (size_t i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "version %u", versions[i]);
        poke(group, what, d, size, 4, 4, versions[i], BOTH);
    }
    const uint64_t counts[] = {UINT64_MAX, (uint64_t)1 << 40, (uint64_t)1 << 62, size, size / 28 + 1};
    for (size_t i = 0; i < 5; i++) {
        snprintf(what, sizeof what, "tensor count %llu", (unsigned long long)counts[i]);
        poke(group, what, d, size, 8, 8, counts[i], BOTH);
        snprintf(what, sizeof what, "metadata count %llu", (unsigned long long)counts[i]);
        poke(group, what, d, size, 16, 8, counts[i], BOTH);
    }
    poke(group, "tensor count 0", d, size, 8, 8, 0, MODEL);
    poke(group, "tensor count + 1", d, size, 8, 8, (uint64_t)L->n_tensors + 1, MODEL);
    /* Without an optional last tensor the file may still be a valid model. */
    const char *last = L->tensors[L->n_tensors - 1].name;
    int optional_last = strcmp(last, "output.weight") == 0 || strcmp(last, "rope_freqs.weight") == 0;
    poke(group, "tensor count - 1", d, size, 8, 8, (uint64_t)L->n_tensors - 1,
         optional_last ? NEITHER : MODEL);
    poke(group, "metadata count + 1", d, size, 16, 8, (uint64_t)L->n_kv + 1, MODEL);
    poke(group, "metadata count 0", d, size, 16, 8, 0, MODEL);

    for (int i = 0; i < L->n_kv; i++) {
        const GgufKvSpan *kv = &L->kv[i];
        const uint64_t lens[] = {UINT64_MAX, (uint64_t)1 << 63, size, size - kv->at - 8 + 1};
        for (size_t j = 0; j < 4; j++) {
            snprintf(what, sizeof what, "key %s: length %llu", kv->key, (unsigned long long)lens[j]);
            poke(group, what, d, size, kv->at, 8, lens[j], BOTH);
        }
        const uint32_t types[] = {13, 0x80000000u, 0xFFFFFFFFu};
        for (size_t j = 0; j < 3; j++) {
            snprintf(what, sizeof what, "key %s: value type %u", kv->key, types[j]);
            poke(group, what, d, size, kv->type_at, 4, types[j], BOTH);
        }
        if (kv->type == GGUF_TYPE_STRING) {
            const uint64_t slens[] = {UINT64_MAX, (uint64_t)1 << 62, size - kv->value_at - 8 + 1};
            for (size_t j = 0; j < 3; j++) {
                snprintf(what, sizeof what, "key %s: string length %llu", kv->key,
                         (unsigned long long)slens[j]);
                poke(group, what, d, size, kv->value_at, 8, slens[j], BOTH);
            }
        }
        if (kv->type == GGUF_TYPE_ARRAY) {
            const uint64_t acounts[] = {UINT64_MAX, (uint64_t)1 << 61, (uint64_t)1 << 32, size};
            for (size_t j = 0; j < 4; j++) {
                snprintf(what, sizeof what, "key %s: array count %llu", kv->key,
                         (unsigned long long)acounts[j]);
                poke(group, what, d, size, kv->value_at + 4, 8, acounts[j], BOTH);
            }
            const uint32_t etypes[] = {13, 0xFFFFFFFFu};
            for (size_t j = 0; j < 2; j++) {
                snprintf(what, sizeof what, "key %s: array element type %u", kv->key, etypes[j]);
                poke(group, what, d, size, kv->value_at, 4, etypes[j], BOTH);
            }
            /* Strings read as nested arrays, numbers as strings (the parse goes astray). */
            snprintf(what, sizeof what, "key %s: elements retyped", kv->key);
            poke(group, what, d, size, kv->value_at, 4,
                 kv->elem_type == GGUF_TYPE_STRING ? GGUF_TYPE_ARRAY : GGUF_TYPE_STRING, MODEL);
        }
    }
    group_end(group);
}

static void tensor_infos(const char *name, GgufLayout *L) {
    char group[160], what[200];
    uint8_t *d = L->data;
    size_t size = L->size;
    snprintf(group, sizeof group, "%s: tensor infos", name);
    group_begin();
    for (int i = 0; i < L->n_tensors; i++) {
        const GgufTensorSpan *ts = &L->tensors[i];
        const char *tn = ts->name;
        snprintf(what, sizeof what, "%s: name length 2^64-1", tn);
        poke(group, what, d, size, ts->at, 8, UINT64_MAX, BOTH);
        snprintf(what, sizeof what, "%s: name length past the end", tn);
        poke(group, what, d, size, ts->at, 8, size - ts->at - 8 + 1, BOTH);
        const uint32_t dims[] = {0, 5, 0x80000000u, 0xFFFFFFFFu};
        for (size_t j = 0; j < 4; j++) {
            snprintf(what, sizeof what, "%s: n_dims %u", tn, dims[j]);
            poke(group, what, d, size, ts->ndims_at, 4, dims[j], BOTH);
        }
        snprintf(what, sizeof what, "%s: n_dims %u (layout shifted)", tn, ts->n_dims == 1 ? 2 : 1);
        poke(group, what, d, size, ts->ndims_at, 4, ts->n_dims == 1 ? 2 : 1, MODEL);
        for (uint32_t k = 0; k < ts->n_dims; k++) {
            size_t at = ts->ne_at + 8 * k;
            const uint64_t nes[] = {0, UINT64_MAX, (uint64_t)1 << 32, (uint64_t)1 << 57};
            for (size_t j = 0; j < 4; j++) {
                snprintf(what, sizeof what, "%s: ne[%u] = %llu", tn, k, (unsigned long long)nes[j]);
                poke(group, what, d, size, at, 8, nes[j], BOTH);
            }
            snprintf(what, sizeof what, "%s: ne[%u] + 1", tn, k);
            poke(group, what, d, size, at, 8, ts->ne[k] + 1, MODEL);
            snprintf(what, sizeof what, "%s: ne[%u] * 2", tn, k);
            poke(group, what, d, size, at, 8, ts->ne[k] * 2, MODEL);
        }
        if (ts->n_dims >= 2) {
            /* Two dimensions whose product overflows 64 bits. */
            uint64_t saved;
            memcpy(&saved, d + ts->ne_at, 8);
            uint64_t big = (uint64_t)1 << 33;
            memcpy(d + ts->ne_at, &big, 8);
            snprintf(what, sizeof what, "%s: ne[0] * ne[1] overflows", tn);
            poke(group, what, d, size, ts->ne_at + 8, 8, (uint64_t)1 << 33, BOTH);
            memcpy(d + ts->ne_at, &saved, 8);
        }
        const uint32_t types[] = {4, 5, 40, 1000, 0xFFFFFFFFu};
        for (size_t j = 0; j < 5; j++) {
            snprintf(what, sizeof what, "%s: type %u", tn, types[j]);
            /* The parser keeps unknown types (a newer file's vocabulary stays
             * readable); the model loader refuses them. */
            poke(group, what, d, size, ts->type_at, 4, types[j], MODEL);
        }
        uint64_t data_bytes = L->size - L->data_start;
        uint64_t align = L->alignment;
        const struct {
            const char *label;
            uint64_t value;
        } offs[] = {
            {"2^64-1", UINT64_MAX},
            {"2^64-alignment (overflows)", (uint64_t)0 - align},
            {"past the end", (data_bytes + align) / align * align},
            {"+1 (misaligned)", ts->offset + 1},
            {"+alignment/2 (misaligned)", ts->offset + align / 2},
        };
        for (size_t j = 0; j < sizeof offs / sizeof offs[0]; j++) {
            snprintf(what, sizeof what, "%s: offset %s", tn, offs[j].label);
            poke(group, what, d, size, ts->offset_at, 8, offs[j].value, BOTH);
        }
    }
    group_end(group);
}

/* ------------------------------------------------------------ llmrun */

static void llmrun_case(const char *llmrun, const char *what, const uint8_t *data, size_t size) {
    char path[64], command[512], name[160];
    snprintf(path, sizeof path, "/tmp/corrupt_gguf_XXXXXX");
    int fd = mkstemp(path);
    snprintf(name, sizeof name, "llmrun refuses %s", what);
    if (fd < 0 || write(fd, data, size) != (ssize_t)size) {
        if (fd >= 0) close(fd), unlink(path);
        check(0, name, "cannot write a temporary file");
        return;
    }
    close(fd);
    snprintf(command, sizeof command, "'%s' '%s' -n 4 -t 0 -i 'Once' 2>&1", llmrun, path);
    check_llmrun_refuses(name, command);
    unlink(path);
    cases_run++;
}

static void llmrun_suite(GgufLayout *L, const char *model) {
    const char *llmrun = "build/host/llmrun";
    if (access(llmrun, X_OK) != 0) {
        check_skipped("llmrun refuses corrupted files", "build/host/llmrun not built (make host)");
        return;
    }
    char what[160];
    snprintf(what, sizeof what, "%s cut in half", model);
    llmrun_case(llmrun, what, L->data, L->size / 2);
    uint64_t saved;
    memcpy(&saved, L->data + L->tensors[0].offset_at, 8);
    uint64_t past = (uint64_t)L->size;
    memcpy(L->data + L->tensors[0].offset_at, &past, 8);
    snprintf(what, sizeof what, "%s with a tensor offset past the end", model);
    llmrun_case(llmrun, what, L->data, L->size);
    memcpy(L->data + L->tensors[0].offset_at, &saved, 8);
    GgufBuf t = {0};
    gguf_layout_resized_array(L, "tokenizer.ggml.tokens", -1, &t);
    GgufEdit e = {"tokenizer.ggml.tokens", GGUF_EDIT_SET, GGUF_TYPE_ARRAY, t.p, t.n};
    size_t size;
    uint8_t *file = gguf_layout_rebuild(L, &e, 1, &size);
    snprintf(what, sizeof what, "%s with one token fewer than the embedding", model);
    if (file) llmrun_case(llmrun, what, file, size);
    free(file), free(t.p);
    if (!L->tokenizer_spm) {
        static const char *const bad[] = {"ab"};
        GgufBuf b = {0};
        gguf_buf_u32(&b, GGUF_TYPE_STRING);
        gguf_buf_u64(&b, 1);
        gguf_buf_string(&b, bad[0], 2);
        GgufEdit m = {"tokenizer.ggml.merges", GGUF_EDIT_SET, GGUF_TYPE_ARRAY, b.p, b.n};
        file = gguf_layout_rebuild(L, &m, 1, &size);
        snprintf(what, sizeof what, "%s with a bad merge", model);
        if (file) llmrun_case(llmrun, what, file, size);
        free(file), free(b.p);
    }
}

static int suite(const char *name, int with_llmrun) {
    GgufLayout L;
    if (corrupt_gguf_open(&L, name) != 0) return -1;
    truncations(name, &L);
    header_and_metadata(name, &L);
    tensor_infos(name, &L);
    if (with_llmrun) llmrun_suite(&L, name);
    gguf_layout_free(&L);
    return 0;
}

int main(void) {
    if (access(models_path(corrupt_gguf_models[0]), R_OK) != 0) {
        printf("SKIP: %s not found (set MODELS_DIR)\n", models_path(corrupt_gguf_models[0]));
        return 77;
    }
    for (int i = 0; i < 4; i++) suite(corrupt_gguf_models[i], i < 2);
    return corrupt_gguf_finish("corrupted-GGUF suite (structure)");
}
