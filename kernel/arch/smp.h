/* smp.h - starting the application processors (INIT-SIPI-SIPI through a
 * real-mode trampoline below 1 MiB) and stopping them all on a fatal error. */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include <stdint.h>
#include "boot/boot_info.h"

#define SMP_MAX_CPUS 64

/* Starts every enabled processor of the MADT; returns when they are all
 * online or after the timeout (naming the ones that did not start). The
 * online ones become workers (kernel/arch/workers.h). Needs ACPI, timer, heap. */
void smp_init(const struct boot_info *info);
/* Processors running kernel code, the BSP included (1 before smp_init). */
int smp_online_count(void);
/* NMI handler hook: halts this CPU if a stop was requested; returns 1 for
 * an NMI that woke an idle worker (nothing to report), 0 otherwise. */
int smp_nmi_expected(void);
/* Fatal error on this CPU: halt every other online CPU (NMI). Only the
 * first caller sends; later callers (a second CPU faulting) return. */
void smp_stop_others(void);
/* After a page-table change on this CPU: every other online CPU flushes its
 * TLB (an NMI, interrupts being off everywhere) and this waits until each
 * has (up to 100 ms, then a warning). Nothing to do before the APs start. */
void smp_flush_tlb_others(void);
/* Shootdowns sent since boot, and the CPUs that missed one (timed out): /smp
 * shows them, so a screen-only machine can tell what the boot log said. */
void smp_tlb_stats(unsigned *shootdowns, unsigned *missed);
/* NMI handler hook: flushes this CPU's TLB if a shootdown is pending;
 * returns 1 when it did. */
int smp_tlb_shootdown_nmi(void);

#endif
