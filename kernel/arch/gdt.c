/* gdt.c - the GDTs (null, 64-bit code, data, TSS) and TSSs, one set per
 * processor: a TSS is marked busy once loaded, and each CPU needs its own IST
 * stacks so #DF, NMI, #MC and #PF run on known-good stacks (a kernel stack
 * overflow still produces a dump). Every IST stack sits above an unmapped
 * guard page, so an overflowing handler faults instead of corrupting memory.
 * The BSP's set is static (its guards are pages of the image left unmapped
 * by paging_init); the APs' sets are allocated by the BSP before they start,
 * their IST stacks in paging's guarded stack region. */
#include "kernel/arch/idt.h"
#include "kernel/mm/memory.h"
#include "kernel/mm/paging.h"
#include "lib/format.h"
#include <stdint.h>

#define IST_STACK_SIZE 16384
#define IST_COUNT 4

struct __attribute__((packed)) tss64 {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
};

struct __attribute__((packed)) descriptor_pointer {
    uint16_t limit;
    uint64_t base;
};

struct cpu_tables {
    uint64_t gdt[5] __attribute__((aligned(16)));
    struct tss64 tss;
};

static struct cpu_tables bsp_tables;
/* Each BSP IST stack is preceded by its guard page. */
struct guarded_stack {
    uint8_t guard[PAGE_SIZE];
    uint8_t stack[IST_STACK_SIZE];
};
static struct guarded_stack bsp_ist_stacks[IST_COUNT] __attribute__((aligned(PAGE_SIZE)));
static int prepared_cpus; /* APs given tables so far: names their stacks */

/* In the IST_* order of idt.h (TSS slot i holds IST i + 1). */
static const char *const ist_names[IST_COUNT] = {"#DF", "NMI", "#MC", "#PF"};

static void ist_label(char *out, size_t size, int cpu_index, int ist) {
    snprintf(out, size, "CPU %d's %s stack (IST %d)", cpu_index, ist_names[ist], ist + 1);
}

static void fill_tables(struct cpu_tables *t, uint8_t *const ist_tops[IST_COUNT]) {
    t->gdt[0] = 0;
    t->gdt[1] = 0x00209A0000000000ull; /* code: present, DPL 0, executable, long mode */
    t->gdt[2] = 0x0000920000000000ull; /* data: present, writable */

    for (int i = 0; i < IST_COUNT; i++) t->tss.ist[i] = (uint64_t)ist_tops[i];
    t->tss.iomap_base = sizeof t->tss; /* no I/O permission bitmap */

    uint64_t base = (uint64_t)&t->tss, limit = sizeof t->tss - 1;
    t->gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) /* available 64-bit TSS */
                | (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
    t->gdt[4] = base >> 32;
}

void gdt_load_cpu(void *tables) {
    struct cpu_tables *t = tables;
    struct descriptor_pointer ptr = {sizeof t->gdt - 1, (uint64_t)t->gdt};
    __asm__ volatile("lgdt %0\n\t"
                     "pushq %1\n\t"
                     "leaq 1f(%%rip), %%rax\n\t"
                     "pushq %%rax\n\t"
                     "lretq\n"
                     "1:\n\t"
                     "movw %w2, %%ax\n\t"
                     "movw %%ax, %%ds\n\t"
                     "movw %%ax, %%es\n\t"
                     "movw %%ax, %%ss\n\t"
                     "xorl %%eax, %%eax\n\t"
                     "movw %%ax, %%fs\n\t"
                     "movw %%ax, %%gs\n\t"
                     "movw %w3, %%ax\n\t"
                     "ltr %%ax\n\t"
                     :
                     : "m"(ptr), "i"(GDT_KERNEL_CODE), "r"((uint32_t)GDT_KERNEL_DATA), "r"((uint32_t)GDT_TSS)
                     : "rax", "memory");
}

void gdt_init(void) {
    uint8_t *tops[IST_COUNT];
    for (int i = 0; i < IST_COUNT; i++) {
        char label[40];
        ist_label(label, sizeof label, 0, i);
        paging_add_image_guard((uint64_t)bsp_ist_stacks[i].guard, label);
        tops[i] = bsp_ist_stacks[i].stack + IST_STACK_SIZE;
    }
    fill_tables(&bsp_tables, tops);
    gdt_load_cpu(&bsp_tables);
}

/* Called on the BSP for CPU 1, 2, ... in turn (smp_init). */
void *gdt_prepare_cpu(void) {
    int cpu_index = ++prepared_cpus;
    uint8_t *tops[IST_COUNT];
    uint64_t phys[IST_COUNT] = {0};
    const size_t pages = IST_STACK_SIZE / PAGE_SIZE;
    struct cpu_tables *t = kzalloc(sizeof *t);
    if (!t) return 0;
    for (int i = 0; i < IST_COUNT; i++) {
        phys[i] = page_alloc(pages);
        if (!phys[i]) {
            for (int j = 0; j < i; j++) page_free(phys[j], pages);
            kfree(t);
            return 0;
        }
    }
    for (int i = 0; i < IST_COUNT; i++) {
        char label[40];
        ist_label(label, sizeof label, cpu_index, i);
        tops[i] = (uint8_t *)paging_map_stack(phys[i], IST_STACK_SIZE, label) + IST_STACK_SIZE;
    }
    fill_tables(t, tops);
    return t;
}
