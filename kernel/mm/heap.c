/* heap.c - kmalloc and friends, in three tiers:
 *   small  (up to 1 KiB with the header): power-of-two blocks carved from
 *          one-page slabs; a slab goes back to the page allocator as soon as
 *          its last block is freed, so memory use returns exactly to where it
 *          was once transient allocations are gone (no high-water growth);
 *   medium (up to a page with the header): a page of its own, header first;
 *   large  (more): a page run plus one header page in front, so the returned
 *          pointer is page aligned.
 * Every block carries a 16-byte header with a magic word so kfree catches
 * double frees and foreign pointers. Also provides malloc/calloc/realloc/free
 * for lib/ and llm/. */
#include "kernel/mm/memory.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "lib/string.h"
#include "lib/stdlib.h"
#include <stdint.h>

#define HEADER_SIZE 16
#define MAGIC_USED 0x4b4d414cu /* block handed out */
#define MAGIC_FREE 0x46524545u /* block on a free list */
#define MAGIC_SLAB 0x534c4142u /* start of a slab page */
#define CLASS_COUNT 6          /* 32, 64, ..., 1024 */
#define MIN_CLASS_SHIFT 5
#define MEDIUM_CLASS 0xfeu
#define LARGE_CLASS 0xffu
#define SLAB_HEADER_SIZE 64 /* the first 64 bytes of a slab page; blocks follow */

struct block_header {
    uint32_t magic;
    uint32_t size_class; /* 0..CLASS_COUNT-1, MEDIUM_CLASS or LARGE_CLASS */
    uint64_t size;       /* requested bytes (small, medium) or data pages (large) */
};
_Static_assert(sizeof(struct block_header) == HEADER_SIZE, "header keeps 16-byte alignment");

struct free_block {
    struct block_header header;
    struct free_block *next;
};

/* At the start of each slab page. Slabs with at least one free block are on
 * their class's list. */
struct slab {
    uint32_t magic;
    uint32_t size_class;
    uint32_t used, capacity;
    struct free_block *free;
    struct slab *prev, *next;
    int on_list;
};
_Static_assert(sizeof(struct slab) <= SLAB_HEADER_SIZE, "slab header fits before the first block");

static struct slab *partial_slabs[CLASS_COUNT];
static uint64_t bytes_in_use;
static uint64_t pages_held;
static volatile int heap_lock_word;

/* The heap may be called from several CPUs once SMP workers run. */
static void heap_lock(void) {
    while (__atomic_exchange_n(&heap_lock_word, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&heap_lock_word, __ATOMIC_RELAXED)) cpu_relax();
}
static void heap_unlock(void) {
    __atomic_store_n(&heap_lock_word, 0, __ATOMIC_RELEASE);
}

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

static void list_remove(struct slab *s) {
    if (s->prev)
        s->prev->next = s->next;
    else
        partial_slabs[s->size_class] = s->next;
    if (s->next) s->next->prev = s->prev;
    s->prev = s->next = NULL;
    s->on_list = 0;
}

static void list_push(struct slab *s) {
    s->prev = NULL;
    s->next = partial_slabs[s->size_class];
    if (s->next) s->next->prev = s;
    partial_slabs[s->size_class] = s;
    s->on_list = 1;
}

static struct slab *new_slab(int c) {
    uint64_t phys = page_alloc(1);
    if (!phys) return NULL;
    pages_held++;
    struct slab *s = phys_to_virt(phys);
    size_t block = (size_t)1 << (c + MIN_CLASS_SHIFT);
    size_t first =
        block < SLAB_HEADER_SIZE ? SLAB_HEADER_SIZE : block; /* keeps blocks aligned to their size */
    *s = (struct slab){.magic = MAGIC_SLAB, .size_class = (uint32_t)c};
    for (size_t off = PAGE_SIZE - block; off >= first; off -= block) {
        struct free_block *b = (struct free_block *)((uint8_t *)s + off);
        b->header.magic = MAGIC_FREE;
        b->header.size_class = (uint32_t)c;
        b->next = s->free;
        s->free = b;
        s->capacity++;
    }
    list_push(s);
    return s;
}

static void *alloc_small(int c, size_t size) {
    struct slab *s = partial_slabs[c];
    if (!s && !(s = new_slab(c))) return NULL;
    struct free_block *b = s->free;
    s->free = b->next;
    s->used++;
    if (!s->free) list_remove(s);
    b->header.magic = MAGIC_USED;
    b->header.size = size;
    bytes_in_use += size;
    return (uint8_t *)b + HEADER_SIZE;
}

