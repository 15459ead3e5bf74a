/* page_alloc.c - physical page allocator: one bit per 4 KiB page over
 * [0, end of the highest RAM region), set = in use. The bitmap lives in the
 * first usable region big enough for it. Usable RAM is free at start,
 * boot-services memory once reclaimed; loader memory (kernel, ramdisk, boot
 * info, kernel file) and everything below 1 MiB stay reserved.
 * page_alloc/page_alloc_above/page_free may run on any CPU: a spinlock
 * guards the bitmap. Lock order: the heap's lock, then this one (this file
 * never calls the heap or the console with the lock held). */
#include "kernel/mm/memory.h"
#include "kernel/arch/cpu.h"
#include "kernel/kernel.h"
#include "kernel/console/console.h"
#include "lib/format.h"
#include "lib/string.h"

#define LOW_MEMORY_END (1ull << 20)
#define FIRST_PAGE (LOW_MEMORY_END / PAGE_SIZE)

static uint64_t *bitmap;
static uint64_t bitmap_pages;  /* pages the bitmap covers */
static uint64_t managed_pages; /* usable + reclaimed + loader pages */
static uint64_t free_pages;
static uint64_t rover = FIRST_PAGE;
static uint64_t
    prefer_from; /* boot.cfg debug_alloc=high: page_alloc tries pages from here up first; 0: off */
static uint64_t highest_ram;
static uint64_t loader_ram_pages;
static volatile int page_lock_word;

static void page_lock(void) {
    while (__atomic_exchange_n(&page_lock_word, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&page_lock_word, __ATOMIC_RELAXED)) cpu_relax();
}
static void page_unlock(void) {
    __atomic_store_n(&page_lock_word, 0, __ATOMIC_RELEASE);
}

/* Ranges that must never become free, whatever type the map gives them. */
struct phys_range {
    uint64_t base, end;
};
static struct phys_range protected_ranges[5];
static int protected_count;

static inline int page_used(uint64_t page) {
    return (bitmap[page / 64] >> (page % 64)) & 1;
}
static inline void mark_used(uint64_t page) {
    bitmap[page / 64] |= 1ull << (page % 64);
}
static inline void mark_free(uint64_t page) {
    bitmap[page / 64] &= ~(1ull << (page % 64));
}

static int is_ram(uint32_t type) {
    return type == BOOT_MEM_USABLE || type == BOOT_MEM_RECLAIMABLE || type == BOOT_MEM_LOADER;
}

