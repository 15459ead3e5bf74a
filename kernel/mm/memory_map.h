/* memory_map.h - making the loader's memory map trustworthy: a pure
 * function over the region array (no hardware access), so the host test
 * tests/host/test_firmware_tables.c feeds it broken maps. */
#ifndef KERNEL_MEMORY_MAP_H
#define KERNEL_MEMORY_MAP_H

#include <stdint.h>
#include "boot/boot_info.h"

struct memory_map_report {
    uint32_t dropped;   /* unaligned, empty, unknown type, past 64 TiB or wrapping */
    uint32_t overlaps;  /* pairs of regions that overlapped */
    uint32_t truncated; /* regions lost because the result did not fit */
};

/* Rewrites mem[0, count) in place: bad entries dropped, the rest sorted by
 * address and made disjoint, where two regions overlap the more restrictive
 * type (the higher enum boot_mem_type value: reserved over ACPI over loader
 * over usable) keeps the overlap, and touching regions of one type merged.
 * Returns the new count (at most count's capacity BOOT_MAX_MEM_REGIONS). */
uint32_t memory_map_sanitize(struct boot_mem_region *mem, uint32_t count, struct memory_map_report *report);

#endif