static void *alloc_pages(size_t size) {
    if (size + HEADER_SIZE <= PAGE_SIZE) { /* medium: one page, header first */
        uint64_t phys = page_alloc(1);
        if (!phys) return NULL;
        pages_held++;
        struct block_header *h = phys_to_virt(phys);
        *h = (struct block_header){MAGIC_USED, MEDIUM_CLASS, size};
        bytes_in_use += size;
        return (uint8_t *)h + HEADER_SIZE;
    }
    if (size > (1ull << 46)) return NULL;
    uint64_t pages = (size + PAGE_SIZE - 1) / PAGE_SIZE;
    uint64_t phys = page_alloc(pages + 1); /* +1: the header page */
    if (!phys) return NULL;
    pages_held += pages + 1;
    uint8_t *data = (uint8_t *)phys_to_virt(phys) + PAGE_SIZE;
    struct block_header *h = (struct block_header *)(data - HEADER_SIZE);
    *h = (struct block_header){MAGIC_USED, LARGE_CLASS, pages};
    bytes_in_use += pages * PAGE_SIZE;
    return data;
}

static void *kmalloc_locked(size_t size) {
    if (size == 0) size = 1;
    int c = class_for(size);
    return c >= 0 ? alloc_small(c, size) : alloc_pages(size);
}

void *kmalloc(size_t size) {
    heap_lock();
    void *p = kmalloc_locked(size);
    heap_unlock();
    return p;
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
    int ok = h->magic == MAGIC_USED;
    if (ok && h->size_class < CLASS_COUNT) {
        const struct slab *s = (const struct slab *)(addr & ~(PAGE_SIZE - 1));
        ok = s->magic == MAGIC_SLAB && s->size_class == h->size_class;
    } else if (ok && h->size_class == MEDIUM_CLASS) {
        ok = addr % PAGE_SIZE == HEADER_SIZE;
    } else if (ok) {
        ok = h->size_class == LARGE_CLASS && addr % PAGE_SIZE == 0;
    }
    if (!ok) {
        kprintf("%s: bad pointer %p (no heap header) ignored\n", who, p);
        return NULL;
    }
    return h;
}

static size_t usable_size(const struct block_header *h) {
    if (h->size_class == LARGE_CLASS) return h->size * PAGE_SIZE;
    if (h->size_class == MEDIUM_CLASS) return PAGE_SIZE - HEADER_SIZE;
    return ((size_t)1 << (h->size_class + MIN_CLASS_SHIFT)) - HEADER_SIZE;
}

static void kfree_locked(void *p) {
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
    if (h->size_class == MEDIUM_CLASS) {
        pages_held--;
        page_free(virt_to_phys_direct(h), 1);
        return;
    }
    struct slab *s = (struct slab *)((uint64_t)p & ~(PAGE_SIZE - 1));
    struct free_block *b = (struct free_block *)h;
    b->next = s->free;
    s->free = b;
    s->used--;
    if (s->used == 0) { /* empty: the page goes back */
        if (s->on_list) list_remove(s);
        s->magic = 0;
        pages_held--;
        page_free(virt_to_phys_direct(s), 1);
    } else if (!s->on_list) {
        list_push(s);
    }
}

void kfree(void *p) {
    if (!p) return;
    heap_lock();
    kfree_locked(p);
    heap_unlock();
}

static void *krealloc(void *p, size_t size) {
    if (!p) return kmalloc(size);
    if (size == 0) {
        kfree(p);
        return NULL;
    }
    heap_lock();
    struct block_header *h = checked_header(p, "krealloc");
    if (!h) {
        heap_unlock();
        return NULL;
    }
    size_t old_usable = usable_size(h);
    if (size <= old_usable && h->size_class != LARGE_CLASS) {
        bytes_in_use += size - h->size; /* same block, new request size */
        h->size = size;
        heap_unlock();
        return p;
    }
    if (size <= old_usable) { /* large block already big enough */
        heap_unlock();
        return p;
    }
    void *q = kmalloc_locked(size);
    if (q) {
        memcpy(q, p, old_usable < size ? old_usable : size);
        kfree_locked(p);
    }
    heap_unlock();
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
