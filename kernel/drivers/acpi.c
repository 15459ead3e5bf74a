/* acpi.c - the ACPI facts the kernel needs: RSDP -> RSDT/XSDT (checksums
 * checked), tables by signature, enabled local APICs from the MADT, the FADT
 * power registers, and SLP_TYP for S5 decoded from the DSDT's \_S5_ package.
 * Power off writes SLP_TYP|SLP_EN to PM1a/PM1b (QEMU then exits with 0). */
#include "kernel/drivers/acpi.h"
#include "kernel/drivers/acpi_tables.h"
#include "kernel/arch/cpu.h"
#include "kernel/console/console.h"
#include "kernel/mm/memory.h"
#include "kernel/mm/paging.h"
#include "kernel/drivers/timer.h"
#include "lib/string.h"

#define MAX_TABLES 64
#define MAX_TABLE_LENGTH (16u << 20)

static const struct acpi_sdt_header *tables[MAX_TABLES];
static int table_count;
static int cpu_count = 1;
static uint32_t cpu_apic_ids[ACPI_MAX_CPUS];
static int cpu_apic_id_count;

static uint16_t pm1a_cnt, pm1b_cnt, pm_timer;
static int pm_timer_bits = 24;
static uint16_t smi_cmd_port;
static uint8_t acpi_enable_value;
static int s5_found;
static uint16_t slp_typ_a, slp_typ_b;
static struct acpi_generic_address reset_reg;
static uint8_t reset_value;
static int reset_supported;

static uint8_t checksum(const void *p, size_t n) {
    const uint8_t *b = p;
    uint8_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += b[i];
    return sum;
}

/* Maps and validates the table at phys; NULL (with a message) if broken. */
static const struct acpi_sdt_header *load_table(uint64_t phys) {
    if (!phys) return NULL;
    const struct acpi_sdt_header *h = paging_map_phys(phys, sizeof *h);
    uint32_t length = h->length;
    if (length < sizeof *h || length > MAX_TABLE_LENGTH) {
        kprintf("acpi: table at 0x%lx has bad length %u, skipped\n", (unsigned long)phys, length);
        return NULL;
    }
    h = paging_map_phys(phys, length);
    if (checksum(h, length) != 0) {
        kprintf("acpi: table %.4s at 0x%lx fails its checksum, skipped\n", h->signature, (unsigned long)phys);
        return NULL;
    }
    return h;
}

const void *acpi_find_table(const char signature[4]) {
    for (int i = 0; i < table_count; i++)
        if (!memcmp(tables[i]->signature, signature, 4)) return tables[i];
    return NULL;
}

int acpi_cpu_count(void) {
    return cpu_count;
}

int acpi_cpu_apic_ids(uint32_t *ids, int max) {
    int n = cpu_apic_id_count < max ? cpu_apic_id_count : max;
    for (int i = 0; i < n; i++) ids[i] = cpu_apic_ids[i];
    return n;
}

static void record_apic_id(uint32_t id) {
    if (cpu_apic_id_count < ACPI_MAX_CPUS) cpu_apic_ids[cpu_apic_id_count++] = id;
}

uint16_t acpi_pm_timer_port(int *bits) {
    if (bits) *bits = pm_timer_bits;
    return pm_timer;
}

static void parse_madt(const struct acpi_madt *madt) {
    const uint8_t *p = madt->entries;
    const uint8_t *end = (const uint8_t *)madt + madt->header.length;
    int count = 0;
    const struct acpi_madt_entry *e;
    while (p + sizeof *e <= end && (e = (const void *)p)->length >= sizeof *e && p + e->length <= end) {
        if (e->type == ACPI_MADT_LOCAL_APIC && e->length >= sizeof(struct acpi_madt_local_apic)) {
            const struct acpi_madt_local_apic *lapic = (const void *)e;
            if (lapic->flags & ACPI_MADT_ENABLED) count++, record_apic_id(lapic->apic_id);
        } else if (e->type == ACPI_MADT_LOCAL_X2APIC && e->length >= sizeof(struct acpi_madt_local_x2apic)) {
            const struct acpi_madt_local_x2apic *x2apic = (const void *)e;
            if (x2apic->flags & ACPI_MADT_ENABLED) count++, record_apic_id(x2apic->x2apic_id);
        }
        p += e->length;
    }
    if (count > 0) cpu_count = count;
}

