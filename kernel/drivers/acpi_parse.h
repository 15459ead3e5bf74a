/* acpi_parse.h - ACPI table parsers as pure functions over bytes in memory:
 * no port, MMIO or paging access, so the same file builds into the host test
 * tests/host/test_firmware_tables.c, which feeds them crafted and broken
 * tables. Every length is checked against the buffer; bad input is reported
 * through the result, never followed. */
#ifndef KERNEL_ACPI_PARSE_H
#define KERNEL_ACPI_PARSE_H

#include <stddef.h>
#include <stdint.h>
#include "kernel/drivers/acpi_tables.h"

/* \_S5_ in AML: Name(_S5_, Package(){SLP_TYPa, SLP_TYPb, ...}). */
enum acpi_s5_result {
    ACPI_S5_FOUND = 0,
    ACPI_S5_ABSENT,    /* no Name(_S5_, ...) in the bytes */
    ACPI_S5_TRUNCATED, /* the package runs past the end of the table */
    ACPI_S5_ODD,       /* not a package of integer constants 0-7 */
};
/* Scans aml[0, len) (a DSDT or SSDT body, after the header). On
 * ACPI_S5_FOUND, *typ_a and *typ_b hold the two SLP_TYP values. */
enum acpi_s5_result acpi_aml_find_s5(const uint8_t *aml, size_t len, uint8_t *typ_a, uint8_t *typ_b);

/* The processors an MADT lists as enabled, each APIC id once. */
#define ACPI_MAX_CPUS 64
#define ACPI_MAX_APIC_ID 0x00ffffffu /* larger x2APIC ids are not real processors */
struct acpi_madt_cpus {
    uint32_t ids[ACPI_MAX_CPUS]; /* table order, BSP included */
    int count;
    int duplicates;  /* enabled entries whose id was already listed: skipped */
    int absurd;      /* ids 0xFF (xAPIC broadcast) or above ACPI_MAX_APIC_ID: skipped */
    int over_limit;  /* valid ids beyond ACPI_MAX_CPUS: not started */
    int x2apic_ids;  /* ids taken from type 9 (x2APIC) entries */
    int bad_entries; /* an entry with a length that cannot be right stopped the walk */
    uint32_t max_id; /* the largest id kept */
};
void acpi_madt_parse(const void *table, size_t length, struct acpi_madt_cpus *out);

/* The first usable ECAM window of PCI segment 0 in an MCFG. Windows that
 * are empty, unaligned, inverted or past 2^52 are skipped (counted). */
struct acpi_ecam_window {
    uint64_t base; /* physical address of bus start_bus; 0 = none */
    uint8_t start_bus, end_bus;
    int skipped;
};
void acpi_mcfg_parse(const void *table, size_t length, struct acpi_ecam_window *out);
/* Whether [window) overlaps any of `count` RAM ranges [base, end): an ECAM
 * window over RAM points nowhere (or worse, at memory we would scribble on). */
int acpi_ecam_overlaps_ram(const struct acpi_ecam_window *w, const uint64_t (*ram)[2], size_t count);

/* A register from a generic address structure, as the kernel accesses it. */
struct acpi_register {
    uint8_t space; /* ACPI_SPACE_IO or ACPI_SPACE_MEMORY */
    uint64_t address;
};
/* The FADT facts the kernel uses; absent ones are 0. */
struct acpi_fadt_info {
    uint16_t pm1a_cnt, pm1b_cnt, pm_timer;
    int pm_timer_bits; /* 24 or 32 */
    uint16_t smi_cmd;
    uint8_t acpi_enable;
    int hardware_reduced; /* no PM1 blocks: sleep control/status registers instead */
    struct acpi_register sleep_control, sleep_status;
    int reset_supported;
    struct acpi_register reset;
    uint8_t reset_value;
    uint64_t dsdt; /* physical address */
};
void acpi_fadt_parse(const void *table, size_t length, struct acpi_fadt_info *out);

#endif
