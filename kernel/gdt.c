/* gdt.c - the kernel's own GDT (null, 64-bit code, data, TSS) and a TSS
 * whose IST stacks let #DF, NMI, #MC and #PF run on known-good stacks, so a
 * kernel stack overflow still produces a dump. */
#include "kernel/idt.h"
#include <stdint.h>

#define IST_STACK_SIZE 16384

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

static struct tss64 tss;
static uint64_t gdt[5] __attribute__((aligned(16)));
static uint8_t ist_stacks[4][IST_STACK_SIZE] __attribute__((aligned(16)));

void gdt_init(void) {
    gdt[0] = 0;
    gdt[1] = 0x00209A0000000000ull;   /* code: present, DPL 0, executable, long mode */
    gdt[2] = 0x0000920000000000ull;   /* data: present, writable */

    for (int i = 0; i < 4; i++) tss.ist[i] = (uint64_t)(ist_stacks[i] + IST_STACK_SIZE);
    tss.iomap_base = sizeof tss;      /* no I/O permission bitmap */

    uint64_t base = (uint64_t)&tss, limit = sizeof tss - 1;
    gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) /* available 64-bit TSS */
             | (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
    gdt[4] = base >> 32;

    struct descriptor_pointer ptr = {sizeof gdt - 1, (uint64_t)gdt};
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
