/* idt.h - interrupt descriptor table, the register frame the entry stubs
 * build, and the exception reporter. */
#ifndef KERNEL_IDT_H
#define KERNEL_IDT_H

#include <stdint.h>

/* Pushed by isr.asm (lowest address first). */
struct interrupt_frame {
    uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
    uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
    uint64_t vector, error_code;
    uint64_t rip, cs, rflags, rsp, ss; /* pushed by the CPU */
};

/* IST slots in the TSS (1-based, as the IDT encodes them). */
enum { IST_DOUBLE_FAULT = 1, IST_NMI = 2, IST_MACHINE_CHECK = 3, IST_PAGE_FAULT = 4 };

void gdt_init(void);
/* For an application processor: its own GDT, TSS and IST stacks (allocated
 * by the BSP; NULL when out of memory), loaded by the AP itself. */
void *gdt_prepare_cpu(void);
void gdt_load_cpu(void *tables);
void idt_init(void);
/* Loads the shared IDT on an application processor. */
void idt_load(void);
/* Called from isr.asm for every vector. */
void interrupt_dispatch(struct interrupt_frame *frame);
/* Prints the full dump for a fatal exception and halts. */
__attribute__((noreturn)) void exception_fatal(struct interrupt_frame *frame);

#define GDT_KERNEL_CODE 0x08
#define GDT_KERNEL_DATA 0x10
#define GDT_TSS 0x18

#endif
