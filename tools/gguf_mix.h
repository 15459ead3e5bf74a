/* gguf_mix.h - which ggml type each tensor of a llama model gets when a
 * file is written as T, and llama.cpp's Q4_K_M mix: Q4_K, with Q6_K for the
 * classifier (the token embedding when it is tied) and for attn_v and
 * ffn_down (or ffn_down_exps) in the first and last eighth of the layers and every third layer
 * between. Header only, shared by gguf_convert and gen_gguf (every
 * tools/NAME.c is a program of its own). */
#ifndef TOOLS_GGUF_MIX_H
#define TOOLS_GGUF_MIX_H

#include <stdint.h>
#include <string.h>

#include "llm/tensor/ggml_types.h"

/* llama.cpp's use_more_bits: the first and last eighth of the layers, and
 * every third layer in between. */
static inline int use_more_bits(int layer, int n_layers) {
    return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

/* type, or when rows of ne0 values are not a whole number of its blocks,
 * Q8_0 (if they are of Q8_0's) or else otherwise. */
static inline uint32_t fitting_type(uint32_t type, uint64_t ne0, uint32_t otherwise) {
    if (ne0 % ggml_type_info(type)->block_elems == 0) return type;
    return ne0 % QK32 == 0 ? GGML_TYPE_Q8_0 : otherwise;
}

/* general.file_type (llama_ftype) of a file written as qtype (Q4_K with
 * k_mix: Q4_K_M). */
static inline uint32_t file_type(uint32_t qtype, int k_mix) {
    return qtype == GGML_TYPE_F32    ? 0
           : qtype == GGML_TYPE_F16  ? 1
           : qtype == GGML_TYPE_BF16 ? 32
           : qtype == GGML_TYPE_Q8_0 ? 7
           : qtype == GGML_TYPE_Q4_0 ? 2
           : qtype == GGML_TYPE_Q6_K ? 18
           : k_mix                   ? 15
                                     : 14;
}

/* The layer number of a "blk.N." tensor name of len bytes, or -1. */
static inline int tensor_layer(const char *name, size_t len) {
    if (len < 5 || memcmp(name, "blk.", 4) != 0) return -1;
    int n = 0;
    size_t i = 4;
    for (; i < len && name[i] >= '0' && name[i] <= '9'; i++) n = n * 10 + (name[i] - '0');
    return i > 4 && i < len && name[i] == '.' ? n : -1;
}

static inline int tensor_name_ends(const char *name, size_t len, const char *suffix) {
    size_t n = strlen(suffix);
    return len >= n && memcmp(name + len - n, suffix, n) == 0;
}

/* The type of the matrix `name` (len bytes) with rows of ne0 values: qtype,
 * or Q6_K where Q4_K_M (k_mix) wants more bits; tied: the model has no
 * output.weight, its token embedding is the classifier. Rows that do not
 * split into the type's blocks fall back to Q8_0 or otherwise. */
static inline uint32_t matrix_type(const char *name, size_t len, uint64_t ne0, uint32_t qtype, int k_mix,
                                   int n_layers, int tied, uint32_t otherwise) {
    uint32_t type = qtype;
    if (k_mix) {
        int layer = tensor_layer(name, len);
        int classifier = (len == 13 && memcmp(name, "output.weight", 13) == 0) ||
                         (tied && len == 17 && memcmp(name, "token_embd.weight", 17) == 0);
        if (classifier || ((tensor_name_ends(name, len, ".attn_v.weight") ||
                            tensor_name_ends(name, len, ".ffn_down.weight") ||
                            tensor_name_ends(name, len, ".ffn_down_exps.weight")) &&
                           layer >= 0 && use_more_bits(layer, n_layers)))
            type = GGML_TYPE_Q6_K;
    }
    return fitting_type(type, ne0, otherwise);
}

#endif
