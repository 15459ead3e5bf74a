/* test_transformer - checkpoint loading and the forward pass against
 * published logits, the golden greedy token stream, the v1/v2 formats, an
 * independent Python reference on random models, and malformed files.
 * Real models come from MODELS_DIR (default ../shared/models); random ones
 * from build/host/gen_model (GEN_MODEL overrides). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "llm/compute/kernels.h"
#include "llm/compute/kernel_sets.h"
#include "llm/model/model.h"
#include "llm/model/llama2c.h"
#include "tests/host/llm_test_util.h"

static const char *models_dir;
static char temp_dir[] = "/tmp/test_transformer.XXXXXX";

/* ---------------------------------------------------------------- stories260K */

static void check_value(const char *name, double got, double want, double tol) {
    check(fabs(got - want) <= tol, name, "got %.6f, want %.6f (tolerance %g)", got, want, tol);
}

/* REFERENCE_OUTPUTS.md section 1: logits at pos 0 (BOS) and pos 1 (403). */
static void test_reference_logits(const char *label, Model *t) {
    static const int top0[] = {403, 385, 410, 317, 407};
    static const double val0[] = {17.02352, 15.40621, 13.10826, 12.76917, 12.41809};
    static const int top1[] = {407, 383, 261, 403, 432};
    static const double val1[] = {18.45998, 14.29106, 10.89797, 10.66206, 10.31380};
    char name[160];
    float *logits = model_forward(t, 1, 0);
    snprintf(name, sizeof(name), "%s pos 0 argmax is 403", label);
    check(argmax(logits, 512) == 403, name, "argmax %d", argmax(logits, 512));
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "%s pos 0 logit[%d]", label, top0[i]);
        check_value(name, logits[top0[i]], val0[i], 1e-4);
    }
    double sum = 0, min = logits[0];
    for (int i = 0; i < 512; i++) {
        sum += logits[i];
        if (logits[i] < min) min = logits[i];
    }
    snprintf(name, sizeof(name), "%s pos 0 logit sum", label);
    check_value(name, sum, -1070.17223, 2e-3);
    snprintf(name, sizeof(name), "%s pos 0 logit min", label);
    check_value(name, min, -8.02744, 1e-4);

    logits = model_forward(t, 403, 1);
    snprintf(name, sizeof(name), "%s pos 1 argmax is 407", label);
    check(argmax(logits, 512) == 407, name, "argmax %d", argmax(logits, 512));
    for (int i = 0; i < 5; i++) {
        snprintf(name, sizeof(name), "%s pos 1 logit[%d]", label, top1[i]);
        check_value(name, logits[top1[i]], val1[i], 1e-4);
    }
}

static int read_golden_ids(int *ids, int max) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/golden/stories260K__once_upon_a_time.ids", models_dir);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    int n = 0;
    while (n < max && fscanf(f, "%d", &ids[n]) == 1) n++;
    fclose(f);
    return n;
}

/* Greedy decoding from BOS; returns how many predictions match ids[1..]. */
static int greedy_matches(Model *t, const int *ids, int n_ids) {
    int token = ids[0];
    for (int pos = 0; pos + 1 < n_ids; pos++) {
        int next = argmax(model_forward(t, token, pos), t->config.vocab_size);
        if (next != ids[pos + 1]) return pos;
        token = next;
    }
    return n_ids - 1;
}

