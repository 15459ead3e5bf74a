/* merge_heap.c - a binary heap of merge candidates (see merge_heap.h). */
#include "llm/tokenizer/merge_heap.h"

/* Ties go to the leftmost pair: llama2.c and llama.cpp both take the first
 * occurrence of the best; symbols keep their order, so left orders pairs. */
static int candidate_before(const MergeCandidate *a, const MergeCandidate *b) {
    if (a->priority != b->priority) return a->priority > b->priority;
    return a->left < b->left;
}

void merge_heap_push(MergeHeap *h, MergeCandidate c) {
    size_t i = h->count++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!candidate_before(&c, &h->items[parent])) break;
        h->items[i] = h->items[parent];
        i = parent;
    }
    h->items[i] = c;
}

MergeCandidate merge_heap_pop(MergeHeap *h) {
    MergeCandidate top = h->items[0];
    MergeCandidate last = h->items[--h->count];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= h->count) break;
        if (child + 1 < h->count && candidate_before(&h->items[child + 1], &h->items[child])) child++;
        if (!candidate_before(&h->items[child], &last)) break;
        h->items[i] = h->items[child];
        i = child;
    }
    if (h->count) h->items[i] = last;
    return top;
}
