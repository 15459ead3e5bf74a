/* gdt.c - the GDTs (null, 64-bit code, data, TSS) and TSSs, one set per
 * processor: a TSS is marked busy once loaded, and each CPU needs its own IST
 * stacks so #DF, NMI, #MC and #PF run on known-good stacks (a kernel stack
 * overflow still produces a dump). The BSP's set is static; the APs' sets
 * are allocated by the BSP before they start (the heap is not SMP-safe). */
#include "kernel/idt.h"
#include "kernel/memory.h"
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
static uint8_t bsp_ist_stacks[IST_COUNT][IST_STACK_SIZE] __attribute__((aligned(16)));

static void fill_tables(struct cpu_tables *t, uint8_t *ist_stacks) {
    t->gdt[0] = 0;
    t->gdt[1] = 0x00209A0000000000ull; /* code: present, DPL 0, executable, long mode */
    t->gdt[2] = 0x0000920000000000ull; /* data: present, writable */

    for (int i = 0; i < IST_COUNT; i++) t->tss.ist[i] = (uint64_t)(ist_stacks + (i + 1) * IST_STACK_SIZE);
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
    fill_tables(&bsp_tables, &bsp_ist_stacks[0][0]);
    gdt_load_cpu(&bsp_tables);
}

void *gdt_prepare_cpu(void) {
    struct cpu_tables *t = kzalloc(sizeof *t);
    uint8_t *stacks = kmalloc(IST_COUNT * IST_STACK_SIZE);
    if (!t || !stacks) {
        kfree(t);
        kfree(stacks);
        return 0;
    }
    fill_tables(t, stacks);
    return t;
}
