/* page_tables.c - the 4-level page tables the kernel starts on.
 *
 *   [0, limit)                        identity (the loader keeps running)
 *   DIRECT_MAP_BASE + [0, limit)      same physical range (shares the PDPTs)
 *   kernel virt_base .. + pages       kernel image, 4 KiB pages
 *
 * Everything is writable and executable; the kernel builds its own final
 * tables. All table pages come from one EfiLoaderData allocation.
 */
#include "boot/loader.h"

#define PTE_PRESENT 0x001ULL
#define PTE_WRITE 0x002ULL
#define PTE_LARGE 0x080ULL /* PS: 2 MiB in a PD, 1 GiB in a PDPT */
#define PTE_FLAGS (PTE_PRESENT | PTE_WRITE)

#define GIB (1ULL << 30)
#define MIB2 (1ULL << 21)
#define ENTRIES 512
#define PML4_SPAN (512ULL * GIB)

struct table_pool {
    uint64_t next; /* physical address of the next free table page */
    uint64_t end;
};

static uint64_t *table_take(struct table_pool *pool) {
    if (pool->next >= pool->end) fatal("page table pool exhausted (loader bug)");
    uint64_t *table = (uint64_t *)pool->next;
    pool->next += LOADER_PAGE_SIZE;
    return table; /* already zeroed with the whole pool */
}

static bool cpu_has_1gib_pages(void) {
    uint32_t eax, ebx, ecx, edx;
    __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0x80000000u), "c"(0));
    if (eax < 0x80000001u) return false;
    __asm__ volatile("cpuid" : "=a"(eax), "=b"(ebx), "=c"(ecx), "=d"(edx) : "a"(0x80000001u), "c"(0));
    return (edx >> 26) & 1;
}

static unsigned pml4_index(uint64_t virt) {
    return (virt >> 39) & 511;
}
static unsigned pdpt_index(uint64_t virt) {
    return (virt >> 30) & 511;
}
static unsigned pd_index(uint64_t virt) {
    return (virt >> 21) & 511;
}
static unsigned pt_index(uint64_t virt) {
    return (virt >> 12) & 511;
}

/* Returns the table an entry points to, creating it when absent. */
static uint64_t *table_child(struct table_pool *pool, uint64_t *table, unsigned index) {
    if (!(table[index] & PTE_PRESENT)) table[index] = (uint64_t)table_take(pool) | PTE_FLAGS;
    return (uint64_t *)(table[index] & 0x000ffffffffff000ULL);
}

uint64_t page_tables_build(uint64_t phys_limit, const struct kernel_image *kernel) {
    bool huge = cpu_has_1gib_pages();
    uint64_t gibs = (phys_limit + GIB - 1) / GIB;
    uint64_t pdpts = (gibs + ENTRIES - 1) / ENTRIES;
    uint64_t kernel_virt_end = kernel->virt_base + kernel->pages * LOADER_PAGE_SIZE;
    uint64_t kernel_pts = ((kernel_virt_end - 1) >> 21) - (kernel->virt_base >> 21) + 1;
    /* PML4 + identity PDPTs (+ PDs) + kernel PDPT, PD and PTs. */
    uint64_t total = 1 + pdpts + (huge ? 0 : gibs) + 2 + kernel_pts;

    struct table_pool pool;
    pool.next = pages_alloc(total, "page tables");
    pool.end = pool.next + total * LOADER_PAGE_SIZE;
    mem_zero((void *)pool.next, total * LOADER_PAGE_SIZE);

    uint64_t *pml4 = table_take(&pool);
    for (uint64_t g = 0; g < gibs; g++) {
        uint64_t phys = g * GIB;
        uint64_t *pdpt = table_child(&pool, pml4, pml4_index(phys));
        if (huge) {
            pdpt[pdpt_index(phys)] = phys | PTE_FLAGS | PTE_LARGE;
            continue;
        }
        uint64_t *pd = table_child(&pool, pdpt, pdpt_index(phys));
        for (unsigned i = 0; i < ENTRIES; i++) pd[i] = (phys + i * MIB2) | PTE_FLAGS | PTE_LARGE;
    }
    /* The direct map reuses the identity PDPTs: same offsets within 512 GiB. */
    unsigned direct_first = pml4_index(DIRECT_MAP_BASE);
    for (uint64_t i = 0; i < pdpts; i++) pml4[direct_first + i] = pml4[i];

    for (uint64_t off = 0; off < kernel->pages * LOADER_PAGE_SIZE; off += LOADER_PAGE_SIZE) {
        uint64_t virt = kernel->virt_base + off;
        uint64_t *pdpt = table_child(&pool, pml4, pml4_index(virt));
        uint64_t *pd = table_child(&pool, pdpt, pdpt_index(virt));
        uint64_t *pt = table_child(&pool, pd, pd_index(virt));
        pt[pt_index(virt)] = (kernel->phys + off) | PTE_FLAGS;
    }
    return (uint64_t)pml4;
}
