/* panic.h - stop the machine with a message on every console. */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

__attribute__((noreturn, format(printf, 1, 2))) void panic(const char *fmt, ...);
/* Prints a stack trace with symbol names, starting from the given frame pointer. */
void print_stack_trace(unsigned long rbp, unsigned long rip);
/* Name of the function containing addr ("?" if unknown); *offset gets addr - start. */
const char *symbol_lookup(unsigned long addr, unsigned long *offset);

/* Shared by panic() and the exception reporter: marks the start of a fatal
 * report. A second fatal event while one is being reported (a fault in the
 * reporter itself) prints one line on COM1 and halts instead of looping. */
void panic_enter(const char *what, unsigned long vector, unsigned long rip);
/* Prints the final "KERNEL PANIC: system halted" line and halts forever. */
__attribute__((noreturn)) void panic_halt(void);
/* Loads the kernel symbol table from the ELF file the loader passed
 * (boot_info->kernel_file). Returns the number of function symbols. */
int symbols_init(const void *elf_file, unsigned long size);

#endif
