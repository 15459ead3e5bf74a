/* kv_logits.c - llama.cpp's logits of every position for a chosen KV
 * cache type and flash-attention setting: the reference for how far an f16
 * cache moves logits in llama.cpp itself (tests/host/test_gguf_kv.c cites
 * it). Not built by the Makefile: it links llama.cpp's libllama.
 *   cc -O2 tools/llamacpp/kv_logits.c -I$L/include -I$L/ggml/include \
 *      -L$L/build/bin -lllama -lggml-base -Wl,-rpath,$L/build/bin -o kv_logits
 *   kv_logits MODEL.gguf OUT.f32 f32|f16|q8_0 fa0|fa1 ID ...
 * Decodes the ids one position at a time on one thread and writes each
 * position's logits as float32, back to back (as llmrun --logits-out). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llama.h"

static void quiet(enum ggml_log_level level, const char *text, void *user) {
    (void)level, (void)text, (void)user;
}

static enum ggml_type kv_type(const char *name) {
    if (strcmp(name, "f16") == 0) return GGML_TYPE_F16;
    if (strcmp(name, "q8_0") == 0) return GGML_TYPE_Q8_0;
    return GGML_TYPE_F32;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s MODEL.gguf OUT.f32 f32|f16|q8_0 fa0|fa1 ID ...\n", argv[0]);
        return 1;
    }
    llama_log_set(quiet, NULL);
    llama_backend_init();
    struct llama_model *model = llama_model_load_from_file(argv[1], llama_model_default_params());
    if (!model) return fprintf(stderr, "cannot load %s\n", argv[1]), 1;
    struct llama_context_params params = llama_context_default_params();
    params.n_ctx = params.n_batch = params.n_ubatch = (uint32_t)(argc - 5 + 1);
    params.n_threads = params.n_threads_batch = 1;
    params.type_k = params.type_v = kv_type(argv[3]);
    params.flash_attn_type =
        strcmp(argv[4], "fa1") == 0 ? LLAMA_FLASH_ATTN_TYPE_ENABLED : LLAMA_FLASH_ATTN_TYPE_DISABLED;
    struct llama_context *ctx = llama_init_from_model(model, params);
    FILE *out = fopen(argv[2], "wb");
    if (!ctx || !out) return fprintf(stderr, "no context or no %s\n", argv[2]), 1;
    int vocab = llama_vocab_n_tokens(llama_model_get_vocab(model));
    for (int i = 5; i < argc; i++) {
        llama_token token = atoi(argv[i]);
        if (llama_decode(ctx, llama_batch_get_one(&token, 1)) != 0)
            return fprintf(stderr, "decode failed at position %d\n", i - 5), 1;
        fwrite(llama_get_logits_ith(ctx, -1), sizeof(float), (size_t)vocab, out);
    }
    fclose(out);
    llama_free(ctx);
    llama_model_free(model);
    return 0;
}