static void test_stories260k(void) {
    size_t size0 = 0, size1 = 0, size2 = 0;
    void *v0 = read_file_in(models_dir, "stories260K.bin", &size0),
         *v1 = read_file_in(models_dir, "stories260K_v1.bin", &size1);
    void *v2 = read_file_in(models_dir, "stories260K_q80.bin", &size2);
    int ids[256];
    int n_ids = read_golden_ids(ids, 256);
    check(v1 && v2 && n_ids == 201 && ids[0] == 1, "stories260K_v1/q80 and golden ids present",
          "missing test data in %s", models_dir);
    Model t0, t1, t2;
    char err[256] = "";
    int rc = model_create(&t0, v0, size0, NULL, err, sizeof(err));
    check(rc == 0, "load stories260K.bin", "%s", err);
    if (rc != 0) return;
    const ModelConfig *c = &t0.config;
    check(c->version == 0 && c->dim == 64 && c->hidden_dim == 172 && c->n_layers == 5 && c->n_heads == 8 &&
              c->n_kv_heads == 4 && c->vocab_size == 512 && c->seq_len == 512 && c->shared_classifier &&
              c->head_size == 8 && c->kv_dim == 32,
          "stories260K.bin config", "unexpected header values");
    check(model_param_count(&t0) == 260032, "stories260K param count", "got %llu",
          (unsigned long long)model_param_count(&t0));
    check(model_forward(&t0, 512, 0) == NULL && model_forward(&t0, 1, 512) == NULL &&
              model_forward(&t0, -1, 0) == NULL,
          "forward rejects out-of-range token/pos", "returned logits");

    const KernelSet *sets[] = {&kernels_scalar, &kernels_sse2, &kernels_avx2, &kernels_avx512};
    for (int variant = 0; variant < 4; variant++) {
        if (variant >= 2 && isa_widest() < (variant == 2 ? ISA_AVX2 : ISA_AVX512)) break;
        kernels_use(sets[variant]->isa);
        char label[64];
        snprintf(label, sizeof(label), "stories260K %s", kernels_active()->name);
        test_reference_logits(label, &t0);
        if (n_ids == 201) {
            int matched = greedy_matches(&t0, ids, n_ids);
            snprintf(label, sizeof(label), "stories260K %s greedy 200 tokens equal golden ids",
                     kernels_active()->name);
            check(matched == 200, label, "diverges at position %d", matched);
        }
    }
    kernels_use(ISA_SSE2);

    if (v1 && model_create(&t1, v1, size1, NULL, err, sizeof(err)) == 0) {
        check(t1.config.version == 1 && t1.config.shared_classifier, "stories260K_v1 header", "wrong");
        int identical = 1, token = 1;
        for (int pos = 0; pos < 200 && identical; pos++) {
            float *a = model_forward(&t0, token, pos), *b = model_forward(&t1, token, pos);
            identical = memcmp(a, b, 512 * sizeof(float)) == 0;
            token = argmax(a, 512);
        }
        check(identical, "stories260K_v1 logits bit-identical to v0 over 200 greedy steps", "logits differ");
        model_destroy(&t1);
    } else {
        check(0, "load stories260K_v1.bin", "%s", err);
    }

    if (v2 && model_create(&t2, v2, size2, NULL, err, sizeof(err)) == 0) {
        check(t2.config.version == 2 && t2.config.group_size == 32, "stories260K_q80 header", "wrong");
        /* Measured: int8 weights with fp32 activations stay within 0.21 of the fp32
         * logits (which reach 18) over the first 8 greedy positions. */
        double worst = 0;
        int token = 1;
        for (int pos = 0; pos < 8; pos++) {
            float *a = model_forward(&t0, token, pos), *b = model_forward(&t2, token, pos);
            for (int i = 0; i < 512; i++) worst = fmax(worst, fabs((double)a[i] - b[i]));
            token = argmax(a, 512);
        }
        printf("# stories260K_q80 vs fp32: max |logit difference| over 8 positions = %.5f\n", worst);
        check(worst < 0.3, "stories260K_q80 logits within 0.3 of fp32", "max difference %.5f", worst);
        if (n_ids == 201) {
            int matched = greedy_matches(&t2, ids, n_ids);
            printf("# stories260K_q80 greedy output follows the fp32 golden ids for %d tokens\n", matched);
            check(matched >= 100, "stories260K_q80 greedy text starts like fp32 (>= 100 tokens)",
                  "diverges at %d", matched);
        }
        model_destroy(&t2);
    } else {
        check(0, "load stories260K_q80.bin", "%s", err);
    }
    model_destroy(&t0);
    free(v0), free(v1), free(v2);
}

/* ---------------------------------------------------------------- random models */

static const char *gen_model_path(void) {
    const char *p = getenv("GEN_MODEL");
    return p && *p ? p : "build/host/gen_model";
}

/* Writes temp_dir/NAME with gen_model ARGS; returns the path or NULL. */
static const char *generate_model(const char *name, const char *args, char *path, size_t path_size) {
    char cmd[2048];
    snprintf(path, path_size, "%s/%s", temp_dir, name);
    snprintf(cmd, sizeof(cmd), "%s --out '%s' %s", gen_model_path(), path, args);
    if (system(cmd) != 0) {
        check(0, name, "'%s' failed (build it: make build/host/gen_model)", cmd);
        return NULL;
    }
    return path;
}