static void protect(uint64_t base, uint64_t size) {
    if (size == 0 || protected_count == (int)(sizeof protected_ranges / sizeof protected_ranges[0])) return;
    uint64_t start = base & ~(PAGE_SIZE - 1), end = (base + size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    protected_ranges[protected_count++] = (struct phys_range){start, end};
}

/* Without -mpopcnt GCC would call libgcc, which the kernel does not link. */
static unsigned count_bits(uint64_t x) {
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (unsigned)((x * 0x0101010101010101ull) >> 56);
}

/* Sets or clears bits [first, last), a word at a time where possible;
 * returns how many bits changed. */
static uint64_t set_bits(uint64_t first, uint64_t last, int used) {
    uint64_t changed = 0;
    while (first < last) {
        uint64_t word = first / 64, bit = first % 64;
        uint64_t n = 64 - bit < last - first ? 64 - bit : last - first;
        uint64_t mask = (n == 64 ? ~0ull : ((1ull << n) - 1)) << bit;
        uint64_t before = bitmap[word];
        bitmap[word] = used ? before | mask : before & ~mask;
        changed += count_bits((before ^ bitmap[word]) & mask);
        first += n;
    }
    return changed;
}

/* Frees [first, last) minus the protected ranges (from index `from` on). */
static void free_pages_except_protected(uint64_t first, uint64_t last, int from) {
    for (int i = from; i < protected_count && first < last; i++) {
        uint64_t p_first = protected_ranges[i].base / PAGE_SIZE, p_last = protected_ranges[i].end / PAGE_SIZE;
        if (p_last <= first || p_first >= last) continue;
        if (p_first > first) free_pages_except_protected(first, p_first, i + 1);
        first = p_last; /* continue after the protected range */
    }
    if (first < last) free_pages += set_bits(first, last, 0);
}

/* Frees the pages of a region (clipped to the bitmap, above 1 MiB, not protected). */
static void free_region(uint64_t base, uint64_t pages) {
    uint64_t first = base / PAGE_SIZE, last = first + pages;
    if (first < FIRST_PAGE) first = FIRST_PAGE;
    if (last > bitmap_pages) last = bitmap_pages;
    if (first < last) free_pages_except_protected(first, last, 0);
}

static void reserve_region(uint64_t base, uint64_t pages) {
    uint64_t first = base / PAGE_SIZE, last = first + pages;
    if (last > bitmap_pages) last = bitmap_pages;
    if (first < last) free_pages -= set_bits(first, last, 1);
}

void page_alloc_init(const struct boot_info *info, uint64_t boot_info_phys) {
    for (uint32_t i = 0; i < info->mem_region_count; i++) {
        const struct boot_mem_region *r = &info->mem[i];
        uint64_t end = r->base + r->pages * PAGE_SIZE;
        if (is_ram(r->type) && end > highest_ram) highest_ram = end;
    }
    bitmap_pages = highest_ram / PAGE_SIZE;
    uint64_t bitmap_bytes = (bitmap_pages + 63) / 64 * 8;
    uint64_t bitmap_size_pages = (bitmap_bytes + PAGE_SIZE - 1) / PAGE_SIZE;

    protect(info->kernel_phys, info->kernel_pages * PAGE_SIZE);
    protect(info->kernel_file, info->kernel_file_size);
    protect(info->ramdisk, info->ramdisk_size);
    protect(boot_info_phys, sizeof *info);

    /* Place the bitmap in a usable region above 1 MiB that holds it whole. */
    uint64_t bitmap_phys = 0;
    for (uint32_t i = 0; i < info->mem_region_count && !bitmap_phys; i++) {
        const struct boot_mem_region *r = &info->mem[i];
        uint64_t base = r->base < LOW_MEMORY_END ? LOW_MEMORY_END : r->base;
        uint64_t end = r->base + r->pages * PAGE_SIZE;
        if (r->type == BOOT_MEM_USABLE && end > base && (end - base) / PAGE_SIZE >= bitmap_size_pages) {
            bitmap_phys = base;
        }
    }
    if (!bitmap_phys) {
        kprintf("page_alloc: no usable region for a %lu KiB page bitmap\n",
                (unsigned long)(bitmap_bytes / 1024));
        return;
    }
    bitmap = phys_to_virt(bitmap_phys);
    memset(bitmap, 0xff, bitmap_size_pages * PAGE_SIZE); /* everything in use ... */

    for (uint32_t i = 0; i < info->mem_region_count; i++) { /* ... except usable RAM */
        const struct boot_mem_region *r = &info->mem[i];
        if (r->type == BOOT_MEM_USABLE) free_region(r->base, r->pages);
        if (is_ram(r->type)) managed_pages += r->pages;
        if (r->type == BOOT_MEM_LOADER) loader_ram_pages += r->pages;
    }
    /* The map may overlap itself: anything not plain usable wins. */
    for (uint32_t i = 0; i < info->mem_region_count; i++) {
        const struct boot_mem_region *r = &info->mem[i];
        if (r->type != BOOT_MEM_USABLE) reserve_region(r->base, r->pages);
    }
    reserve_region(bitmap_phys, bitmap_size_pages);
}

void page_alloc_reclaim_boot_services(const struct boot_info *info) {
    if (!bitmap) return;
    for (uint32_t i = 0; i < info->mem_region_count; i++) {
        const struct boot_mem_region *r = &info->mem[i];
        if (r->type == BOOT_MEM_RECLAIMABLE) free_region(r->base, r->pages);
    }
    /* Re-apply any overlapping non-RAM regions. */
    for (uint32_t i = 0; i < info->mem_region_count; i++) {
        const struct boot_mem_region *r = &info->mem[i];
        if (!is_ram(r->type)) reserve_region(r->base, r->pages);
    }
}

void page_alloc_release_loader_data(uint64_t base, uint64_t size) {
    if (!bitmap || size == 0) return;
    uint64_t start = base & ~(PAGE_SIZE - 1), end = (base + size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    page_lock();
    for (int i = 0; i < protected_count; i++)
        if (protected_ranges[i].base == start && protected_ranges[i].end == end) {
            protected_ranges[i] = protected_ranges[--protected_count];
            break;
        }
    free_region(start, (end - start) / PAGE_SIZE);
    page_unlock();
}

/* First run of `count` free pages in [start, end), or 0. */
static uint64_t find_free_run(uint64_t start, uint64_t end, uint64_t count) {
    uint64_t i = start;
    while (i + count <= end) {
        if (i % 64 == 0 && bitmap[i / 64] == ~0ull) {
            i += 64;
            continue;
        }
        if (page_used(i)) {
            i++;
            continue;
        }
        uint64_t j = i;
        while (j < i + count && !page_used(j)) j++;
        if (j == i + count) return i;
        i = j + 1;
    }
    return 0;
}

static uint64_t take_run(uint64_t first, uint64_t count) {
    free_pages -= set_bits(first, first + count, 1);
    return first * PAGE_SIZE;
}

uint64_t page_alloc(size_t count) {
    if (!bitmap || count == 0) return 0;
    page_lock();
    uint64_t phys = 0;
    if (count <= free_pages) {
        uint64_t low = prefer_from ? prefer_from : FIRST_PAGE;
        uint64_t first = find_free_run(rover > low ? rover : low, bitmap_pages, count);
        if (!first) first = find_free_run(low, bitmap_pages, count);
        if (!first && prefer_from) first = find_free_run(FIRST_PAGE, bitmap_pages, count);
        if (first) {
            rover = first + count;
            phys = take_run(first, count);
        }
    }
    page_unlock();
    return phys;
}

void page_alloc_prefer_above(uint64_t min_phys) {
    page_lock();
    prefer_from = (min_phys + PAGE_SIZE - 1) / PAGE_SIZE;
    if (prefer_from < FIRST_PAGE) prefer_from = FIRST_PAGE;
    uint64_t above = prefer_from < bitmap_pages ? bitmap_pages - prefer_from : 0;
    page_unlock();
    kprintf("page_alloc: debug: pages from 0x%lx up are used first (%lu MiB of address space there)\n",
            (unsigned long)min_phys, (unsigned long)(above * PAGE_SIZE >> 20));
}

/* First fit of `count` pages in page numbers [start, end). */
static uint64_t alloc_in_range(uint64_t start, uint64_t end, size_t count) {
    if (!bitmap || count == 0) return 0;
    if (start < FIRST_PAGE) start = FIRST_PAGE;
    if (end > bitmap_pages) end = bitmap_pages;
    page_lock();
    uint64_t phys = 0;
    if (count <= free_pages) {
        uint64_t first = find_free_run(start, end, count);
        if (first) phys = take_run(first, count);
    }
    page_unlock();
    return phys;
}

static uint64_t page_alloc_above(uint64_t min_phys, size_t count) {
    return alloc_in_range((min_phys + PAGE_SIZE - 1) / PAGE_SIZE, bitmap_pages, count);
}

uint64_t page_alloc_below(uint64_t limit_phys, size_t count) {
    return alloc_in_range(FIRST_PAGE, limit_phys / PAGE_SIZE, count);
}

void page_free(uint64_t phys, size_t count) {
    if (!bitmap || count == 0) return;
    uint64_t first = phys / PAGE_SIZE;
    if (phys % PAGE_SIZE || first < FIRST_PAGE || first + count > bitmap_pages || first + count < first) {
        kprintf("page_free: bad range 0x%lx + %lu pages ignored\n", (unsigned long)phys,
                (unsigned long)count);
        return;
    }
    uint64_t doubles = 0, first_double = 0;
    page_lock();
    for (uint64_t p = first; p < first + count; p++) {
        if (!page_used(p)) {
            if (!doubles++) first_double = p;
            continue;
        }
        mark_free(p);
        free_pages++;
    }
    page_unlock();
    if (doubles) /* reported after unlocking: the console may take its own locks */
        kprintf("page_free: double free of %lu page%s from 0x%lx ignored\n", (unsigned long)doubles,
                doubles == 1 ? "" : "s", (unsigned long)(first_double * PAGE_SIZE));
}

uint64_t page_largest_free_run(void) {
    if (!bitmap) return 0;
    uint64_t best = 0, run = 0;
    page_lock();
    for (uint64_t i = FIRST_PAGE; i < bitmap_pages; i++) {
        if (i % 64 == 0 && bitmap[i / 64] == ~0ull && i + 64 <= bitmap_pages) {
            run = 0, i += 63; /* 64 used pages at once */
            continue;
        }
        run = page_used(i) ? 0 : run + 1;
        if (run > best) best = run;
    }
    page_unlock();
    return best;
}

void memory_get_stats(struct memory_stats *out) {
    memset(out, 0, sizeof *out);
    out->total_bytes = managed_pages * PAGE_SIZE;
    out->free_bytes = free_pages * PAGE_SIZE;
    out->used_bytes = out->total_bytes > out->free_bytes ? out->total_bytes - out->free_bytes : 0;
    if (boot_info) {
        out->ramdisk_bytes = boot_info->ramdisk_size;
        out->kernel_image_bytes = boot_info->kernel_pages * PAGE_SIZE;
    }
    out->heap_bytes = heap_bytes_in_use();
    out->highest_phys = highest_ram;
}

int memory_selftest_high(size_t mib, char *report, size_t report_size) {
    const uint64_t four_gib = 1ull << 32;
    if (mib == 0) mib = 1;
    size_t pages = mib * (1024 * 1024 / PAGE_SIZE);
    if (highest_ram <= four_gib) {
        snprintf(report, report_size, "memtest: no RAM above 4 GiB (highest 0x%lx)",
                 (unsigned long)highest_ram);
        return -1;
    }
    uint64_t phys = page_alloc_above(four_gib, pages);
    if (!phys) {
        snprintf(report, report_size, "memtest: cannot allocate %lu MiB above 4 GiB", (unsigned long)mib);
        return -1;
    }
    volatile uint64_t *words = phys_to_virt(phys);
    size_t count = pages * PAGE_SIZE / 8;
    const uint64_t pattern = 0xa5c3e1f00f1e3c5aull;
    for (size_t i = 0; i < count; i++) words[i] = (phys + i * 8) ^ pattern;
    size_t bad = 0;
    uint64_t first_bad = 0;
    for (size_t i = 0; i < count; i++) {
        if (words[i] != ((phys + i * 8) ^ pattern)) {
            if (!bad) first_bad = phys + i * 8;
            bad++;
        }
    }
    page_free(phys, pages);
    uint64_t end = phys + pages * PAGE_SIZE - 1;
    if (bad) {
        snprintf(report, report_size,
                 "memtest: %lu MiB at 0x%lx-0x%lx: FAILED, %lu bad words, first at 0x%lx", (unsigned long)mib,
                 (unsigned long)phys, (unsigned long)end, (unsigned long)bad, (unsigned long)first_bad);
        return -1;
    }
    snprintf(report, report_size, "memtest: %lu MiB at 0x%lx-0x%lx written and verified: ok",
             (unsigned long)mib, (unsigned long)phys, (unsigned long)end);
    return 0;
}
