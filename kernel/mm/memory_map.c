/* memory_map.c - the loader's memory map made sorted, disjoint and sane
 * (see memory_map.h). Built into the kernel and into a host test. */
#include "kernel/mm/memory_map.h"

#define PAGE_BYTES 4096ull
#define PHYS_LIMIT (1ull << 46) /* 64 TiB: more than any machine we run on */

static int region_is_bad(const struct boot_mem_region *r) {
    return (r->base & (PAGE_BYTES - 1)) || r->pages == 0 || r->type < BOOT_MEM_USABLE ||
           r->type > BOOT_MEM_RESERVED || r->base >= PHYS_LIMIT ||
           r->pages > (PHYS_LIMIT - r->base) / PAGE_BYTES;
}

static uint64_t region_end(const struct boot_mem_region *r) {
    return r->base + r->pages * PAGE_BYTES;
}

static void sort_by_base(struct boot_mem_region *mem, uint32_t n) {
    for (uint32_t i = 1; i < n; i++) { /* insertion sort: maps come almost sorted */
        struct boot_mem_region r = mem[i];
        uint32_t j = i;
        while (j > 0 && mem[j - 1].base > r.base) {
            mem[j] = mem[j - 1];
            j--;
        }
        mem[j] = r;
    }
}

static void sort_u64(uint64_t *v, uint32_t n) {
    for (uint32_t i = 1; i < n; i++) {
        uint64_t x = v[i];
        uint32_t j = i;
        while (j > 0 && v[j - 1] > x) {
            v[j] = v[j - 1];
            j--;
        }
        v[j] = x;
    }
}

/* Appends [base, end) of type to out, merging with a touching region of the same type. */
static void emit(struct boot_mem_region *out, uint32_t *n, uint32_t *truncated, uint64_t base, uint64_t end,
                 uint32_t type) {
    if (*n > 0 && out[*n - 1].type == type && region_end(&out[*n - 1]) == base) {
        out[*n - 1].pages += (end - base) / PAGE_BYTES;
        return;
    }
    if (*n == BOOT_MAX_MEM_REGIONS) {
        (*truncated)++;
        return;
    }
    out[(*n)++] = (struct boot_mem_region){base, (end - base) / PAGE_BYTES, type, 0};
}

uint32_t memory_map_sanitize(struct boot_mem_region *mem, uint32_t count, struct memory_map_report *report) {
    static uint64_t edges[2 * BOOT_MAX_MEM_REGIONS];
    static struct boot_mem_region out[BOOT_MAX_MEM_REGIONS];
    *report = (struct memory_map_report){0};
    if (count > BOOT_MAX_MEM_REGIONS) count = BOOT_MAX_MEM_REGIONS;
    uint32_t n = 0;
    for (uint32_t i = 0; i < count; i++) {
        if (region_is_bad(&mem[i])) {
            report->dropped++;
            continue;
        }
        mem[n++] = mem[i];
    }
    sort_by_base(mem, n);
    int overlapping = 0;
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = i + 1; j < n && mem[j].base < region_end(&mem[i]); j++)
            report->overlaps++, overlapping = 1;
    if (!overlapping) { /* the usual case: only merge touching regions of one type */
        uint32_t m = 0, unused = 0;
        for (uint32_t i = 0; i < n; i++)
            emit(mem, &m, &unused, mem[i].base, region_end(&mem[i]), mem[i].type);
        return m;
    }
    /* Cut the address space at every region edge; each piece takes the most
     * restrictive type of the regions covering it. */
    uint32_t e = 0;
    for (uint32_t i = 0; i < n; i++) edges[e++] = mem[i].base, edges[e++] = region_end(&mem[i]);
    sort_u64(edges, e);
    uint32_t m = 0;
    for (uint32_t k = 0; k + 1 < e; k++) {
        uint64_t lo = edges[k], hi = edges[k + 1];
        if (lo == hi) continue;
        uint32_t type = 0;
        for (uint32_t i = 0; i < n && mem[i].base < hi; i++)
            if (region_end(&mem[i]) > lo && mem[i].type > type) type = mem[i].type;
        if (type) emit(out, &m, &report->truncated, lo, hi, type);
    }
    for (uint32_t i = 0; i < m; i++) mem[i] = out[i];
    return m;
}
