/* exceptions.c - the fatal exception report: what happened, where (with
 * symbols), the full register state and a stack trace on every console, then
 * "KERNEL PANIC: system halted" and a halt. Also deliberate faults for tests. */
#include "kernel/arch/idt.h"
#include "kernel/arch/panic.h"
#include "kernel/mm/paging.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/kernel.h"
#include "lib/string.h"
#include <stdint.h>

extern char __boot_stack_guard[], __boot_stack_bottom[], __text_start[], __text_end[];

static const char *const exception_names[32] = {
    "Divide Error",
    "Debug",
    "Non-Maskable Interrupt",
    "Breakpoint",
    "Overflow",
    "Bound Range Exceeded",
    "Invalid Opcode",
    "Device Not Available",
    "Double Fault",
    "Coprocessor Segment Overrun",
    "Invalid TSS",
    "Segment Not Present",
    "Stack-Segment Fault",
    "General Protection Fault",
    "Page Fault",
    "Reserved 15",
    "x87 Floating-Point Exception",
    "Alignment Check",
    "Machine Check",
    "SIMD Floating-Point Exception",
    "Virtualization Exception",
    "Control Protection Exception",
    "Reserved 22",
    "Reserved 23",
    "Reserved 24",
    "Reserved 25",
    "Reserved 26",
    "Reserved 27",
    "Hypervisor Injection Exception",
    "VMM Communication Exception",
    "Security Exception",
    "Reserved 31",
};
static const char *const exception_mnemonics[32] = {
    "#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "-",   "#TS",
    "#NP", "#SS", "#GP", "#PF", "-",   "#MF", "#AC", "#MC", "#XM", "#VE", "#CP",
    "-",   "-",   "-",   "-",   "-",   "-",   "#HV", "#VC", "#SX", "-",
};

static uint64_t read_cr(int which) {
    uint64_t v = 0;
    switch (which) {
    case 0:
        __asm__ volatile("mov %%cr0, %0" : "=r"(v));
        break;
    case 2:
        __asm__ volatile("mov %%cr2, %0" : "=r"(v));
        break;
    case 3:
        __asm__ volatile("mov %%cr3, %0" : "=r"(v));
        break;
    case 4:
        __asm__ volatile("mov %%cr4, %0" : "=r"(v));
        break;
    }
    return v;
}

static void print_page_fault_reason(uint64_t cr2, uint64_t error) {
    kprintf("  CR2 0x%016lx: %s, %s, %s mode%s%s\n", (unsigned long)cr2,
            (error & 1) ? "protection violation" : "page not present",
            (error & 16)  ? "instruction fetch"
            : (error & 2) ? "write"
                          : "read",
            (error & 4) ? "user" : "kernel", (error & 8) ? ", reserved bit set" : "",
            cr2 < 4096 ? " (NULL pointer)" : "");
    const char *stack = paging_stack_guard_name(cr2);
    if (cr2 >= (uint64_t)__boot_stack_guard && cr2 < (uint64_t)__boot_stack_bottom)
        kprintf("  the address is the boot stack's guard page: kernel stack overflow\n");
    else if (stack)
        kprintf("  the address is the guard page below %s: kernel stack overflow\n", stack);
}

/* An instruction fetch that faults was reached by a call or a jump; after a
 * call (the common case: a bad function pointer) [RSP] is the return
 * address, which names the caller. Printed only when it points into code. */
static void print_fetch_caller(uint64_t rsp) {
    if (!paging_is_mapped(rsp, sizeof(uint64_t))) return;
    uint64_t ret = *(const uint64_t *)rsp;
    if (ret < (uint64_t)__text_start || ret >= (uint64_t)__text_end) return;
    unsigned long off = 0;
    const char *sym = symbol_lookup(ret, &off);
    kprintf("  called from %s+0x%lx (return address 0x%016lx at [RSP])\n", sym, off, (unsigned long)ret);
}

