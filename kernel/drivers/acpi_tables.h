/* acpi_tables.h - the ACPI tables the kernel reads, as packed structs laid
 * out as the ACPI specification (6.5, chapter 5.2) defines them. Sizes and
 * offsets are checked at compile time against the spec's tables. A table
 * may be shorter than its struct (older revisions): check a field with
 * ACPI_HAS_FIELD before reading it. */
#ifndef KERNEL_ACPI_TABLES_H
#define KERNEL_ACPI_TABLES_H

#include <stddef.h>
#include <stdint.h>

/* Whether a table of `length` bytes reaches to the end of `field`. */
#define ACPI_HAS_FIELD(table, length, field)                                                                 \
    (offsetof(__typeof__(*(table)), field) + sizeof((table)->field) <= (length))

/* 5.2.5.3 Root System Description Pointer. The checksum covers the first
 * ACPI_RSDP_V1_SIZE bytes; from revision 2 on, extended_checksum covers
 * `length` bytes. */
struct __attribute__((packed)) acpi_rsdp {
    char signature[8]; /* "RSD PTR " */
    uint8_t checksum;
    char oem_id[6];
    uint8_t revision;
    uint32_t rsdt_address;
    uint32_t length;
    uint64_t xsdt_address;
    uint8_t extended_checksum;
    uint8_t reserved[3];
};
#define ACPI_RSDP_V1_SIZE offsetof(struct acpi_rsdp, length)
_Static_assert(ACPI_RSDP_V1_SIZE == 20, "RSDP 1.0 part");
_Static_assert(offsetof(struct acpi_rsdp, xsdt_address) == 24, "RSDP XsdtAddress");
_Static_assert(sizeof(struct acpi_rsdp) == 36, "RSDP size");

/* 5.2.6 System Description Table Header, at the start of every table. */
struct __attribute__((packed)) acpi_sdt_header {
    char signature[4];
    uint32_t length; /* of the whole table, header included */
    uint8_t revision;
    uint8_t checksum; /* all `length` bytes sum to 0 */
    char oem_id[6];
    char oem_table_id[8];
    uint32_t oem_revision;
    uint32_t creator_id;
    uint32_t creator_revision;
};
_Static_assert(sizeof(struct acpi_sdt_header) == 36, "SDT header size");

/* 5.2.7 RSDT and 5.2.8 XSDT: the header, then 32- or 64-bit table addresses. */
struct __attribute__((packed)) acpi_rsdt {
    struct acpi_sdt_header header;
    uint32_t entries[];
};
struct __attribute__((packed)) acpi_xsdt {
    struct acpi_sdt_header header;
    uint64_t entries[];
};
_Static_assert(offsetof(struct acpi_xsdt, entries) == 36, "XSDT entries");

/* 5.2.3.2 Generic Address Structure. */
struct __attribute__((packed)) acpi_generic_address {
    uint8_t space_id; /* ACPI_SPACE_* */
    uint8_t bit_width;
    uint8_t bit_offset;
    uint8_t access_size;
    uint64_t address;
};
enum { ACPI_SPACE_MEMORY = 0, ACPI_SPACE_IO = 1 };
_Static_assert(sizeof(struct acpi_generic_address) == 12, "GAS size");

