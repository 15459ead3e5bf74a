/* panic.c - stopping the machine: panic(), the shared fatal-report guard, and
 * the frame-pointer stack trace (the kernel keeps frame pointers). */
#include "kernel/arch/panic.h"
#include "kernel/arch/smp.h"
#include "kernel/arch/apic.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/mm/paging.h"
#include "kernel/drivers/uart.h"
#include "lib/string.h"
#include <stdint.h>

#define MAX_TRACE_FRAMES 32  /* lines printed */
#define MAX_WALK_FRAMES 8192 /* frames followed (recursion is folded) */

extern char __text_start[], __text_end[];
/* Fatal events so far, on any CPU, and the APIC id (+1) of the CPU
 * reporting the first: two CPUs faulting together must not interleave
 * their dumps, so the first prints and the others halt silently. */
static int fatal_depth;
static uint32_t reporter;
static int reporter_nested; /* faults inside the reporter's own dump */

static void uart_puts_raw(const char *s) {
    uart_write(s, strlen(s));
}

static void uart_put_hex(unsigned long v) {
    char buf[19] = "0x";
    for (int i = 0; i < 16; i++) buf[2 + i] = "0123456789abcdef"[(v >> (60 - 4 * i)) & 0xf];
    buf[18] = 0;
    uart_puts_raw(buf);
}

void panic_enter(const char *what, unsigned long vector, unsigned long rip) {
    __asm__ volatile("cli");
    uint32_t self = apic_id() + 1;
    int depth = __atomic_fetch_add(&fatal_depth, 1, __ATOMIC_SEQ_CST);
    if (depth == 0) {
        __atomic_store_n(&reporter, self, __ATOMIC_SEQ_CST);
        smp_stop_others(); /* the other CPUs halt before the dump */
        return;
    }
    /* Another CPU's fault while one is being reported: it says nothing. */
    uint32_t owner;
    while (!(owner = __atomic_load_n(&reporter, __ATOMIC_SEQ_CST))) cpu_relax();
    if (owner != self) cpu_halt_forever();
    if (++reporter_nested == 1) {
        /* Plain COM1 only: the full reporter (or a console sink) is what failed. */
        uart_puts_raw("\nnested ");
        uart_puts_raw(what);
        uart_puts_raw(" (vector ");
        uart_put_hex(vector);
        uart_puts_raw(" at RIP ");
        uart_put_hex(rip);
        uart_puts_raw(") while reporting a fatal error\nKERNEL PANIC: system halted\n");
    }
    cpu_halt_forever();
}

__attribute__((noreturn)) void panic_halt(void) {
    kprintf("KERNEL PANIC: system halted\n");
    cpu_halt_forever();
}

__attribute__((noreturn)) void panic(const char *fmt, ...) {
    unsigned long rbp;
    __asm__ volatile("mov %%rbp, %0" : "=r"(rbp));
    panic_enter("panic", 0, (unsigned long)__builtin_return_address(0));
    va_list ap;
    va_start(ap, fmt);
    kprintf("\n*** KERNEL PANIC: ");
    kvprintf(fmt, ap);
    kprintf("\n");
    va_end(ap);
    print_stack_trace(rbp, (unsigned long)__builtin_return_address(0));
    panic_halt();
}

static int in_kernel_text(unsigned long addr) {
    return addr >= (unsigned long)__text_start && addr < (unsigned long)__text_end;
}

void print_stack_trace(unsigned long rbp, unsigned long rip) {
    unsigned long off = 0;
    kprintf("stack trace:\n");
    const char *name = symbol_lookup(rip, &off);
    kprintf("  #0  0x%016lx %s+0x%lx\n", rip, name, off);
    unsigned long previous_ret = 0, repeats = 0;
    int printed = 1;
    for (int walked = 1; walked < MAX_WALK_FRAMES && printed < MAX_TRACE_FRAMES; walked++) {
        /* Each frame is [saved rbp, return address]; check it is readable first. */
        if (rbp == 0 || (rbp & 7) || !paging_is_mapped(rbp, 16)) break;
        unsigned long next = ((unsigned long *)rbp)[0];
        unsigned long ret = ((unsigned long *)rbp)[1];
        if (!in_kernel_text(ret)) break;
        if (ret == previous_ret) {
            repeats++; /* deep recursion: one line per run of identical frames */
        } else {
            if (repeats) kprintf("      ... %lu more frames like the one above\n", repeats);
            repeats = 0;
            /* ret - 1 is inside the call instruction: right even when the call ends a function. */
            name = symbol_lookup(ret - 1, &off);
            kprintf("  #%-2d 0x%016lx %s+0x%lx\n", walked, ret, name, off + 1);
            printed++;
            previous_ret = ret;
        }
        if (next <= rbp) break; /* stacks grow down: callers' frames are higher */
        rbp = next;
    }
    if (repeats) kprintf("      ... %lu more frames like the one above\n", repeats);
}
