/* panic.h - stop the machine with a message on every console. */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
/* Prints a stack trace with symbol names, starting from the given frame pointer. */
void print_stack_trace(unsigned long rbp, unsigned long rip);
/* Name of the function containing addr ("?" if unknown); *offset gets addr - start. */
const char *symbol_lookup(unsigned long addr, unsigned long *offset);

#endif
