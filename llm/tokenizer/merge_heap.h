/* merge_heap.h - the candidate heap both merge loops share: tokenizer.c
 * (tokenizer.bin, llama2.c's rule) and bpe.c (GGUF SentencePiece and
 * byte-level BPE). Best first: higher priority, then the leftmost pair. */
#ifndef LLM_TOKENIZER_MERGE_HEAP_H
#define LLM_TOKENIZER_MERGE_HEAP_H

#include <stddef.h>

/* A candidate merge of the adjacent symbols left and right. left_tag and
 * right_tag record the two symbols as they were when it was made (their
 * tokens, or their lengths); the loop skips it as stale once either differs. */
typedef struct {
    float priority;
    int left, right;
    int left_tag, right_tag;
    int result; /* the token the merge makes */
} MergeCandidate;

typedef struct {
    MergeCandidate *items; /* the caller's room: enough for every push */
    size_t count;
} MergeHeap;

void merge_heap_push(MergeHeap *h, MergeCandidate c);
/* The best candidate; count must be above 0. */
MergeCandidate merge_heap_pop(MergeHeap *h);

#endif
