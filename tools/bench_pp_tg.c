/* bench_pp_tg - our side of llama.cpp's llama-bench tests, on one model
 * file, driven by commands on stdin so another program's runs can be
 * interleaved with ours while the model stays loaded:
 *
 *   bench_pp_tg MODEL.gguf        then lines on stdin:
 *     threads N     run on N threads from now on
 *     pp N          prefill of an N-token prompt from position 0 (one
 *                   model_prefill, as llama-bench's ppN is one batch)
 *     tg N          N single-token decode steps at positions 0..N-1
 *                   (llama-bench's tgN: no prompt, no sampling)
 *     warmup        one untimed pp 16 and tg 16
 *     simd SET      the kernel set from now on: scalar, sse2, avx2 or avx512
 *                   (default: the widest this CPU runs)
 *     kv TYPE       the KV cache's type from now on: f16 (default), q8_0, f32
 *     bytes         the weight bytes a decode step reads: every tensor of
 *                   two or more dimensions, less the token embeddings when
 *                   the file has its own output matrix (then one row of
 *                   them is read per token); answered "bytes N"
 *
 * Each pp and tg line is answered by one line "ppN T tok/s" / "tgN T
 * tok/s" (T: threads); errors go to stderr and end the program. Used by
 * tools/bench_compare.py (make bench). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "llm/format/gguf.h"
#include "llm/compute/kernels.h"
#include "llm/generate/loaded_model.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tools/file_util.h"
#include "tools/thread_pool.h"

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A fixed token sequence (any ids of the vocabulary do: the cost of a step
 * does not depend on which token it is). */
static int token_at(const Model *t, int i) {
    return 1 + (int)((unsigned)i * 7919u % (unsigned)(t->config.vocab_size - 1));
}

static double time_prefill(Model *t, int *tokens, int n) {
    for (int i = 0; i < n; i++) tokens[i] = token_at(t, i);
    double start = now_seconds();
    if (model_prefill(t, tokens, n, 0) != 0) {
        fprintf(stderr, "bench_pp_tg: prefill of %d tokens failed\n", n);
        exit(1);
    }
    return n / (now_seconds() - start);
}

static double time_decode(Model *t, int n) {
    double start = now_seconds();
    for (int pos = 0; pos < n; pos++) model_forward(t, token_at(t, pos), pos);
    return n / (now_seconds() - start);
}

/* See "bytes" above; 0 when the file is not a GGUF one. */
static double decode_weight_bytes(const void *data, size_t size) {
    GgufFile f;
    char err[128];
    if (gguf_create(&f, data, size, err, sizeof err) != 0) return 0;
    double bytes = 0, embeddings = 0;
    int has_output = 0;
    for (uint64_t i = 0; i < f.n_tensors; i++) {
        const GgufTensorInfo *ti = &f.tensors[i];
        if (ti->n_dims < 2) continue;
        bytes += (double)ti->n_bytes;
        if (gguf_string_eq(ti->name, "token_embd.weight")) embeddings = (double)ti->n_bytes;
        if (gguf_string_eq(ti->name, "output.weight")) has_output = 1;
    }
    gguf_destroy(&f);
    return has_output ? bytes - embeddings : bytes;
}

/* The file's bytes in memory backed by 2 MiB pages where the host allows
 * them (transparent huge pages on madvise), as the kernel maps its ramdisk:
 * with 4 KiB pages a decode step's TLB misses would be the host's own
 * cost. Falls back to the plain copy. */
static void *huge_copy(void *data, size_t size) {
    size_t huge = 2u << 20, bytes = (size + huge - 1) / huge * huge;
    void *copy = NULL;
    if (posix_memalign(&copy, huge, bytes) != 0) return data;
    madvise(copy, bytes, MADV_HUGEPAGE);
    memcpy(copy, data, size);
    free(data);
    return copy;
}

int main(int argc, char **argv) {
    if (argc != 2 || argv[1][0] == '-') { /* -h, --help */
        fprintf(stderr, "usage: bench_pp_tg MODEL.gguf   (commands on stdin: threads N, pp N, tg N, warmup, "
                        "bytes, kv TYPE, simd SET)\n");
        return 2;
    }
    kernels_use(kernels_probe(NULL, NULL)); /* natively the widest set is the fastest */
    size_t size = 0;
    void *data = file_read_all(argv[1], &size);
    if (data && !getenv("BENCH_SMALL_PAGES")) data = huge_copy(data, size);
    if (!data) {
        fprintf(stderr, "bench_pp_tg: cannot read %s\n", argv[1]);
        return 1;
    }
    LoadedModel loaded;
    char err[256];
    if (loaded_model_open(&loaded, data, size, NULL, NULL, NULL, err, sizeof err) != 0) {
        fprintf(stderr, "bench_pp_tg: %s: %s\n", argv[1], err);
        free(data);
        return 1;
    }
    Model *t = &loaded.model;
    int seq_len = t->config.seq_len, threads = 1;
    int *tokens = malloc(sizeof(int) * (size_t)seq_len);
    if (!tokens) {
        fprintf(stderr, "bench_pp_tg: out of memory\n");
        return 1;
    }
    thread_pool_start(threads);
    char line[128], verb[16];
    int n;
    while (fgets(line, sizeof line, stdin)) {
        char kv_name[16], simd_name[16];
        if (sscanf(line, "simd %15s", simd_name) == 1) {
            int isa = isa_parse(simd_name);
            if (isa < 0 || !isa_usable(isa)) {
                fprintf(stderr, "bench_pp_tg: simd %s: unknown or not supported by this CPU\n", simd_name);
                return 1;
            }
            kernels_use(isa);
            printf("simd %s\n", kernels_active()->name);
            fflush(stdout);
            continue;
        }
        if (sscanf(line, "kv %15s", kv_name) == 1) {
            int type = kv_type_parse(kv_name);
            if (type < 0 || model_set_kv_type(t, (uint32_t)type, err, sizeof err) != 0) {
                fprintf(stderr, "bench_pp_tg: kv %s: %s\n", kv_name, type < 0 ? "unknown type" : err);
                return 1;
            }
            printf("kv %s\n", kv_type_name((uint32_t)type));
            fflush(stdout);
            continue;
        }
        int fields = sscanf(line, "%15s %d", verb, &n);
        if (fields < 1) continue;
        if (fields == 2 && (n < 1 || n > seq_len)) {
            fprintf(stderr, "bench_pp_tg: %d is outside 1..%d (the context)\n", n, seq_len);
            return 1;
        }
        if (!strcmp(verb, "threads") && fields == 2 && n <= THREAD_POOL_MAX) {
            thread_pool_stop();
            thread_pool_start(threads = n);
        } else if (!strcmp(verb, "pp") && fields == 2) {
            printf("pp%d %d %.2f\n", n, threads, time_prefill(t, tokens, n));
        } else if (!strcmp(verb, "tg") && fields == 2) {
            printf("tg%d %d %.2f\n", n, threads, time_decode(t, n));
        } else if (!strcmp(verb, "bytes")) {
            printf("bytes %.0f\n", decode_weight_bytes(data, size));
        } else if (!strcmp(verb, "warmup")) {
            time_prefill(t, tokens, seq_len < 16 ? seq_len : 16);
            time_decode(t, seq_len < 16 ? seq_len : 16);
            printf("warm\n");
        } else {
            fprintf(stderr, "bench_pp_tg: unknown command: %s", line);
            return 1;
        }
        fflush(stdout);
    }
    thread_pool_stop();
    free(tokens);
    loaded_model_close(&loaded);
    free(data);
    return 0;
}
