/* test_gguf_kv.c - the KV cache types of GGUF models: f16 (the default) and
 * q8_0 against the f32 cache over 32 positions of every gguf-arch F32 model
 * (f16 within 0.01 at most and 2e-3 on average, q8_0 within a mean of 0.05), a type change
 * starting the cache over, refusals with their reasons, and the memory
 * figures (state bytes and the estimate) following the type. */
#include <math.h>
#include <string.h>

#include "llm/model/kv_cache.h"
#include "llm/model/model_estimate.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tests/host/llm_test_util.h"

enum { POSITIONS = 32 };

static const char *models_dir;
static int tokens[POSITIONS];

/* Logits of the first POSITIONS tokens with the cache of kv_type, into out
 * (POSITIONS rows of vocab); 0, or -1 with a failed check. */
static int run_logits(Model *t, uint32_t kv_type, float *out, const char *name) {
    char err[256];
    if (model_set_kv_type(t, kv_type, err, sizeof err) != 0) {
        check(0, name, "%s", err);
        return -1;
    }
    int vocab = t->config.vocab_size;
    for (int pos = 0; pos < POSITIONS; pos++) {
        const float *logits = model_forward(t, tokens[pos] % vocab, pos);
        if (!logits) {
            check(0, name, "forward failed at position %d", pos);
            return -1;
        }
        memcpy(out + (size_t)pos * vocab, logits, (size_t)vocab * sizeof(float));
    }
    return 0;
}

static void test_model(const char *stem) {
    char rel[256], name[256], err[256];
    snprintf(rel, sizeof rel, "gguf-arch/%s-F32.gguf", stem);
    size_t size;
    void *data = read_file_in(models_dir, rel, &size);
    Model t;
    if (!data || model_create(&t, data, size, NULL, err, sizeof err) != 0) {
        check(0, rel, "%s", data ? err : "missing");
        free(data);
        return;
    }
    check(model_kv_type(&t) == GGML_TYPE_F16, "a GGUF model starts with an f16 KV cache", "%s",
          kv_type_name(model_kv_type(&t)));
    size_t n = (size_t)POSITIONS * t.config.vocab_size;
    float *f32 = malloc(n * sizeof(float)), *other = malloc(n * sizeof(float));
    /* The issue asks for 2e-3 at most. Storing K and V as f16 alone moves
     * these logits by up to 0.0070 / 0.0086 / 0.0096 (qwen2 / qwen3-tied /
     * qwen3-untied): the f16 kernels give exactly the logits of the f32 path
     * fed the same f16-rounded rows, and at position 0 (softmax weight 1) the
     * output is the rounded V row itself, so no attention arithmetic can do
     * better. llama.cpp d32676d on the same files and tokens, f16 against
     * f32 cache, both without flash attention: max 0.0146 / 0.0165 / 0.0184,
     * mean 2.7e-3 / 3.0e-3 / 2.7e-3 (its default flash attention: max 0.019 /
     * 0.027 / 0.019). So the max bound is the tightest we meet, 0.01; the
     * mean keeps the 2e-3 (ours 1.3e-3 / 1.4e-3 / 1.3e-3). */
    snprintf(name, sizeof name, "%s-F32: f16 KV logits within 0.01 (mean 2e-3) of f32 KV over %d positions",
             stem, POSITIONS);
    if (run_logits(&t, GGML_TYPE_F32, f32, name) == 0 && run_logits(&t, GGML_TYPE_F16, other, name) == 0) {
        double worst = 0, sum = 0, scale = 0;
        for (size_t i = 0; i < n; i++) {
            double d = fabs((double)other[i] - f32[i]);
            worst = fmax(worst, d), sum += d, scale = fmax(scale, fabs((double)f32[i]));
        }
        check(worst <= 0.01 && sum / (double)n <= 2e-3, name, "max |difference| %.3g, mean %.3g", worst,
              sum / (double)n);
        printf("    %s-F32: f16 KV |logit difference| max %.3g, mean %.3g (max |logit| %.3g)\n", stem, worst,
               sum / (double)n, scale);
    }
    snprintf(name, sizeof name, "%s-F32: q8_0 KV mean |logit difference| at most 0.05 against f32 KV", stem);
    if (run_logits(&t, GGML_TYPE_Q8_0, other, name) == 0) {
        double sum = 0, worst = 0;
        for (size_t i = 0; i < n; i++) {
            double d = fabs((double)other[i] - f32[i]);
            sum += d, worst = fmax(worst, d);
        }
        check(sum / (double)n <= 0.05, name, "mean %.3g", sum / (double)n);
        printf("    %s-F32: q8_0 KV mean |logit difference| %.3g, max %.3g\n", stem, sum / (double)n, worst);
    }
    /* Back to f32: the new cache starts over, the logits are the first run's. */
    snprintf(name, sizeof name, "%s-F32: changing the KV type back gives the f32 logits again", stem);
    if (run_logits(&t, GGML_TYPE_F32, other, name) == 0)
        check(memcmp(other, f32, n * sizeof(float)) == 0, name, "logits differ");
    /* Memory figures follow the type, and the estimate matches each. */
    const uint32_t types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_Q8_0};
    size_t bytes[3] = {0};
    for (int i = 0; i < 3; i++) {
        snprintf(name, sizeof name, "%s-F32: %s KV state bytes equal the estimate", stem,
                 kv_type_name(types[i]));
        if (model_set_kv_type(&t, types[i], err, sizeof err) != 0) {
            check(0, name, "%s", err);
            continue;
        }
        bytes[i] = model_state_bytes(&t);
        int64_t estimate = model_state_bytes_estimate_kv(data, size, types[i]);
        check(estimate == (int64_t)bytes[i], name, "estimate %lld, state %zu", (long long)estimate, bytes[i]);
    }
    const ModelConfig *c = &t.config;
    uint64_t f16_cache = 2ull * c->n_layers * c->seq_len * c->kv_dim * 2;
    check(bytes[0] - bytes[1] == f16_cache && bytes[1] - bytes[2] == f16_cache - f16_cache * 34 / 64,
          "the KV cache takes 4, 2 and 34/32 bytes per value (f32, f16, q8_0)", "%zu %zu %zu", bytes[0],
          bytes[1], bytes[2]);
    free(f32), free(other);
    model_destroy(&t);
    free(data);
}

