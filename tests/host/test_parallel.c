/* test_parallel.c - the forward pass split over 1..4 threads (llm/compute/parallel.h
 * with the host pthread pool) must give exactly the single-thread logits:
 * batched prefill and single-token decode, for fp32, int8-at-load, int8 v2
 * with groups straddling rows, and GGUF models. Random models come from
 * build/host/gen_model. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/compute/kernels.h"
#include "llm/compute/parallel.h"
#include "llm/model/model.h"
#include "tests/host/llm_test_util.h"
#include "tools/thread_pool.h"

#define GEN_MODEL "build/host/gen_model"
#define DECODE_STEPS 6

/* parallel_split: every index covered once, chunk starts aligned. */
static void test_split(void) {
    int ok = 1;
    for (int count = 0; count < 70 && ok; count++)
        for (int align = 1; align <= 8 && ok; align++)
            for (int n = 1; n <= 5 && ok; n++) {
                int next = 0;
                for (int w = 0; w < n; w++) {
                    int b, e;
                    parallel_split(count, align, w, n, &b, &e);
                    if (b != next || e < b || (b % align && b != count)) ok = 0;
                    next = e;
                }
                if (next != count) ok = 0;
            }
    check(ok, "parallel_split covers 0..count-1 in aligned contiguous chunks",
          "a split left a gap or overlap");
}

/* Logits of a prefill of n_prompt tokens and DECODE_STEPS single forwards
 * after it, into out ((1 + DECODE_STEPS) * vocab floats). */
static int run_model(Model *t, int n_prompt, float *out) {
    const ModelConfig *c = &t->config;
    int tokens[64];
    for (int i = 0; i < n_prompt; i++) tokens[i] = (i * 37 + 11) % c->vocab_size;
    if (model_prefill(t, tokens, n_prompt, 0) != 0) return -1;
    size_t v = (size_t)c->vocab_size;
    memcpy(out, model_logits(t), v * sizeof(float));
    int token = tokens[n_prompt - 1];
    for (int s = 0; s < DECODE_STEPS; s++) {
        float *l = model_forward(t, token, n_prompt + s);
        if (!l) return -1;
        memcpy(out + (s + 1) * v, l, v * sizeof(float));
        token = (token * 7 + s) % c->vocab_size;
    }
    return 0;
}

/* Loads data (quantising when quant_group > 0) and compares the logits of
 * 2, 3 and 4 threads with the serial run's, bit for bit. */
static void compare_threads(const char *label, const void *data, size_t size, int quant_group) {
    char err[256], name[200];
    Model t;
    if (model_create(&t, data, size, NULL, err, sizeof err) != 0) {
        check(0, label, "load failed: %s", err);
        return;
    }
    if (quant_group > 0 && model_quantize(&t, quant_group, err, sizeof err) != 0) {
        check(0, label, "quantize failed: %s", err);
        model_destroy(&t);
        return;
    }
    int n_prompt = t.config.seq_len - DECODE_STEPS - 1;
    if (n_prompt > 37) n_prompt = 37; /* 16 + 16 + 5: full and partial batches */
    size_t floats = (size_t)(1 + DECODE_STEPS) * t.config.vocab_size;
    float *serial = malloc(floats * sizeof(float)), *par = malloc(floats * sizeof(float));
    parallel_set_runner(NULL, 1);
    int rc = run_model(&t, n_prompt, serial);
    snprintf(name, sizeof name, "%s: serial run", label);
    check(rc == 0, name, "forward failed");
    for (int threads = 2; threads <= 4 && rc == 0; threads++) {
        int got = thread_pool_start(threads);
        memset(par, 0, floats * sizeof(float));
        int prc = run_model(&t, n_prompt, par);
        thread_pool_stop();
        size_t first_diff = floats;
        for (size_t i = 0; i < floats && prc == 0; i++)
            if (memcmp(&serial[i], &par[i], sizeof(float)) != 0) {
                first_diff = i;
                break;
            }
        snprintf(name, sizeof name,
                 "%s: %d threads give the serial logits bit for bit (prefill %d + %d decodes)", label,
                 threads, n_prompt, DECODE_STEPS);
        check(got == threads && prc == 0 && first_diff == floats, name,
              "threads %d, rc %d, first difference at float %zu (%g vs %g)", got, prc, first_diff,
              first_diff < floats ? serial[first_diff] : 0.0, first_diff < floats ? par[first_diff] : 0.0);
    }
    free(serial);
    free(par);
    model_destroy(&t);
}