/* Reads an AML integer constant (ZeroOp, OneOp, Byte/Word/DWordPrefix). */
static int aml_integer(const uint8_t **pp, const uint8_t *end, uint32_t *out) {
    const uint8_t *p = *pp;
    if (p >= end) return 0;
    switch (*p) {
    case 0x00:
        *out = 0;
        *pp = p + 1;
        return 1;
    case 0x01:
        *out = 1;
        *pp = p + 1;
        return 1;
    case 0x0A:
        if (p + 2 > end) return 0;
        *out = p[1];
        *pp = p + 2;
        return 1;
    case 0x0B:
        if (p + 3 > end) return 0;
        *out = p[1] | (p[2] << 8);
        *pp = p + 3;
        return 1;
    case 0x0C:
        if (p + 5 > end) return 0;
        *out = p[1] | (p[2] << 8) | ((uint32_t)p[3] << 16) | ((uint32_t)p[4] << 24);
        *pp = p + 5;
        return 1;
    default:
        return 0;
    }
}

/* Finds Name(\_S5_, Package() {SLP_TYPa, SLP_TYPb, ...}) in AML. */
static void find_s5(const struct acpi_sdt_header *dsdt) {
    const uint8_t *aml = (const uint8_t *)dsdt + sizeof *dsdt;
    const uint8_t *end = (const uint8_t *)dsdt + dsdt->length;
    for (const uint8_t *p = aml; p + 4 < end; p++) {
        if (memcmp(p, "_S5_", 4)) continue;
        const uint8_t *q = p + 4;
        if (*q != 0x12) continue; /* PackageOp */
        q++;
        if (q >= end) return;
        q += 1 + (*q >> 6); /* PkgLength: 1-4 bytes */
        q++;                /* NumElements */
        uint32_t a, b;
        if (!aml_integer(&q, end, &a) || !aml_integer(&q, end, &b)) continue;
        slp_typ_a = (uint16_t)(a & 7);
        slp_typ_b = (uint16_t)(b & 7);
        s5_found = 1;
        return;
    }
}

/* The FADT may be shorter than struct acpi_fadt (older revisions): a field
 * past its length reads as 0. */
#define FADT_FIELD(f, field) (ACPI_HAS_FIELD(f, (f)->header.length, field) ? (f)->field : 0)

/* A generic address from the FADT; 0 when absent or past its length. */
static int fadt_gas(const struct acpi_generic_address *gas, int present, struct acpi_generic_address *out) {
    memset(out, 0, sizeof *out);
    if (!present) return 0;
    *out = *gas;
    return out->address != 0;
}
#define FADT_GAS(f, field, out) fadt_gas(&(f)->field, ACPI_HAS_FIELD(f, (f)->header.length, field), out)

/* An I/O port from the 32-bit FADT field or its extended GAS twin. */
static uint16_t fadt_port(const struct acpi_generic_address *gas_field, int gas_present, uint32_t legacy) {
    struct acpi_generic_address gas;
    if (fadt_gas(gas_field, gas_present, &gas) && gas.space_id == ACPI_SPACE_IO && gas.address <= 0xffff)
        return (uint16_t)gas.address;
    return legacy <= 0xffff ? (uint16_t)legacy : 0;
}
#define FADT_PORT(f, legacy_field, gas_field)                                                                \
    fadt_port(&(f)->gas_field, ACPI_HAS_FIELD(f, (f)->header.length, gas_field), FADT_FIELD(f, legacy_field))

static void parse_fadt(const struct acpi_fadt *f) {
    pm1a_cnt = FADT_PORT(f, pm1a_cnt_blk, x_pm1a_cnt_blk);
    pm1b_cnt = FADT_PORT(f, pm1b_cnt_blk, x_pm1b_cnt_blk);
    pm_timer = FADT_PORT(f, pm_tmr_blk, x_pm_tmr_blk);
    uint32_t flags = FADT_FIELD(f, flags);
    pm_timer_bits = (flags & ACPI_FADT_TMR_VAL_EXT) ? 32 : 24;
    smi_cmd_port = (uint16_t)FADT_FIELD(f, smi_cmd);
    acpi_enable_value = FADT_FIELD(f, acpi_enable);
    if ((flags & ACPI_FADT_RESET_REG_SUP) && FADT_GAS(f, reset_reg, &reset_reg) &&
        ACPI_HAS_FIELD(f, f->header.length, reset_value)) {
        reset_value = f->reset_value;
        reset_supported = 1;
    }
    uint64_t dsdt_phys = FADT_FIELD(f, x_dsdt);
    if (!dsdt_phys) dsdt_phys = FADT_FIELD(f, dsdt);
    const struct acpi_sdt_header *dsdt = load_table(dsdt_phys);
    if (dsdt && !memcmp(dsdt->signature, "DSDT", 4)) find_s5(dsdt);
}