/* Refusals leave the model as it was. */
static void test_refusals(void) {
    char err[256] = "";
    size_t size;
    void *data = read_file_in(models_dir, "stories260K.gguf", &size);
    Model t;
    if (!data || model_create(&t, data, size, NULL, err, sizeof err) != 0) {
        check(0, "stories260K.gguf loads", "%s", data ? err : "missing");
        free(data);
        return;
    }
    int rc = model_set_kv_type(&t, GGML_TYPE_Q8_0, err, sizeof err);
    check(rc == -1 && strstr(err, "multiple of 32") && model_kv_type(&t) == GGML_TYPE_F16 &&
              model_forward(&t, 1, 0) != NULL,
          "q8_0 KV on a head size of 8 is refused, the f16 cache stays", "rc %d, '%s'", rc, err);
    check(model_state_bytes_estimate_kv(data, size, GGML_TYPE_Q8_0) == (int64_t)model_state_bytes(&t),
          "the q8_0 estimate of a model that refuses q8_0 is its f16 state", "%lld, state %zu",
          (long long)model_state_bytes_estimate_kv(data, size, GGML_TYPE_Q8_0), model_state_bytes(&t));
    rc = model_set_kv_type(&t, GGML_TYPE_Q4_0, err, sizeof err);
    check(rc == -1 && model_kv_type(&t) == GGML_TYPE_F16, "KV type Q4_0 is refused", "rc %d", rc);
    model_destroy(&t);
    free(data);
    data = read_file_in(models_dir, "stories260K.bin", &size);
    if (data && model_create(&t, data, size, NULL, err, sizeof err) == 0) {
        rc = model_set_kv_type(&t, GGML_TYPE_F16, err, sizeof err);
        check(rc == -1 && strstr(err, "fp32") && model_kv_type(&t) == GGML_TYPE_F32,
              "llama2.c checkpoints keep an fp32 KV cache", "rc %d, '%s'", rc, err);
        model_destroy(&t);
    } else {
        check(0, "stories260K.bin loads", "%s", data ? err : "missing");
    }
    free(data);
}

int main(void) {
    models_dir = models_dir_from_env();
    char path[1024];
    snprintf(path, sizeof path, "%s/gguf-arch/tokens.txt", models_dir);
    FILE *f = fopen(path, "r");
    int n = 0;
    while (f && n < POSITIONS && fscanf(f, "%d", &tokens[n]) == 1) n++;
    if (f) fclose(f);
    if (n < POSITIONS) {
        printf("SKIP: %s missing\n", path);
        return 0;
    }
    test_model("qwen2");
    test_model("qwen3-tied");
    test_model("qwen3-untied");
    test_refusals();
    return failures ? 1 : 0;
}
