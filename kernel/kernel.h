/* kernel.h - what the kernel core shares with the rest of kernel/: the boot
 * information, boot timing, the init functions of the drivers started by
 * kernel_main, and debugging hooks for the shell. */
#ifndef KERNEL_KERNEL_H
#define KERNEL_KERNEL_H

#include <stddef.h>
#include <stdint.h>
#include "boot/boot_info.h"

/* A copy of the loader's boot_info in kernel memory (all addresses inside
 * are physical; reach them with phys_to_virt). cmdline holds boot.cfg. */
extern const struct boot_info *boot_info;
/* rdtsc at the first kernel instruction; with tsc_hz() gives boot time. */
extern uint64_t kernel_entry_tsc;

/* Started by kernel_main in this order, after the core is up.
 * The framebuffer is mapped write-combining in the direct map:
 * phys_to_virt(fb->base) is its address. */
void fbcon_init(const struct boot_framebuffer *fb);
void ps2_init(void);
int ramdisk_init(const void *archive, size_t size); /* see kernel/drivers/ramdisk.h */
__attribute__((noreturn)) void shell_run(void);

/* Deliberate faults for testing the exception path ("/fault KIND"):
 * "pf" NULL write, "ud" invalid opcode, "de" divide error, "gp"
 * non-canonical access, "stack" stack overflow into the guard page,
 * "ro" write to .rodata, "nx" execute from .data (all fatal: dump and halt);
 * "int" raises a stray vector that is reported and returns.
 * Returns (after a message) for "int" and for an unknown kind. */
void debug_fault(const char *kind);

/* Allocates `mib` MiB of RAM above 4 GiB, writes a pattern through the direct
 * map, verifies and frees it. Writes a one-line report naming the physical
 * range. Returns 0 on success, -1 on failure or when there is no such RAM. */
int memory_selftest_high(size_t mib, char *report, size_t report_size);

#endif