void acpi_init(uint64_t rsdp_phys) {
    if (!rsdp_phys) {
        kprintf("acpi: no RSDP from the firmware\n");
        return;
    }
    const struct acpi_rsdp *r = paging_map_phys(rsdp_phys, sizeof *r);
    if (memcmp(r->signature, "RSD PTR ", 8) || checksum(r, ACPI_RSDP_V1_SIZE) != 0) {
        kprintf("acpi: RSDP at 0x%lx is invalid\n", (unsigned long)rsdp_phys);
        return;
    }
    int use_xsdt = r->revision >= 2 && r->length >= sizeof *r && r->length < 4096 &&
                   checksum(paging_map_phys(rsdp_phys, r->length), r->length) == 0 && r->xsdt_address;
    const struct acpi_sdt_header *root = load_table(use_xsdt ? r->xsdt_address : r->rsdt_address);
    if (!root) {
        kprintf("acpi: no valid RSDT/XSDT\n");
        return;
    }
    const struct acpi_xsdt *xsdt = (const void *)root;
    const struct acpi_rsdt *rsdt = (const void *)root;
    size_t entries =
        (root->length - sizeof *root) / (use_xsdt ? sizeof xsdt->entries[0] : sizeof rsdt->entries[0]);
    for (size_t i = 0; i < entries && table_count < MAX_TABLES; i++) {
        uint64_t phys = use_xsdt ? xsdt->entries[i] : rsdt->entries[i];
        const struct acpi_sdt_header *t = load_table(phys);
        if (t) tables[table_count++] = t;
    }
    const struct acpi_madt *madt = acpi_find_table("APIC");
    if (madt) parse_madt(madt);
    const struct acpi_fadt *fadt = acpi_find_table("FACP");
    if (fadt) parse_fadt(fadt);
    if (!s5_found) kprintf("acpi: no \\_S5_ in the DSDT; power off will use fallbacks\n");
}

static void wait_ms(uint64_t ms) {
    if (tsc_hz())
        timer_sleep_us(ms * 1000);
    else
        for (volatile uint64_t i = 0; i < ms * 100000; i++) {
        }
}

void acpi_poweroff(void) {
    if (s5_found && pm1a_cnt) {
        /* Firmware normally leaves ACPI mode on; switch it on if not (SCI_EN). */
        if (!(inw(pm1a_cnt) & 1) && smi_cmd_port && acpi_enable_value) {
            outb(smi_cmd_port, acpi_enable_value);
            for (int i = 0; i < 300 && !(inw(pm1a_cnt) & 1); i++) wait_ms(1);
        }
        outw(pm1a_cnt, (uint16_t)((inw(pm1a_cnt) & ~(7u << 10)) | (slp_typ_a << 10) | (1u << 13)));
        if (pm1b_cnt)
            outw(pm1b_cnt, (uint16_t)((inw(pm1b_cnt) & ~(7u << 10)) | (slp_typ_b << 10) | (1u << 13)));
        wait_ms(500);
        kprintf("acpi: S5 power off did not take effect\n");
    }
    outl(0xf4, 0); /* QEMU isa-debug-exit: exits with status 1 */
    wait_ms(100);
}

__attribute__((noreturn)) void acpi_reboot(void) {
    if (reset_supported) {
        if (reset_reg.space_id == ACPI_SPACE_IO && reset_reg.address <= 0xffff) {
            outb((uint16_t)reset_reg.address, reset_value);
        } else if (reset_reg.space_id == ACPI_SPACE_MEMORY) {
            *(volatile uint8_t *)paging_map_mmio(reset_reg.address, 1) = reset_value;
        }
        wait_ms(100);
    }
    outb(0xCF9, 0x06); /* PCI reset control: full reset */
    wait_ms(100);
    for (int i = 0; i < 100000 && (inb(0x64) & 2); i++) cpu_relax();
    outb(0x64, 0xFE); /* keyboard controller: pulse reset line */
    wait_ms(100);
    /* Last resort: an empty IDT turns the breakpoint into a triple fault. */
    struct __attribute__((packed)) {
        uint16_t limit;
        uint64_t base;
    } empty = {0, 0};
    __asm__ volatile("lidt %0; int3" ::"m"(empty));
    cpu_halt_forever();
}