/* Logits from the independent Python reference (l2c_ref.py), n_tokens * vocab floats. */
static float *python_logits(const char *model, const int *tokens, int n_tokens, int vocab) {
    char out[1100], cmd[4096];
    snprintf(out, sizeof(out), "%s.ref.f32", model);
    int len =
        snprintf(cmd, sizeof(cmd), "python3 tests/host/ref_logits.py '%s' '%s' '%s'", models_dir, model, out);
    for (int i = 0; i < n_tokens; i++) len += snprintf(cmd + len, sizeof(cmd) - len, " %d", tokens[i]);
    if (system(cmd) != 0) {
        check(0, "python reference", "'%s' failed", cmd);
        return NULL;
    }
    size_t size = 0;
    float *logits = read_file(out, &size);
    if (logits && size != (size_t)n_tokens * vocab * sizeof(float)) {
        check(0, "python reference", "%s has %zu bytes, expected %zu", out, size,
              (size_t)n_tokens * vocab * sizeof(float));
        free(logits);
        return NULL;
    }
    return logits;
}

/* Runs tokens through the C model; returns all logits (n_tokens * vocab). */
static float *c_logits(Model *t, const int *tokens, int n_tokens) {
    int vocab = t->config.vocab_size;
    float *all = malloc(sizeof(float) * (size_t)n_tokens * vocab);
    for (int pos = 0; pos < n_tokens; pos++)
        memcpy(all + (size_t)pos * vocab, model_forward(t, tokens[pos], pos), sizeof(float) * vocab);
    return all;
}

static double worst_relative(const float *a, const float *b, size_t n) {
    double worst = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)a[i] - b[i]) / fmax(1.0, fabs((double)b[i]));
        if (!(e <= worst)) worst = e;
    }
    return worst;
}

/* Loads model_path, compares each kernel variant with the Python reference. */
static void compare_with_python(const char *label, const char *model_path, const int *tokens, int n_tokens) {
    size_t size = 0;
    void *data = read_file(model_path, &size);
    Model t;
    char err[256] = "", name[256];
    snprintf(name, sizeof(name), "%s loads", label);
    int rc = data ? model_create(&t, data, size, NULL, err, sizeof(err)) : -1;
    check(rc == 0, name, "%s", data ? err : "cannot read file");
    if (rc != 0) {
        free(data);
        return;
    }
    int vocab = t.config.vocab_size;
    float *want = python_logits(model_path, tokens, n_tokens, vocab);
    int has_avx2 = isa_widest() >= ISA_AVX2;
    for (int variant = 0; want && variant < 3; variant++) {
        if (variant == 2 && !has_avx2) break;
        kernels_use(ISA_SCALAR + variant);
        float *got = c_logits(&t, tokens, n_tokens);
        double e = worst_relative(got, want, (size_t)n_tokens * vocab);
        double spread = 0;
        for (int i = 0; i < vocab; i++) spread = fmax(spread, fabs(want[i] - want[0]));
        snprintf(name, sizeof(name), "%s %s matches Python reference (%d positions)", label,
                 kernels_active()->name, n_tokens);
        check(e <= 1e-4 && spread > 0.5, name, "max relative error %.3g (logit spread %.3g)", e, spread);
        free(got);
    }
    kernels_use(ISA_SSE2);
    free(want);
    model_destroy(&t);
    free(data);
}

/* Same seed in two formats: logits identical (v1 vs v0) or close (v2). */
static void compare_formats(const char *label, const char *path_a, const char *path_b, double tol) {
    static const int tokens[] = {1, 17, 299, 42, 0, 150, 7, 88};
    size_t size_a = 0, size_b = 0;
    void *a = read_file(path_a, &size_a), *b = read_file(path_b, &size_b);
    Model ta, tb;
    char err[256] = "";
    int rc = a && b ? model_create(&ta, a, size_a, NULL, err, sizeof(err)) : -1;
    if (rc == 0 && model_create(&tb, b, size_b, NULL, err, sizeof(err)) != 0) {
        model_destroy(&ta);
        rc = -1;
    }
    check(rc == 0, label, "load failed: %s", err);
    if (rc == 0) {
        float *la = c_logits(&ta, tokens, 8), *lb = c_logits(&tb, tokens, 8);
        size_t n = (size_t)8 * ta.config.vocab_size;
        double e = worst_relative(lb, la, n);
        if (tol == 0)
            check(memcmp(la, lb, n * sizeof(float)) == 0, label, "max difference %.3g", e);
        else {
            printf("# %s: max relative difference %.5f\n", label, e);
            check(e <= tol, label, "max relative difference %.5f > %g", e, tol);
        }
        free(la), free(lb);
        model_destroy(&ta);
        model_destroy(&tb);
    }
    free(a), free(b);
}

