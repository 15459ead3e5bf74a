/* arena.h - carving one allocation into arrays, each start aligned. With
 * base NULL it only measures (arena.used is then the size to allocate), so
 * one list of takes serves both the size and the carving. Alignment is
 * relative to base: the caller aligns base at least as strictly. */
#ifndef LIB_ARENA_H
#define LIB_ARENA_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint8_t *base; /* NULL: measure only */
    uint64_t used;
    int overflow; /* set once a take would pass SIZE_MAX less 64 bytes of slack */
} Arena;

/* count items of size bytes at the next multiple of align (a power of two);
 * NULL when measuring or on overflow. */
static inline void *arena_take(Arena *a, uint64_t count, uint64_t size, uint64_t align) {
    uint64_t at = (a->used + align - 1) & ~(align - 1), bytes, end;
    if (__builtin_mul_overflow(count, size, &bytes) || __builtin_add_overflow(at, bytes, &end) ||
        end > (uint64_t)SIZE_MAX - 64) {
        a->overflow = 1;
        return NULL;
    }
    a->used = end;
    return a->base ? a->base + at : NULL;
}

#endif
