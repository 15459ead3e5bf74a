/* paging.c - the kernel's own 4-level page tables.
 *   - direct map of every RAM region at DIRECT_MAP_BASE (1 GiB / 2 MiB pages
 *     where aligned, NX), the framebuffer write-combining;
 *   - the kernel image at its link address in 4 KiB pages: text RX, rodata
 *     R NX, data/bss RW NX, the guard pages below the boot stack and the
 *     BSP's IST stacks left unmapped;
 *   - a stack region: every other kernel stack above an unmapped guard page;
 *   - no identity map, so a NULL dereference faults.
 * Page-table pages come from page_alloc and are reached through the direct
 * map (the loader's tables provide the same direct map until the switch). */
#include "kernel/mm/paging.h"
#include "kernel/mm/memory.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/panic.h"
#include "kernel/arch/smp.h"
#include "kernel/console/console.h"
#include "lib/string.h"

#define PTE_PRESENT (1ull << 0)
#define PTE_WRITE (1ull << 1)
#define PTE_PWT (1ull << 3)
#define PTE_PCD (1ull << 4)
#define PTE_LARGE (1ull << 7)
#define PTE_NX (1ull << 63)
#define PTE_ADDR 0x000ffffffffff000ull

#define SIZE_2M (1ull << 21)
#define SIZE_1G (1ull << 30)

/* PAT entry 1 (selected by PWT alone) becomes write-combining; 0 stays WB,
 * 3 (PCD|PWT) stays UC. */
#define MSR_PAT 0x277u
#define PAT_VALUE 0x0007040600070106ull
#define CACHE_WC PTE_PWT
#define CACHE_UC (PTE_PCD | PTE_PWT)

extern char __kernel_start[], __kernel_end[], __text_start[], __text_end[];
extern char __rodata_start[], __rodata_end[], __boot_stack_guard[];

static uint64_t *pml4;
static uint64_t pml4_phys;
static uint64_t nx_bit;
static uint64_t table_pages;

static int is_image_guard(uint64_t page);

static uint64_t read_cr3(void) {
    uint64_t v;
    __asm__ volatile("mov %%cr3, %0" : "=r"(v));
    return v;
}
static void write_cr3(uint64_t v) {
    __asm__ volatile("mov %0, %%cr3" ::"r"(v) : "memory");
}

static uint64_t *new_table(void) {
    uint64_t phys = page_alloc(1);
    if (!phys) panic("paging: out of memory for page tables");
    table_pages++;
    uint64_t *t = phys_to_virt(phys);
    memset(t, 0, PAGE_SIZE);
    return t;
}

/* The table an entry points to, creating it (or splitting a large page into
 * 512 smaller ones with the same attributes) when needed. */
static uint64_t *next_level(uint64_t *entry, int child_is_leaf_4k) {
    if ((*entry & PTE_PRESENT) && !(*entry & PTE_LARGE)) return phys_to_virt(*entry & PTE_ADDR);
    uint64_t *t = new_table();
    if (*entry & PTE_PRESENT) {
        uint64_t base = *entry & PTE_ADDR & ~(PAGE_SIZE * 512 * (child_is_leaf_4k ? 1 : 512) - 1);
        uint64_t attrs = *entry & ~PTE_ADDR;
        uint64_t step = child_is_leaf_4k ? PAGE_SIZE : SIZE_2M;
        if (child_is_leaf_4k) attrs &= ~PTE_LARGE;
        for (int i = 0; i < 512; i++) t[i] = (base + i * step) | attrs;
    }
    *entry = virt_to_phys_direct(t) | PTE_PRESENT | PTE_WRITE;
    return t;
}

static inline unsigned index_at(uint64_t virt, int shift) {
    return (virt >> shift) & 511;
}

/* Maps [virt, virt+size) to phys with leaf attributes `attrs`; large pages
 * only where alignment allows and nothing finer is mapped there yet. */
static void map_range(uint64_t virt, uint64_t phys, uint64_t size, uint64_t attrs, int allow_large) {
    while (size > 0) {
        uint64_t *pml4e = &pml4[index_at(virt, 39)];
        uint64_t *pdpt = next_level(pml4e, 0);
        uint64_t *pdpte = &pdpt[index_at(virt, 30)];
        int pdpte_is_table = (*pdpte & PTE_PRESENT) && !(*pdpte & PTE_LARGE);
        if (allow_large && cpu_has_gib_pages() && !pdpte_is_table && virt % SIZE_1G == 0 &&
            phys % SIZE_1G == 0 && size >= SIZE_1G) {
            *pdpte = phys | attrs | PTE_LARGE;
            virt += SIZE_1G, phys += SIZE_1G, size -= SIZE_1G;
            continue;
        }
        uint64_t *pd = next_level(pdpte, 0);
        uint64_t *pde = &pd[index_at(virt, 21)];
        int pde_is_table = (*pde & PTE_PRESENT) && !(*pde & PTE_LARGE);
        if (allow_large && !pde_is_table && virt % SIZE_2M == 0 && phys % SIZE_2M == 0 && size >= SIZE_2M) {
            *pde = phys | attrs | PTE_LARGE;
            virt += SIZE_2M, phys += SIZE_2M, size -= SIZE_2M;
            continue;
        }
        uint64_t *pt = next_level(pde, 1);
        pt[index_at(virt, 12)] = phys | attrs;
        virt += PAGE_SIZE, phys += PAGE_SIZE;
        size = size > PAGE_SIZE ? size - PAGE_SIZE : 0;
    }
}

