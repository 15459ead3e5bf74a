/* bench_tokenizer - times loading a GGUF vocabulary and encoding a sizeable
 * text with it.
 * Usage: bench_tokenizer VOCAB.gguf [TEXT] [--mb N]
 * TEXT defaults to VOCAB.gguf.inp (llama.cpp's test cases, the separators
 * turned into newlines); it is repeated to about N MB (default 5). Prints the
 * best load time of 5 in ms, and the encode rate in MB/s of the text encoded
 * in 64 KB chunks (cut at a newline, as a prompt would be), best of 3; both
 * in CPU time. */
#define _GNU_SOURCE /* memrchr */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/tokenizer/tokenizer.h"
#include "tools/file_util.h"

#define SEPARATOR "\n__ggml_vocab_test__\n"
#define CHUNK (64 * 1024)

/* CPU time of this process: on a machine shared with other jobs, wall time
 * mostly measures the others. */
static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int fail(const char *what, const char *why) {
    fprintf(stderr, "bench_tokenizer: %s: %s\n", what, why);
    return 1;
}

/* The test cases with each separator replaced by one newline, in place. */
static size_t join_cases(char *text, size_t len) {
    size_t out = 0, sep = strlen(SEPARATOR);
    for (size_t i = 0; i < len;) {
        if (i + sep <= len && memcmp(text + i, SEPARATOR, sep) == 0) {
            text[out++] = '\n';
            i += sep;
        } else {
            text[out++] = text[i++];
        }
    }
    return out;
}

int main(int argc, char **argv) {
    const char *vocab_path = NULL, *text_path = NULL;
    double megabytes = 5;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mb") == 0 && i + 1 < argc)
            megabytes = atof(argv[++i]);
        else if (!vocab_path)
            vocab_path = argv[i];
        else
            text_path = argv[i];
    }
    if (!vocab_path || megabytes <= 0 || megabytes > 1024) {
        fprintf(stderr, "usage: bench_tokenizer VOCAB.gguf [TEXT] [--mb N]\n");
        return 2;
    }
    char default_text[1024];
    snprintf(default_text, sizeof default_text, "%s.inp", vocab_path);
    if (!text_path) text_path = default_text;

    size_t gguf_size, sample_size;
    void *gguf = file_read_all(vocab_path, &gguf_size);
    char *sample = file_read_all(text_path, &sample_size);
    if (!gguf) return fail(vocab_path, "cannot read");
    if (!sample || sample_size == 0) return fail(text_path, "cannot read (or empty)");
    sample_size = join_cases(sample, sample_size);

    Tokenizer t;
    char err[256];
    double best_load = 1e9;
    for (int round = 0; round < 5; round++) {
        double start = now_seconds();
        if (tokenizer_create_gguf(&t, gguf, gguf_size, err, sizeof err) != 0) return fail(vocab_path, err);
        double elapsed = now_seconds() - start;
        if (elapsed < best_load) best_load = elapsed;
        if (round < 4) tokenizer_destroy(&t);
    }

    size_t text_size = (size_t)(megabytes * 1024 * 1024);
    char *text = malloc(text_size);
    int *ids = malloc(CHUNK * sizeof(int));
    if (!text || !ids) return fail("memory", "out of memory");
    for (size_t i = 0; i < text_size; i++) text[i] = sample[i % sample_size];

    double best_encode = 1e9;
    long tokens = 0;
    for (int round = 0; round < 3; round++) {
        tokens = 0;
        double start = now_seconds();
        for (size_t pos = 0; pos < text_size;) {
            size_t len = text_size - pos < CHUNK ? text_size - pos : CHUNK;
            const char *newline = len == CHUNK ? memrchr(text + pos, '\n', len) : NULL;
            if (newline) len = (size_t)(newline - (text + pos)) + 1;
            int n = tokenizer_encode_ex(&t, text + pos, len, 0, ids, CHUNK, err, sizeof err);
            if (n < 0) return fail("encode", err);
            tokens += n;
            pos += len;
        }
        double elapsed = now_seconds() - start;
        if (elapsed < best_encode) best_encode = elapsed;
    }
    printf("%s: %d tokens, load %.1f ms, encode %.1f MB/s (%.2f MB, %ld tokens, %.0f ktok/s)\n", vocab_path,
           t.vocab_size, best_load * 1e3, text_size / 1048576.0 / best_encode, text_size / 1048576.0, tokens,
           tokens / best_encode / 1e3);
    tokenizer_destroy(&t);
    free(text), free(ids), free(gguf), free(sample);
    return 0;
}