static void test_random_models(void) {
    static const int tokens[] = {1, 17, 299, 42, 0, 150, 7, 88};
    static const int tokens_15m[] = {1, 31999};
    static const int tokens_odd[] = {1, 76, 3, 40, 5};
    char tiny0[1100], tiny1[1100], tiny2[1100], sep0[1100], sep1[1100], sep2[1100], odd[1100], big[1100];
    const char *tiny = "--shape tiny --seed 7"; /* dim 96, hidden 160, 3 layers, 6 heads, 2 kv heads */
    const char *separate = "--shape tiny --seed 8 --separate-classifier";
    if (generate_model("tiny_v0.bin", tiny, tiny0, sizeof(tiny0)))
        compare_with_python("random tiny GQA v0", tiny0, tokens, 8);
    if (generate_model("separate_v0.bin", separate, sep0, sizeof(sep0)))
        compare_with_python("random tiny separate classifier v0", sep0, tokens, 8);
    if (generate_model("odd_v0.bin",
                       "--dim 40 --hidden 100 --layers 2 --heads 5 --kv-heads 1 --vocab 77 --seq 9 --seed 3",
                       odd, sizeof(odd)))
        compare_with_python("random odd shape (dim 40, hidden 100, MQA) v0", odd, tokens_odd, 5);
    if (generate_model("m15_v0.bin", "--shape 15M --seed 5", big, sizeof(big)))
        compare_with_python("random 15M shape v0", big, tokens_15m, 2);

    char args[256];
    snprintf(args, sizeof(args), "%s --version 1", tiny);
    if (generate_model("tiny_v1.bin", args, tiny1, sizeof(tiny1)))
        compare_formats("random tiny v1 logits bit-identical to v0", tiny0, tiny1, 0);
    snprintf(args, sizeof(args), "%s --version 1", separate);
    if (generate_model("separate_v1.bin", args, sep1, sizeof(sep1)))
        compare_formats("random separate-classifier v1 bit-identical to v0", sep0, sep1, 0);
    snprintf(args, sizeof(args), "%s --version 2 --group-size 32", tiny);
    if (generate_model("tiny_v2.bin", args, tiny2, sizeof(tiny2)))
        compare_formats("random tiny v2 (int8, GS 32) close to v0", tiny0, tiny2, 0.1);
    snprintf(args, sizeof(args), "%s --version 2 --group-size 16", separate);
    if (generate_model("separate_v2.bin", args, sep2, sizeof(sep2)))
        compare_formats("random separate-classifier v2 (GS 16) close to v0", sep0, sep2, 0.1);
}

/* ---------------------------------------------------------------- prefill */

/* Runs tokens[0..n) position by position on a and as prefill chunks (split at
 * `split`, so a chunk also starts at pos > 0) on b; compares the KV caches and
 * the last logits (relative to max(1, |value|)). */
static void compare_prefill(const char *label, Model *a, Model *b, const int *tokens, int n, int split) {
    const ModelConfig *c = &a->config;
    const Llama2cState *sa = &llama2c_model_of(a)->state, *sb = &llama2c_model_of(b)->state;
    for (int pos = 0; pos < n; pos++) model_forward(a, tokens[pos], pos);
    int rc = model_prefill(b, tokens, split, 0);
    if (rc == 0) rc = model_prefill(b, tokens + split, n - split, split);
    char name[256];
    snprintf(name, sizeof(name), "%s: prefill of %d tokens (chunks at 0 and %d) runs", label, n, split);
    check(rc == 0, name, "returned %d", rc);
    double worst_cache = 0;
    for (int l = 0; l < c->n_layers; l++) {
        size_t at = (size_t)l * c->seq_len * c->kv_dim, count = (size_t)n * c->kv_dim;
        worst_cache = fmax(worst_cache, worst_relative(sb->key_cache + at, sa->key_cache + at, count));
        worst_cache = fmax(worst_cache, worst_relative(sb->value_cache + at, sa->value_cache + at, count));
    }
    double worst_logits = worst_relative(model_logits(b), model_logits(a), c->vocab_size);
    printf("# %s: prefill vs per-token max relative difference: KV cache %.3g, last logits %.3g\n", label,
           worst_cache, worst_logits);
    snprintf(name, sizeof(name), "%s: prefill KV cache and last logits equal per-token forward (1e-5)",
             label);
    check(worst_cache <= 1e-5 && worst_logits <= 1e-5, name, "KV %.3g, logits %.3g", worst_cache,
          worst_logits);
    if (!model_is_quantized(a)) return;
    /* The int8 matmuls compute each position's arithmetic alike however many
     * positions a call batches: the same bits. */
    int same = memcmp(model_logits(b), model_logits(a), sizeof(float) * c->vocab_size) == 0;
    for (int l = 0; l < c->n_layers; l++) {
        size_t at = (size_t)l * c->seq_len * c->kv_dim, bytes = sizeof(float) * (size_t)n * c->kv_dim;
        same &= memcmp(sb->key_cache + at, sa->key_cache + at, bytes) == 0;
        same &= memcmp(sb->value_cache + at, sa->value_cache + at, bytes) == 0;
    }
    snprintf(name, sizeof(name), "%s: prefill KV cache and last logits are the per-token bits", label);
    check(same, name, "they differ");
}

