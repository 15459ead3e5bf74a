/* idt.c - 256 interrupt gates pointing at the isr.asm stubs, and the
 * dispatcher: CPU exceptions are fatal (dump and halt) except NMI, which is
 * reported unless it is an SMP wake-up or halt request; any other vector is reported as spurious and returns.
 */
#include "kernel/arch/idt.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/smp.h"
#include <stdint.h>

struct __attribute__((packed)) idt_gate {
    uint16_t offset_low;
    uint16_t selector;
    uint8_t ist;
    uint8_t type_attr;
    uint16_t offset_mid;
    uint32_t offset_high;
    uint32_t reserved;
};

struct __attribute__((packed)) idt_pointer {
    uint16_t limit;
    uint64_t base;
};

extern const uint64_t isr_stub_table[256];
static struct idt_gate idt[256] __attribute__((aligned(16)));

static void set_gate(int vector, uint64_t handler, uint8_t ist) {
    idt[vector] = (struct idt_gate){
        .offset_low = handler & 0xffff,
        .selector = GDT_KERNEL_CODE,
        .ist = ist,
        .type_attr = 0x8E, /* present, DPL 0, 64-bit interrupt gate (IF cleared) */
        .offset_mid = (handler >> 16) & 0xffff,
        .offset_high = handler >> 32,
    };
}

static void mask_legacy_pic(void) {
    /* Polled drivers only: keep the 8259s quiet. */
    outb(0x21, 0xff);
    outb(0xA1, 0xff);
}

void idt_init(void) {
    for (int v = 0; v < 256; v++) set_gate(v, isr_stub_table[v], 0);
    set_gate(2, isr_stub_table[2], IST_NMI);
    set_gate(8, isr_stub_table[8], IST_DOUBLE_FAULT);
    set_gate(14, isr_stub_table[14], IST_PAGE_FAULT);
    set_gate(18, isr_stub_table[18], IST_MACHINE_CHECK);
    idt_load();
    mask_legacy_pic();
}

void idt_load(void) {
    struct idt_pointer ptr = {sizeof idt - 1, (uint64_t)idt};
    __asm__ volatile("lidt %0" ::"m"(ptr) : "memory");
}

void interrupt_dispatch(struct interrupt_frame *frame) {
    if (frame->vector == 2) {
        int flushed = smp_tlb_shootdown_nmi();
        if (smp_nmi_expected() || flushed) return; /* a worker woken up, a TLB flush (or told to halt) */
        kprintf("interrupt: NMI at RIP 0x%016lx (ignored)\n", (unsigned long)frame->rip);
        return;
    }
    if (frame->vector < 32) exception_fatal(frame); /* its panic_enter stops the other CPUs */
    kprintf("interrupt: spurious vector %lu ignored\n", (unsigned long)frame->vector);
}
