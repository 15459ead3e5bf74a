/* arch_gemma3.h - internal: what the gemma3 architecture adds to the GGUF
 * model (llm/model/arch_gemma3.c) and the sliding-window KV cache it needs
 * (llm/model/sliding_window.c), called from gguf_*.c. */
#ifndef LLM_ARCH_GEMMA3_H
#define LLM_ARCH_GEMMA3_H

#include <stddef.h>

#include "llm/model/gguf_hparams.h"
#include "llm/model/gguf_model.h"

/* Sets the defaults every architecture shares (no window, embedding scale
 * 1, SwiGLU, attention scale 1/sqrt(head_size), no softcap). */
void gguf_arch_defaults(GgufModel *m);
/* gemma3's sliding window and pattern into h (h->trained_ctx read
 * already): for gguf_hparams_read, which the estimate asks too. 0, or -1
 * with a one-line reason. */
int gemma3_read_window(const GgufFile *f, GgufHparams *h, char *err, size_t n);
/* gemma3's other keys (local RoPE base, softcap) and fixed choices
 * (sqrt(dim) embedding scale, GeGLU); m->swa_window set already. 0, or -1
 * with a one-line reason. */
int gemma3_read_hparams(GgufModel *m, char *err, size_t n);
/* In place: a[i] = gelu(a[i]) * b[i], GELU's tanh approximation; b is
 * overwritten (scratch). */
void gelu_tanh_mul(float *a, float *b, int n);
/* In place: x[i] = cap * tanh(x[i] / cap). */
void logits_softcap(float *x, int n, float cap);

/* Each layer's place in the KV cache (kv_row0, kv_slots, kv_ring, local)
 * for m->config.seq_len positions; returns the rows per cache. */
uint64_t gguf_kv_layout(GgufModel *m);
/* Writes position pos's key and value rows (every kv head) of layer l. */
void kv_store_position(GgufModel *m, int layer, int pos, const float *k, const float *v);
/* The keys a query at pos sees in layer l: count returned, the first one's
 * slot in *first_slot (the rest follow it). */
int kv_visible(const GgufModel *m, int layer, int pos, int *first_slot);
/* cos/sin of each rotated pair at pos for local layers (base rope_base_local, no linear scaling). */
void rope_angles_local(const GgufModel *m, int pos, float *cs);

#endif