static void test_prefill_model(const char *label, const void *data, size_t size, int quantize_gs) {
    static const int tokens[40] = {1,   403, 407, 261, 383, 432, 17,  99,  256, 300, 12,  5,  480, 77,
                                   310, 222, 111, 44,  403, 407, 1,   2,   3,   4,   5,   6,  7,   8,
                                   9,   10,  200, 201, 202, 203, 204, 205, 206, 207, 208, 209};
    Model a, b;
    char err[256] = "";
    if (!data || model_create(&a, data, size, NULL, err, sizeof(err)) != 0) {
        check(0, label, "load failed: %s", err);
        return;
    }
    if (model_create(&b, data, size, NULL, err, sizeof(err)) != 0) {
        check(0, label, "load failed: %s", err);
        model_destroy(&a);
        return;
    }
    if (quantize_gs && (model_quantize(&a, quantize_gs, err, sizeof(err)) != 0 ||
                        model_quantize(&b, quantize_gs, err, sizeof(err)) != 0))
        check(0, label, "quantize failed: %s", err);
    int n = a.config.seq_len < 40 ? a.config.seq_len : 40;
    int toks[40];
    for (int i = 0; i < n; i++) toks[i] = tokens[i] % a.config.vocab_size;
    /* SSE2 twice: its int8 gemm forced to pmaddwd, then to the SWAR one. */
    const KernelSet *sets[] = {&kernels_scalar, &kernels_sse2, &kernels_sse2, &kernels_avx2, &kernels_avx512};
    for (int variant = 0; variant < 5; variant++) {
        if (variant >= 3 && isa_widest() < (variant == 3 ? ISA_AVX2 : ISA_AVX512)) break;
        kernels_use(sets[variant]->isa);
        kernels_sse2_gemm_force(variant == 2 ? KERNELS_GEMM_SWAR : KERNELS_GEMM_PMADDWD);
        char name[160];
        snprintf(name, sizeof(name), "%s (%s, %s%s)", label, model_matmul_name(&a), kernels_active()->name,
                 variant == 2 ? " swar gemm" : "");
        compare_prefill(name, &a, &b, toks, n, 7);
    }
    kernels_sse2_gemm_force(KERNELS_GEMM_MEASURE);
    kernels_use(ISA_SSE2);

    int bad = 5000;
    check(model_prefill(&b, toks, 0, 0) == -1 && model_prefill(&b, NULL, 1, 0) == -1 &&
              model_prefill(&b, toks, 1, -1) == -1 &&
              model_prefill(&b, toks, 2, a.config.seq_len - 1) == -1 && model_prefill(&b, &bad, 1, 0) == -1,
          "prefill rejects n 0, NULL tokens, negative start, past the context, bad token", "accepted");
    model_destroy(&a);
    model_destroy(&b);
}

static void test_prefill(void) {
    size_t size = 0;
    void *data = read_file_in(models_dir, "stories260K.bin", &size);
    test_prefill_model("stories260K fp32", data, size, 0);
    free(data);
    data = read_file_in(models_dir, "stories260K_q80.bin", &size);
    test_prefill_model("stories260K_q80", data, size, 0);
    free(data);
    char path[1100];
    if (generate_model(
            "prefill_v1.bin",
            "--dim 128 --hidden 256 --layers 2 --heads 4 --kv-heads 2 --vocab 320 --seq 64 --seed 4 "
            "--version 1",
            path, sizeof(path))) {
        data = read_file(path, &size);
        test_prefill_model("random dim 128 quantised GS 32", data, size, 32);
        free(data);
    }
}

int main(void) {
    models_dir = models_dir_from_env();
    test_begin(models_dir, temp_dir);
    kernels_use(ISA_SSE2);
    test_stories260k();
    test_random_models();
    test_prefill();
    return test_end(temp_dir);
}