/* 5.2.9 Fixed ACPI Description Table ("FACP"). */
struct __attribute__((packed)) acpi_fadt {
    struct acpi_sdt_header header;
    uint32_t firmware_ctrl;
    uint32_t dsdt;
    uint8_t reserved0;
    uint8_t preferred_pm_profile;
    uint16_t sci_int;
    uint32_t smi_cmd;
    uint8_t acpi_enable;
    uint8_t acpi_disable;
    uint8_t s4bios_req;
    uint8_t pstate_cnt;
    uint32_t pm1a_evt_blk, pm1b_evt_blk;
    uint32_t pm1a_cnt_blk, pm1b_cnt_blk;
    uint32_t pm2_cnt_blk;
    uint32_t pm_tmr_blk;
    uint32_t gpe0_blk, gpe1_blk;
    uint8_t pm1_evt_len, pm1_cnt_len, pm2_cnt_len, pm_tmr_len;
    uint8_t gpe0_blk_len, gpe1_blk_len, gpe1_base, cst_cnt;
    uint16_t p_lvl2_lat, p_lvl3_lat;
    uint16_t flush_size, flush_stride;
    uint8_t duty_offset, duty_width;
    uint8_t day_alrm, mon_alrm, century;
    uint16_t iapc_boot_arch;
    uint8_t reserved1;
    uint32_t flags; /* ACPI_FADT_* */
    struct acpi_generic_address reset_reg;
    uint8_t reset_value;
    uint16_t arm_boot_arch;
    uint8_t fadt_minor_version;
    uint64_t x_firmware_ctrl;
    uint64_t x_dsdt;
    struct acpi_generic_address x_pm1a_evt_blk, x_pm1b_evt_blk;
    struct acpi_generic_address x_pm1a_cnt_blk, x_pm1b_cnt_blk;
    struct acpi_generic_address x_pm2_cnt_blk;
    struct acpi_generic_address x_pm_tmr_blk;
    struct acpi_generic_address x_gpe0_blk, x_gpe1_blk;
    struct acpi_generic_address sleep_control_reg, sleep_status_reg;
    uint64_t hypervisor_vendor_identity;
};
enum {
    ACPI_FADT_TMR_VAL_EXT = 1u << 8, /* the PM timer counts 32 bits, not 24 */
    ACPI_FADT_RESET_REG_SUP = 1u << 10,
    ACPI_FADT_HW_REDUCED = 1u << 20, /* hardware-reduced ACPI: no PM1 blocks, sleep registers */
};
_Static_assert(offsetof(struct acpi_fadt, dsdt) == 40, "FADT DSDT");
_Static_assert(offsetof(struct acpi_fadt, smi_cmd) == 48, "FADT SMI_CMD");
_Static_assert(offsetof(struct acpi_fadt, acpi_enable) == 52, "FADT ACPI_ENABLE");
_Static_assert(offsetof(struct acpi_fadt, pm1a_cnt_blk) == 64, "FADT PM1a_CNT_BLK");
_Static_assert(offsetof(struct acpi_fadt, pm1b_cnt_blk) == 68, "FADT PM1b_CNT_BLK");
_Static_assert(offsetof(struct acpi_fadt, pm_tmr_blk) == 76, "FADT PM_TMR_BLK");
_Static_assert(offsetof(struct acpi_fadt, iapc_boot_arch) == 109, "FADT IAPC_BOOT_ARCH");
_Static_assert(offsetof(struct acpi_fadt, flags) == 112, "FADT Flags");
_Static_assert(offsetof(struct acpi_fadt, reset_reg) == 116, "FADT RESET_REG");
_Static_assert(offsetof(struct acpi_fadt, reset_value) == 128, "FADT RESET_VALUE");
_Static_assert(offsetof(struct acpi_fadt, x_dsdt) == 140, "FADT X_DSDT");
_Static_assert(offsetof(struct acpi_fadt, x_pm1a_cnt_blk) == 172, "FADT X_PM1a_CNT_BLK");
_Static_assert(offsetof(struct acpi_fadt, x_pm1b_cnt_blk) == 184, "FADT X_PM1b_CNT_BLK");
_Static_assert(offsetof(struct acpi_fadt, x_pm_tmr_blk) == 208, "FADT X_PM_TMR_BLK");
_Static_assert(offsetof(struct acpi_fadt, sleep_control_reg) == 244, "FADT SLEEP_CONTROL_REG");
_Static_assert(offsetof(struct acpi_fadt, sleep_status_reg) == 256, "FADT SLEEP_STATUS_REG");
_Static_assert(sizeof(struct acpi_fadt) == 276, "FADT size (6.x)");

/* 5.2.12 Multiple APIC Description Table ("APIC"): the header, then
 * variable-length entries that each start with type and length. */
struct __attribute__((packed)) acpi_madt {
    struct acpi_sdt_header header;
    uint32_t local_apic_address;
    uint32_t flags;
    uint8_t entries[];
};
_Static_assert(offsetof(struct acpi_madt, entries) == 44, "MADT entries");

struct __attribute__((packed)) acpi_madt_entry {
    uint8_t type; /* ACPI_MADT_* */
    uint8_t length;
};
enum { ACPI_MADT_LOCAL_APIC = 0, ACPI_MADT_LOCAL_X2APIC = 9 };
enum { ACPI_MADT_ENABLED = 1u << 0 }; /* flags of both processor entries */

/* 5.2.12.2 Processor Local APIC. */
struct __attribute__((packed)) acpi_madt_local_apic {
    struct acpi_madt_entry entry;
    uint8_t processor_uid;
    uint8_t apic_id;
    uint32_t flags;
};
_Static_assert(sizeof(struct acpi_madt_local_apic) == 8, "MADT local APIC size");

/* 5.2.12.12 Processor Local x2APIC. */
struct __attribute__((packed)) acpi_madt_local_x2apic {
    struct acpi_madt_entry entry;
    uint16_t reserved;
    uint32_t x2apic_id;
    uint32_t flags;
    uint32_t processor_uid;
};
_Static_assert(offsetof(struct acpi_madt_local_x2apic, x2apic_id) == 4, "MADT x2APIC id");
_Static_assert(sizeof(struct acpi_madt_local_x2apic) == 16, "MADT local x2APIC size");

/* PCI Firmware Specification 3.x, 4.1.2: "MCFG", the ECAM windows. */
struct __attribute__((packed)) acpi_mcfg_allocation {
    uint64_t base_address;
    uint16_t segment;
    uint8_t start_bus, end_bus;
    uint32_t reserved;
};
_Static_assert(sizeof(struct acpi_mcfg_allocation) == 16, "MCFG allocation size");

struct __attribute__((packed)) acpi_mcfg {
    struct acpi_sdt_header header;
    uint8_t reserved[8];
    struct acpi_mcfg_allocation allocations[];
};
_Static_assert(offsetof(struct acpi_mcfg, allocations) == 44, "MCFG allocations");

#endif