/* Physical address for virt in the tables at cr3, or ~0 if not present. */
static uint64_t walk(uint64_t cr3, uint64_t virt) {
    const uint64_t *table = phys_to_virt(cr3 & PTE_ADDR);
    static const int shifts[4] = {39, 30, 21, 12};
    for (int level = 0; level < 4; level++) {
        uint64_t e = table[index_at(virt, shifts[level])];
        if (!(e & PTE_PRESENT)) return ~0ull;
        uint64_t span = 1ull << shifts[level];
        if (level == 3 || (level > 0 && (e & PTE_LARGE)))
            return (e & PTE_ADDR & ~(span - 1)) + (virt & (span - 1));
        table = phys_to_virt(e & PTE_ADDR);
    }
    return ~0ull;
}

int paging_is_mapped(uint64_t virt, uint64_t size) {
    /* Only canonical addresses can be walked. */
    uint64_t top = virt >> 47;
    if (top != 0 && top != 0x1ffff) return 0;
    uint64_t cr3 = read_cr3();
    uint64_t end = virt + (size ? size : 1);
    if (end < virt) return 0;
    for (uint64_t page = virt & ~(PAGE_SIZE - 1); page < end; page += PAGE_SIZE)
        if (walk(cr3, page) == ~0ull) return 0;
    return 1;
}

static int is_direct_mapped_type(uint32_t type) {
    return type == BOOT_MEM_USABLE || type == BOOT_MEM_RECLAIMABLE || type == BOOT_MEM_LOADER ||
           type == BOOT_MEM_ACPI_RECLAIM || type == BOOT_MEM_ACPI_NVS;
}

/* Maps RAM regions, merging neighbours so large pages span region borders. */
static void map_ram(const struct boot_info *info) {
    static struct { uint64_t base, end; } ranges[BOOT_MAX_MEM_REGIONS];
    uint32_t n = 0;
    for (uint32_t i = 0; i < info->mem_region_count && i < BOOT_MAX_MEM_REGIONS; i++) {
        const struct boot_mem_region *r = &info->mem[i];
        if (!is_direct_mapped_type(r->type) || r->pages == 0) continue;
        /* Insertion sort by base. */
        uint32_t j = n++;
        while (j > 0 && ranges[j - 1].base > r->base) {
            ranges[j] = ranges[j - 1];
            j--;
        }
        ranges[j].base = r->base;
        ranges[j].end = r->base + r->pages * PAGE_SIZE;
    }
    uint64_t attrs = PTE_PRESENT | PTE_WRITE | nx_bit;
    for (uint32_t i = 0; i < n;) {
        uint64_t base = ranges[i].base, end = ranges[i].end;
        for (i++; i < n && ranges[i].base <= end; i++)
            if (ranges[i].end > end) end = ranges[i].end;
        map_range(DIRECT_MAP_BASE + base, base, end - base, attrs, 1);
    }
}

static void map_kernel_image(void) {
    uint64_t loader_cr3 = read_cr3();
    for (uint64_t v = (uint64_t)__kernel_start; v < (uint64_t)__kernel_end; v += PAGE_SIZE) {
        if (is_image_guard(v)) continue; /* stack overflow must fault */
        uint64_t phys = walk(loader_cr3, v);
        if (phys == ~0ull) panic("paging: kernel page 0x%lx not mapped by the loader", (unsigned long)v);
        uint64_t attrs = PTE_PRESENT;
        if (v >= (uint64_t)__text_start && v < (uint64_t)__text_end) {
            /* executable, read-only */
        } else if (v >= (uint64_t)__rodata_start && v < (uint64_t)__rodata_end) {
            attrs |= nx_bit;
        } else {
            attrs |= PTE_WRITE | nx_bit;
        }
        map_range(v, phys, PAGE_SIZE, attrs, 0);
    }
}

