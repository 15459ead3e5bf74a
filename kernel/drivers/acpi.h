/* acpi.h - the few ACPI facts the kernel needs: tables by signature, core
 * count from the MADT, power off (S5) and reset. */
#ifndef KERNEL_ACPI_H
#define KERNEL_ACPI_H

#include <stdint.h>
#include "kernel/drivers/acpi_parse.h"

/* firmware_vendor (the UEFI one, may be NULL) helps recognise QEMU. */
void acpi_init(uint64_t rsdp_phys, const char *firmware_vendor);
/* Virtual address of the first table with this signature ("FACP", "APIC", "MCFG"...), or 0. */
const void *acpi_find_table(const char signature[4]);
int acpi_cpu_count(void);
/* Local APIC IDs of the enabled processors in the MADT (BSP included), in
 * table order; returns how many were stored (at most max). */
int acpi_cpu_apic_ids(uint32_t *ids, int max);
/* The ACPI PM timer (3.579545 MHz) I/O port from the FADT, 0 if none;
 * *bits gets 24 or 32. */
uint16_t acpi_pm_timer_port(int *bits);
/* The largest APIC id the MADT lists (x2APIC is needed above 254). */
uint32_t acpi_max_apic_id(void);
/* S5 through PM1a/PM1b control (or the sleep control register of
 * hardware-reduced ACPI), then, on QEMU only, its isa-debug-exit.
 * Returns only if every method failed. */
void acpi_poweroff(void);
/* ACPI reset register, then port 0xCF9, then the keyboard controller, then a triple fault. */
__attribute__((noreturn)) void acpi_reboot(void);

#endif