static void *generate_model(const char *dir, const char *file, const char *args, size_t *size) {
    char cmd[512], path[300];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    snprintf(cmd, sizeof cmd, GEN_MODEL " --out %s %s >/dev/null", path, args);
    if (system(cmd) != 0) return NULL;
    void *data = read_file(path, size);
    unlink(path);
    return data;
}

static void test_random_models(const char *dir) {
    static const struct {
        const char *label, *file, *args;
        int quant_group;
    } models[] = {
        {"tiny fp32", "tiny.bin", "--shape tiny --version 1 --seed 3", 0},
        {"tiny int8 at load", "tiny.bin", "--shape tiny --version 1 --seed 3", 32},
        {"odd shape fp32 (rows not multiples of 4)", "odd.bin",
         "--dim 72 --hidden 200 --layers 2 --heads 6 --kv-heads 3 --vocab 301 --seq 48 --version 1", 0},
        {"int8 v2, groups straddling rows", "straddle.bin",
         "--dim 64 --hidden 172 --layers 2 --heads 4 --kv-heads 4 --vocab 259 --seq 48 --version 2 "
         "--group-size 32",
         0},
        {"int8 v2, row-aligned groups", "v2.bin", "--shape tiny --version 2 --group-size 32", 0},
    };
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++) {
        size_t size;
        void *data = generate_model(dir, models[i].file, models[i].args, &size);
        if (!data) {
            check(0, models[i].label, "gen_model %s failed", models[i].args);
            continue;
        }
        compare_threads(models[i].label, data, size, models[i].quant_group);
        free(data);
    }
}

static void test_gguf_models(void) {
    static const char *files[] = {"stories260K.gguf",
                                  "gguf-arch/qwen2-Q8_0.gguf",
                                  "gguf-arch/qwen3-tied-Q4_K.gguf",
                                  "gguf-arch/qwen3-untied-F32.gguf",
                                  "gguf-arch2/qwen3moe-Q4_K.gguf",
                                  "gguf-arch2/qwen3moe-Q8_0.gguf"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", models_dir_from_env(), files[i]);
        size_t size;
        void *data = read_file(path, &size);
        if (!data) {
            check_skipped(files[i], "test file missing");
            continue;
        }
        compare_threads(files[i], data, size, 0);
        free(data);
    }
}

int main(void) {
    if (access(GEN_MODEL, X_OK) != 0) {
        printf("SKIP: %s not built (make build/host/gen_model)\n", GEN_MODEL);
        return 77;
    }
    char dir[] = "/tmp/test_parallel.XXXXXX";
    if (!mkdtemp(dir)) {
        printf("FAIL - temporary directory: cannot create\n");
        return 1;
    }
    parallel_set_min_work(0); /* every matmul and attention through the workers */
    test_split();
    test_random_models(dir);
    test_gguf_models();
    if (isa_widest() >= ISA_AVX2) {
        kernels_use(ISA_AVX2);
        size_t size;
        void *data = generate_model(dir, "avx.bin", "--shape tiny --version 1 --seed 5", &size);
        if (data) compare_threads("tiny fp32, AVX2 kernels", data, size, 0);
        free(data);
        kernels_use(ISA_SSE2);
    }
    rmdir(dir);
    return failures ? 1 : 0;
}
