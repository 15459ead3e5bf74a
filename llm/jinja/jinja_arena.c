/* jinja_arena.c - one rendering's memory: chunks taken from malloc, handed
 * out in order, freed in one go; a hard limit on the total, so a template
 * that builds ever larger strings ends with a reason instead of exhausting
 * the kernel's heap. */
#include <stdarg.h>

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

#define CHUNK_SIZE (64u << 10)

struct ArenaChunk {
    ArenaChunk *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

void arena_init(Arena *a, size_t limit) {
    a->head = NULL;
    a->used = 0;
    a->limit = limit;
}

void arena_free(Arena *a) {
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *next = c->next;
        free(c);
        c = next;
    }
    a->head = NULL;
    a->used = 0;
}

void jfail(Jinja *J, const char *fmt, ...) {
    if (J->failed) return; /* the first reason is the one that matters */
    J->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(J->err, sizeof J->err, fmt, ap);
    va_end(ap);
    /* a reason is one line, whatever text (a raise_exception message) it quotes */
    for (char *c = J->err; *c; c++)
        if ((unsigned char)*c < 0x20) *c = ' ';
}

void *jalloc(Jinja *J, size_t size) {
    Arena *a = &J->arena;
    size = (size + 15) & ~(size_t)15;
    if (size > a->limit || a->used + size > a->limit) {
        jfail(J, "the template needs more than %zu MiB of memory", a->limit >> 20);
        return NULL;
    }
    ArenaChunk *c = a->head;
    if (!c || c->size - c->used < size) {
        size_t chunk = size > CHUNK_SIZE ? size : CHUNK_SIZE;
        c = malloc(sizeof *c + chunk);
        if (!c) {
            jfail(J, "out of memory");
            return NULL;
        }
        c->size = chunk;
        c->used = 0;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->data + c->used;
    c->used += size;
    a->used += size;
    memset(p, 0, size);
    return p;
}
