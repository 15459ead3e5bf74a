/* paging.h - the kernel's own 4-level page tables: a direct map of all RAM
 * at DIRECT_MAP_BASE, the kernel image with per-section permissions, no
 * identity map (virtual page 0 faults). */
#ifndef KERNEL_PAGING_H
#define KERNEL_PAGING_H

#include <stddef.h>
#include <stdint.h>
#include "boot/boot_info.h"

/* Builds the tables from page_alloc'd pages and switches CR3. */
void paging_init(const struct boot_info *info);
/* Maps a device range uncached in the direct map; returns its virtual address. */
void *paging_map_mmio(uint64_t phys, uint64_t size);
/* Maps physical memory (e.g. ACPI tables in reserved memory) cached in the
 * direct map if it is not mapped yet; returns its virtual address. */
void *paging_map_phys(uint64_t phys, uint64_t size);
/* True when [virt, virt+size) is mapped (present) in the active tables. */
int paging_is_mapped(uint64_t virt, uint64_t size);
/* Physical address of the kernel's PML4 (what CR3 holds). */
uint64_t paging_kernel_cr3(void);
/* On an application processor: the PAT the BSP uses. */
void paging_init_ap(void);
/* Maps a stack (physical pages) at a fresh kernel virtual address with an
 * unmapped guard page below it; returns its lowest address. `label` (e.g.
 * "CPU 1's stack", copied) names the stack in fault reports. */
void *paging_map_stack(uint64_t phys, uint64_t size, const char *label);
/* Leaves one page of the kernel image unmapped as the guard page below a
 * static stack; must be called before paging_init. */
void paging_add_image_guard(uint64_t virt, const char *label);
/* What the guard page holding virt protects ("CPU 1's stack"), or NULL. */
const char *paging_stack_guard_name(uint64_t virt);

#endif