void paging_init(const struct boot_info *info) {
    nx_bit = cpu_has_nx() ? PTE_NX : 0;
    pml4 = new_table();
    pml4_phys = virt_to_phys_direct(pml4);
    map_ram(info);
    if (info->fb.base && info->fb.size) {
        uint64_t base = info->fb.base & ~(PAGE_SIZE - 1);
        uint64_t size = (info->fb.base + info->fb.size - base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
        map_range(DIRECT_MAP_BASE + base, base, size, PTE_PRESENT | PTE_WRITE | nx_bit | CACHE_WC, 1);
    }
    map_kernel_image();

    __asm__ volatile("wbinvd" ::: "memory");
    cpu_write_msr(MSR_PAT, PAT_VALUE);
    write_cr3(pml4_phys);
}

/* A new mapping may split a large page or change a cached one to uncached:
 * translations other CPUs hold must go too, not only this CPU's. */
static void flush_tlb_everywhere(void) {
    write_cr3(read_cr3());
    smp_flush_tlb_others();
}

void *paging_map_mmio(uint64_t phys, uint64_t size) {
    uint64_t base = phys & ~(PAGE_SIZE - 1);
    uint64_t len = (phys + size - base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    map_range(DIRECT_MAP_BASE + base, base, len, PTE_PRESENT | PTE_WRITE | nx_bit | CACHE_UC, 0);
    flush_tlb_everywhere();
    return phys_to_virt(phys);
}

void *paging_map_phys(uint64_t phys, uint64_t size) {
    if (!paging_is_mapped(DIRECT_MAP_BASE + phys, size)) {
        uint64_t base = phys & ~(PAGE_SIZE - 1);
        uint64_t len = (phys + size - base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
        map_range(DIRECT_MAP_BASE + base, base, len, PTE_PRESENT | PTE_WRITE | nx_bit, 0);
        flush_tlb_everywhere();
    }
    return phys_to_virt(phys);
}

uint64_t paging_kernel_cr3(void) {
    return pml4_phys;
}

void paging_init_ap(void) {
    cpu_write_msr(MSR_PAT, PAT_VALUE);
}

/* Stack guard pages, named for fault reports: the stack region's (one below
 * every mapped stack) and the kernel image's (static stacks). Recorded on
 * the BSP during boot only, so no lock. */
#define MAX_STACK_GUARDS 320 /* 64 CPUs x (stack + 4 IST stacks) */
#define GUARD_LABEL_SIZE 40
struct stack_guard {
    uint64_t page;
    char label[GUARD_LABEL_SIZE];
};
static struct stack_guard stack_guards[MAX_STACK_GUARDS];
static int stack_guard_count;

static void record_guard(uint64_t page, const char *label) {
    if (stack_guard_count == MAX_STACK_GUARDS) return; /* still a guard, just unnamed */
    struct stack_guard *g = &stack_guards[stack_guard_count++];
    g->page = page;
    strlcpy(g->label, label ? label : "a kernel stack", sizeof g->label);
}

static int is_image_guard(uint64_t page) {
    if (page == (uint64_t)__boot_stack_guard) return 1;
    for (int i = 0; i < stack_guard_count; i++)
        if (stack_guards[i].page == page && page >= (uint64_t)__kernel_start && page < (uint64_t)__kernel_end)
            return 1;
    return 0;
}

void paging_add_image_guard(uint64_t virt, const char *label) {
    if (pml4) panic("paging: image guard page added after paging_init");
    record_guard(virt & ~(PAGE_SIZE - 1), label);
}

/* Stacks live in their own region, each above an unmapped guard page. */
#define STACK_REGION_BASE 0xfffffe0000000000ull
static uint64_t next_stack_virt = STACK_REGION_BASE;

void *paging_map_stack(uint64_t phys, uint64_t size, const char *label) {
    size = (size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    uint64_t virt = next_stack_virt + PAGE_SIZE; /* the page below stays unmapped */
    record_guard(next_stack_virt, label);
    next_stack_virt = virt + size;
    map_range(virt, phys, size, PTE_PRESENT | PTE_WRITE | nx_bit, 0);
    return (void *)virt;
}

static int paging_is_stack_guard(uint64_t virt) {
    uint64_t page = virt & ~(PAGE_SIZE - 1);
    if (pml4 && is_image_guard(page)) return !paging_is_mapped(page, 1);
    if (virt < STACK_REGION_BASE || virt >= next_stack_virt) return 0;
    return !paging_is_mapped(page, 1);
}

const char *paging_stack_guard_name(uint64_t virt) {
    if (!paging_is_stack_guard(virt)) return NULL;
    uint64_t page = virt & ~(PAGE_SIZE - 1);
    if (page == (uint64_t)__boot_stack_guard) return "the boot processor's stack";
    for (int i = 0; i < stack_guard_count; i++)
        if (stack_guards[i].page == page) return stack_guards[i].label;
    return "a kernel stack";
}
