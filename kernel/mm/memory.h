/* memory.h - physical pages, the direct map and the kernel heap. */
#ifndef KERNEL_MEMORY_H
#define KERNEL_MEMORY_H

#include <stddef.h>
#include <stdint.h>
#include "boot/boot_info.h"

#define PAGE_SIZE 4096ULL

static inline void *phys_to_virt(uint64_t phys) {
    return (void *)(phys + DIRECT_MAP_BASE);
}
static inline uint64_t virt_to_phys_direct(const void *virt) {
    return (uint64_t)virt - DIRECT_MAP_BASE;
}

/* Physical page allocator (built from the boot memory map). Returns the
 * physical address of `count` contiguous pages (contents undefined), or 0
 * when there is no such run. */
uint64_t page_alloc(size_t count);
void page_free(uint64_t phys, size_t count);
/* Like page_alloc, but the whole run lies below limit_phys (DMA for a
 * device limited to 32-bit addresses: limit 4 GiB). */
uint64_t page_alloc_below(uint64_t limit_phys, size_t count);
/* From now on page_alloc tries pages at or above min_phys first, then the
 * rest (boot.cfg debug_alloc=high: proves DMA limits hold when RAM above
 * 4 GiB comes first). */
void page_alloc_prefer_above(uint64_t min_phys);
/* Frees what the loader allocated for [base, base + size) and protected
 * (the kernel file, once its symbols are copied). */
void page_alloc_release_loader_data(uint64_t base, uint64_t size);
/* Pages in the longest run of free pages: the largest page_alloc that can succeed now. */
uint64_t page_largest_free_run(void);

/* Boot-time setup, called by kernel_main in this order. */
void page_alloc_init(const struct boot_info *info, uint64_t boot_info_phys);
/* Frees boot-services memory once the kernel runs on its own page tables and stack. */
void page_alloc_reclaim_boot_services(const struct boot_info *info);
/* Bytes the heap currently hands out and the pages it holds (for /mem). */
uint64_t heap_bytes_in_use(void);
uint64_t heap_pages_held(void);

struct memory_stats {
    uint64_t total_bytes; /* usable RAM managed by the page allocator */
    uint64_t free_bytes;
    uint64_t used_bytes; /* total - free */
    uint64_t ramdisk_bytes;
    uint64_t kernel_image_bytes;
    uint64_t heap_bytes;   /* bytes currently handed out by kmalloc */
    uint64_t highest_phys; /* end of the highest usable RAM */
};
void memory_get_stats(struct memory_stats *out);

/* Kernel heap. kmalloc returns 16-byte aligned memory (page aligned for
 * allocations of a page or more), NULL on failure; never panics. */
void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *p);

#endif
