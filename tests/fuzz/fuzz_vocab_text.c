/* fuzz_vocab_text.c - the real Llama 3, Qwen3 and Gemma 3 vocabularies
 * (../shared/models/vocab, or $FUZZ_VOCAB_DIR) over fuzzed text: byte-level
 * BPE, SentencePiece, the pre-tokenizers and byte fallback, under ASan and
 * UBSan. The fuzzer cannot call llama.cpp, so its corpus is the link:
 * inputs that reach new code are saved (tests/fuzz/corpus/vocab_text, or
 * build/fuzz/work/vocab_text after `make fuzz`), and
 * tests/host/test_tokenizer_differential.py sends every one of them to
 * llama.cpp's tokenizer and wants the same ids. So the harness keeps only
 * inputs that differential can send: valid UTF-8 without NUL (a JavaScript
 * string cannot carry other bytes unchanged) and without the case
 * separator; everything else is rejected (-1: not added to the corpus).
 *
 * Input: the text itself, tokenized as the differential does (no BOS,
 * special-token text not parsed) by all three vocabularies. */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>

#include "lib/utf8.h"
#include "llm/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_common.h"

#define VOCABULARIES 3
static const char *const NAMES[VOCABULARIES] = {"llama3", "qwen3", "gemma3"};
static Tokenizer vocab[VOCABULARIES];

static void *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *data = n > 0 ? malloc((size_t)n) : NULL;
    if (data && fread(data, 1, (size_t)n, f) != (size_t)n) free(data), data = NULL;
    fclose(f);
    *size = (size_t)n;
    return data;
}

/* Exit 78 (EX_CONFIG; libFuzzer itself exits 77 on a crash) when a vocabulary
 * is missing: run_fuzz.sh counts it as skipped
 * (a failure with CI set), never as a replay that passed. */
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    const char *dir = getenv("FUZZ_VOCAB_DIR");
    if (!dir) dir = "../shared/models/vocab";
    for (int v = 0; v < VOCABULARIES; v++) {
        char path[1024], err[256];
        snprintf(path, sizeof path, "%s/%s.gguf", dir, NAMES[v]);
        size_t size;
        void *data = read_file(path, &size);
        if (!data) {
            fprintf(stderr, "fuzz_vocab_text: %s is missing (set FUZZ_VOCAB_DIR)\n", path);
            exit(78);
        }
        if (tokenizer_create_gguf(&vocab[v], data, size, err, sizeof err) != 0) {
            fprintf(stderr, "fuzz_vocab_text: %s: %s\n", path, err);
            exit(1);
        }
        free(data);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!utf8_valid((const char *)data, size) || memchr(data, '\0', size) ||
        memmem(data, size, "__ggml_vocab_test__", 19))
        return -1;
    /* Its own exact-size buffer, so overreads are caught. */
    char *text = malloc(size ? size : 1);
    memcpy(text, data, size);
    size_t cap = tokenizer_max_tokens(size);
    int *ids = malloc(cap * sizeof *ids);
    for (int v = 0; v < VOCABULARIES; v++) {
        char err[256];
        int n = tokenizer_encode_ex(&vocab[v], text, size, 0, ids, cap, err, sizeof err);
        FUZZ_ASSERT(n >= 0, "valid UTF-8 text refused");
        FUZZ_ASSERT((size_t)n <= cap, "more ids than the buffer holds");
        FUZZ_ASSERT(size == 0 || n > 0, "text without a token");
        for (int i = 0; i < n; i++)
            FUZZ_ASSERT(ids[i] >= 0 && ids[i] < vocab[v].vocab_size, "id out of range");
    }
    free(ids);
    free(text);
    return 0;
}