__attribute__((noreturn)) void exception_fatal(struct interrupt_frame *f) {
    uint64_t cr2 = read_cr(2); /* first, before anything else can fault */
    panic_enter("exception", f->vector, f->rip);

    unsigned v = (unsigned)(f->vector & 31);
    unsigned long off = 0;
    const char *sym = symbol_lookup(f->rip, &off);
    kprintf("\n*** EXCEPTION: %s (%s, vector %lu), error code 0x%lx\n", exception_names[v],
            exception_mnemonics[v], (unsigned long)f->vector, (unsigned long)f->error_code);
    kprintf("  RIP 0x%016lx %s+0x%lx\n", (unsigned long)f->rip, sym, off);
    if (f->vector == 14) print_page_fault_reason(cr2, f->error_code);
    if (f->vector == 14 && (f->error_code & 16)) print_fetch_caller(f->rsp);
    kprintf("  CR0 0x%016lx  CR3 0x%016lx  CR4 0x%016lx\n", (unsigned long)read_cr(0),
            (unsigned long)read_cr(3), (unsigned long)read_cr(4));
    kprintf("  RAX 0x%016lx  RBX 0x%016lx  RCX 0x%016lx\n", (unsigned long)f->rax, (unsigned long)f->rbx,
            (unsigned long)f->rcx);
    kprintf("  RDX 0x%016lx  RSI 0x%016lx  RDI 0x%016lx\n", (unsigned long)f->rdx, (unsigned long)f->rsi,
            (unsigned long)f->rdi);
    kprintf("  RBP 0x%016lx  RSP 0x%016lx  R8  0x%016lx\n", (unsigned long)f->rbp, (unsigned long)f->rsp,
            (unsigned long)f->r8);
    kprintf("  R9  0x%016lx  R10 0x%016lx  R11 0x%016lx\n", (unsigned long)f->r9, (unsigned long)f->r10,
            (unsigned long)f->r11);
    kprintf("  R12 0x%016lx  R13 0x%016lx  R14 0x%016lx\n", (unsigned long)f->r12, (unsigned long)f->r13,
            (unsigned long)f->r14);
    kprintf("  R15 0x%016lx  RFLAGS 0x%016lx\n", (unsigned long)f->r15, (unsigned long)f->rflags);
    kprintf("  CS 0x%04lx  SS 0x%04lx\n", (unsigned long)f->cs, (unsigned long)f->ss);
    print_stack_trace(f->rbp, f->rip);
    panic_halt();
}

/* ---------------------------------------------------------------- deliberate faults */

static volatile uintptr_t null_address = 0;
static volatile uint64_t non_canonical_address = 0x8000000000000000ull;

static const char read_only_text[] = "rodata";
static volatile uint8_t data_code[16] = {0xc3}; /* "ret", but in a non-executable page */

static int recurse_forever(int depth);
static int (*volatile recurse_through)(int) = recurse_forever;

/* Each level keeps 512 bytes of live stack; the call through a volatile
 * pointer stops the compiler from turning the recursion into a loop. */
static int recurse_forever(int depth) {
    volatile char pad[512];
    pad[0] = (char)depth;
    pad[511] = pad[0];
    return recurse_through(depth + 1) + pad[511];
}

void debug_fault(const char *kind) {
    if (!strcmp(kind, "pf")) {
        *(volatile uint32_t *)null_address = 0xdead;
    } else if (!strcmp(kind, "ud")) {
        __asm__ volatile("ud2");
    } else if (!strcmp(kind, "de")) {
        __asm__ volatile("xorl %%edx, %%edx\n\t"
                         "movl $1, %%eax\n\t"
                         "xorl %%ecx, %%ecx\n\t"
                         "divl %%ecx" ::
                             : "rax", "rcx", "rdx");
    } else if (!strcmp(kind, "gp")) {
        (void)*(volatile uint64_t *)non_canonical_address;
    } else if (!strcmp(kind, "stack")) {
        recurse_through(0);
    } else if (!strcmp(kind, "ro")) { /* write to .rodata: protection fault */
        *(volatile char *)(uintptr_t)read_only_text = 'X';
    } else if (!strcmp(kind, "nx")) { /* jump into .data: NX fault */
        ((void (*)(void))(uintptr_t)data_code)();
    } else if (!strcmp(kind, "int")) { /* unexpected vector: reported, execution continues */
        __asm__ volatile("int $0xf0");
        kprintf("fault: returned from vector 0xf0\n");
        return;
    } else {
        kprintf("fault: unknown kind '%s' (pf, ud, de, gp, stack, ro, nx, int)\n", kind);
        return;
    }
    kprintf("fault: '%s' did not fault\n", kind);
}
