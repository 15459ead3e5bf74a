/* heap.c - kmalloc and friends. Small blocks come from power-of-two size
 * classes (32 B .. 4 KiB including a 16-byte header) carved from pages;
 * large blocks get their own page run plus one header page in front, so the
 * returned pointer is page aligned. Every block carries a header with a magic
 * word so kfree can catch double frees and foreign pointers. Also provides
 * malloc/calloc/realloc/free for lib/ and llm/. */
#include "kernel/memory.h"
#include "kernel/console.h"
#include "lib/string.h"
#include "lib/stdlib.h"
#include <stdint.h>

#define HEADER_SIZE 16
#define MAGIC_USED 0x4b4d414cu /* block handed out */
#define MAGIC_FREE 0x46524545u /* block on a free list */
#define CLASS_COUNT 8          /* 32, 64, ..., 4096 */
#define MIN_CLASS_SHIFT 5
#define LARGE_CLASS 0xffu
#define SLAB_PAGES 4 /* pages carved at once for the small classes */

struct block_header {
    uint32_t magic;
    uint32_t size_class; /* 0..CLASS_COUNT-1 or LARGE_CLASS */
    uint64_t size;       /* requested bytes (small) or data pages (large) */
};
_Static_assert(sizeof(struct block_header) == HEADER_SIZE, "header keeps 16-byte alignment");

struct free_block {
    struct block_header header;
    struct free_block *next;
};

static struct free_block *free_lists[CLASS_COUNT];
static uint64_t bytes_in_use;
static uint64_t pages_held;

uint64_t heap_bytes_in_use(void) {
    return bytes_in_use;
}
uint64_t heap_pages_held(void) {
    return pages_held;
}

static int class_for(size_t size) {
    size_t total = size + HEADER_SIZE;
    for (int c = 0; c < CLASS_COUNT; c++)
        if (total <= (size_t)1 << (c + MIN_CLASS_SHIFT)) return c;
    return -1;
}

static int refill(int c) {
    size_t block = (size_t)1 << (c + MIN_CLASS_SHIFT);
    uint64_t phys = page_alloc(SLAB_PAGES);
    if (!phys) return 0;
    pages_held += SLAB_PAGES;
    uint8_t *base = phys_to_virt(phys);
    for (size_t off = 0; off + block <= SLAB_PAGES * PAGE_SIZE; off += block) {
        struct free_block *b = (struct free_block *)(base + off);
        b->header.magic = MAGIC_FREE;
        b->header.size_class = (uint32_t)c;
        b->next = free_lists[c];
        free_lists[c] = b;
    }
    return 1;
}

void *kmalloc(size_t size) {
    if (size == 0) size = 1;
    int c = class_for(size);
    if (c >= 0) {
        if (!free_lists[c] && !refill(c)) return NULL;
        struct free_block *b = free_lists[c];
        free_lists[c] = b->next;
        b->header.magic = MAGIC_USED;
        b->header.size = size;
        bytes_in_use += size;
        return (uint8_t *)b + HEADER_SIZE;
    }
    if (size > (1ull << 46)) return NULL;
    uint64_t pages = (size + PAGE_SIZE - 1) / PAGE_SIZE;
    uint64_t phys = page_alloc(pages + 1); /* +1: the header page */
    if (!phys) return NULL;
    pages_held += pages + 1;
    uint8_t *data = (uint8_t *)phys_to_virt(phys) + PAGE_SIZE;
    struct block_header *h = (struct block_header *)(data - HEADER_SIZE);
    h->magic = MAGIC_USED;
    h->size_class = LARGE_CLASS;
    h->size = pages;
    bytes_in_use += pages * PAGE_SIZE;
    return data;
}

void *kzalloc(size_t size) {
    void *p = kmalloc(size);
    if (p) memset(p, 0, size);
    return p;
}

/* The header of a live block, or NULL (after a message) for a bad pointer. */
static struct block_header *checked_header(void *p, const char *who) {
    uint64_t addr = (uint64_t)p;
    if (addr % 16 || addr < DIRECT_MAP_BASE + PAGE_SIZE || addr >= DIRECT_MAP_BASE + (1ull << 46)) {
        kprintf("%s: bad pointer %p (not from kmalloc) ignored\n", who, p);
        return NULL;
    }
    struct block_header *h = (struct block_header *)((uint8_t *)p - HEADER_SIZE);
    if (h->magic == MAGIC_FREE) {
        kprintf("%s: double free of %p ignored\n", who, p);
        return NULL;
    }
    if (h->magic != MAGIC_USED || (h->size_class >= CLASS_COUNT && h->size_class != LARGE_CLASS)) {
        kprintf("%s: bad pointer %p (no heap header) ignored\n", who, p);
        return NULL;
    }
    return h;
}

static size_t usable_size(const struct block_header *h) {
    if (h->size_class == LARGE_CLASS) return h->size * PAGE_SIZE;
    return ((size_t)1 << (h->size_class + MIN_CLASS_SHIFT)) - HEADER_SIZE;
}

void kfree(void *p) {
    if (!p) return;
    struct block_header *h = checked_header(p, "kfree");
    if (!h) return;
    h->magic = MAGIC_FREE;
    if (h->size_class == LARGE_CLASS) {
        uint64_t pages = h->size;
        bytes_in_use -= pages * PAGE_SIZE;
        pages_held -= pages + 1;
        page_free(virt_to_phys_direct(p) - PAGE_SIZE, pages + 1);
        return;
    }
    bytes_in_use -= h->size;
    struct free_block *b = (struct free_block *)h;
    b->next = free_lists[h->size_class];
    free_lists[h->size_class] = b;
}

void *krealloc(void *p, size_t size) {
    if (!p) return kmalloc(size);
    if (size == 0) {
        kfree(p);
        return NULL;
    }
    struct block_header *h = checked_header(p, "krealloc");
    if (!h) return NULL;
    size_t old_usable = usable_size(h);
    if (size <= old_usable && h->size_class != LARGE_CLASS) {
        bytes_in_use += size - h->size; /* same block, new request size */
        h->size = size;
        return p;
    }
    if (size <= old_usable) return p; /* large block already big enough */
    void *q = kmalloc(size);
    if (!q) return NULL;
    memcpy(q, p, old_usable < size ? old_usable : size);
    kfree(p);
    return q;
}

void *malloc(size_t size) {
    return kmalloc(size);
}
void free(void *p) {
    kfree(p);
}
void *realloc(void *p, size_t size) {
    return krealloc(p, size);
}
void *calloc(size_t n, size_t size) {
    if (size && n > (size_t)-1 / size) return NULL;
    return kzalloc(n * size);
}
