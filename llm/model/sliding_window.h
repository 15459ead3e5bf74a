/* sliding_window.h - sliding-window attention (gemma3's local layers) and
 * its bounded KV cache. A local layer's query at position p sees the keys
 * max(0, p - window + 1)..p (window keys, its own included), as llama.cpp's
 * LLAMA_SWA_TYPE_STANDARD mask; every pattern-th layer (l % pattern ==
 * pattern - 1) is global and sees 0..p. A local layer keeps only a ring of
 * window + GGUF_PREFILL_WINDOW_MAX - 1 positions (a batch writes all its rows
 * before its first row attends), with the first window - 1 slots mirrored
 * after the ring so that every window is one contiguous run of slots. */
#ifndef LLM_SLIDING_WINDOW_H
#define LLM_SLIDING_WINDOW_H

#include <stdint.h>

/* 1 when layer l is local (window > 0; pattern 0: every layer local). */
int swa_layer_is_local(int window, int pattern, int layer);
/* Positions a local layer's ring holds; 0 when the context is short enough
 * that the layer keeps every position (no ring). */
int swa_ring_positions(int seq_len, int window);
/* Cache slots per key/value head of layer l (seq_len for a global layer). */
int swa_layer_slots(int seq_len, int window, int pattern, int layer);
/* Slots per key/value head summed over the layers: the cache holds this
 * many rows of kv_dim values, keys and values each. */
uint64_t swa_cache_positions(uint64_t layers, uint64_t seq_len, int window, int pattern);

#endif
