/* acpi_parse.c - ACPI table parsers over plain bytes (see acpi_parse.h):
 * the \_S5_ package in AML, the MADT's processors, the MCFG's ECAM window
 * and the FADT's registers. Built into the kernel and into a host test. */
#include "kernel/drivers/acpi_parse.h"

#define AML_NAME_OP 0x08
#define AML_PACKAGE_OP 0x12
#define AML_ROOT_PREFIX 0x5C
#define AML_PARENT_PREFIX 0x5E

/* An AML integer constant (ZeroOp, OneOp, Byte/Word/DWord/QWordPrefix) at
 * *pp, not past end. */
static int aml_integer(const uint8_t **pp, const uint8_t *end, uint64_t *out) {
    const uint8_t *p = *pp;
    if (p >= end) return 0;
    int size;
    switch (*p) {
    case 0x00:
    case 0x01:
        *out = *p;
        *pp = p + 1;
        return 1;
    case 0x0A:
        size = 1;
        break;
    case 0x0B:
        size = 2;
        break;
    case 0x0C:
        size = 4;
        break;
    case 0x0E:
        size = 8;
        break;
    default:
        return 0;
    }
    if (end - p < 1 + size) return 0;
    uint64_t v = 0;
    for (int i = size; i >= 1; i--) v = v << 8 | p[i];
    *out = v;
    *pp = p + 1 + size;
    return 1;
}

/* PkgLength at *pp: the byte count from its own first byte; 0 if malformed. */
static size_t aml_pkg_length(const uint8_t **pp, const uint8_t *end) {
    const uint8_t *p = *pp;
    if (p >= end) return 0;
    int follow = p[0] >> 6;
    if (end - p < 1 + follow) return 0;
    size_t length;
    if (follow == 0) {
        length = p[0] & 0x3F;
    } else {
        if (p[0] & 0x30) return 0; /* reserved bits of a multi-byte length */
        length = p[0] & 0x0F;
        for (int i = 1; i <= follow; i++) length |= (size_t)p[i] << (4 + 8 * (i - 1));
    }
    *pp = p + 1 + follow;
    return length;
}

/* The package after "_S5_" at name (name - aml >= 0 checked by the caller). */
static enum acpi_s5_result parse_s5_package(const uint8_t *q, const uint8_t *end, uint8_t *a, uint8_t *b) {
    if (q >= end) return ACPI_S5_TRUNCATED;
    if (*q != AML_PACKAGE_OP) return ACPI_S5_ODD; /* e.g. a method, not a package */
    const uint8_t *pkg_start = ++q;
    size_t length = aml_pkg_length(&q, end);
    if (!length && q == pkg_start) return q >= end ? ACPI_S5_TRUNCATED : ACPI_S5_ODD;
    if (length < (size_t)(q - pkg_start) + 1) return ACPI_S5_ODD;
    if (length > (size_t)(end - pkg_start)) return ACPI_S5_TRUNCATED;
    const uint8_t *pkg_end = pkg_start + length;
    unsigned elements = *q++;
    if (elements == 0) return ACPI_S5_ODD;
    uint64_t typ_a, typ_b;
    if (!aml_integer(&q, pkg_end, &typ_a)) return q >= pkg_end ? ACPI_S5_TRUNCATED : ACPI_S5_ODD;
    if (elements == 1) {
        typ_b = typ_a; /* one value: the same for both PM1 blocks */
    } else if (!aml_integer(&q, pkg_end, &typ_b)) {
        return q >= pkg_end ? ACPI_S5_TRUNCATED : ACPI_S5_ODD;
    }
    if (typ_a > 7 || typ_b > 7) return ACPI_S5_ODD; /* SLP_TYP is a 3-bit field */
    *a = (uint8_t)typ_a;
    *b = (uint8_t)typ_b;
    return ACPI_S5_FOUND;
}

enum acpi_s5_result acpi_aml_find_s5(const uint8_t *aml, size_t len, uint8_t *typ_a, uint8_t *typ_b) {
    enum acpi_s5_result worst = ACPI_S5_ABSENT;
    if (!aml) return worst;
    const uint8_t *end = aml + len;
    for (const uint8_t *p = aml; end - p >= 4; p++) {
        if (p[0] != '_' || p[1] != 'S' || p[2] != '5' || p[3] != '_') continue;
        /* Only a definition counts: NameOp, optionally a \ or ^ prefix. */
        const uint8_t *before = p;
        if (before > aml && (before[-1] == AML_ROOT_PREFIX || before[-1] == AML_PARENT_PREFIX)) before--;
        if (before == aml || before[-1] != AML_NAME_OP) continue;
        enum acpi_s5_result r = parse_s5_package(p + 4, end, typ_a, typ_b);
        if (r == ACPI_S5_FOUND) return r;
        worst = r; /* keep looking: another definition may be well formed */
    }
    return worst;
}

static int id_listed(const struct acpi_madt_cpus *out, uint32_t id) {
    for (int i = 0; i < out->count; i++)
        if (out->ids[i] == id) return 1;
    return 0;
}

static void add_cpu(struct acpi_madt_cpus *out, uint32_t id, int from_x2apic_entry) {
    if (id > ACPI_MAX_APIC_ID || (!from_x2apic_entry && id == 0xFF)) {
        out->absurd++;
        return;
    }
    if (id_listed(out, id)) {
        out->duplicates++;
        return;
    }
    if (out->count == ACPI_MAX_CPUS) {
        out->over_limit++;
        return;
    }
    out->ids[out->count++] = id;
    if (from_x2apic_entry) out->x2apic_ids++;
    if (id > out->max_id) out->max_id = id;
}

void acpi_madt_parse(const void *table, size_t length, struct acpi_madt_cpus *out) {
    *out = (struct acpi_madt_cpus){0};
    if (!table || length < sizeof(struct acpi_madt)) return;
    const uint8_t *p = ((const struct acpi_madt *)table)->entries;
    const uint8_t *end = (const uint8_t *)table + length;
    while (end - p >= 2) {
        const struct acpi_madt_entry *e = (const void *)p;
        if (e->length < 2 || e->length > end - p) {
            out->bad_entries++;
            return; /* a zero length would loop forever; a long one reads past the table */
        }
        if (e->type == ACPI_MADT_LOCAL_APIC && e->length >= sizeof(struct acpi_madt_local_apic)) {
            const struct acpi_madt_local_apic *lapic = (const void *)e;
            if (lapic->flags & ACPI_MADT_ENABLED) add_cpu(out, lapic->apic_id, 0);
        } else if (e->type == ACPI_MADT_LOCAL_X2APIC && e->length >= sizeof(struct acpi_madt_local_x2apic)) {
            const struct acpi_madt_local_x2apic *x2apic = (const void *)e;
            if (x2apic->flags & ACPI_MADT_ENABLED) add_cpu(out, x2apic->x2apic_id, 1);
        }
        p += e->length;
    }
}

#define MAX_PHYS_ADDRESS (1ull << 52)
#define ECAM_BUS_BYTES (1ull << 20)

void acpi_mcfg_parse(const void *table, size_t length, struct acpi_ecam_window *out) {
    *out = (struct acpi_ecam_window){0};
    if (!table || length < sizeof(struct acpi_mcfg)) return;
    const struct acpi_mcfg *mcfg = table;
    size_t count = (length - sizeof *mcfg) / sizeof mcfg->allocations[0];
    for (size_t i = 0; i < count; i++) {
        const struct acpi_mcfg_allocation *e = &mcfg->allocations[i];
        if (e->segment != 0) continue; /* only segment 0 is reachable through 0xCF8 too */
        uint64_t span = (uint64_t)(e->end_bus - e->start_bus + 1) * ECAM_BUS_BYTES;
        if (!e->base_address || e->start_bus > e->end_bus || (e->base_address & (ECAM_BUS_BYTES - 1)) ||
            e->base_address >= MAX_PHYS_ADDRESS || span > MAX_PHYS_ADDRESS - e->base_address) {
            out->skipped++;
            continue;
        }
        if (out->base) continue;
        out->base = e->base_address;
        out->start_bus = e->start_bus;
        out->end_bus = e->end_bus;
    }
}

int acpi_ecam_overlaps_ram(const struct acpi_ecam_window *w, const uint64_t (*ram)[2], size_t count) {
    uint64_t begin = w->base, end = w->base + (uint64_t)(w->end_bus - w->start_bus + 1) * ECAM_BUS_BYTES;
    for (size_t i = 0; i < count; i++)
        if (ram[i][0] < end && begin < ram[i][1]) return 1;
    return 0;
}

/* The FADT may be shorter than struct acpi_fadt (older revisions): a field
 * past its length reads as 0. */
#define FADT_FIELD(f, len, field) (ACPI_HAS_FIELD(f, len, field) ? (f)->field : 0)

/* A register from a GAS field, if present, non-zero and of a kind we use. */
static int fadt_register(const struct acpi_fadt *f, size_t len, size_t offset, struct acpi_register *out) {
    *out = (struct acpi_register){0};
    if (offset + sizeof(struct acpi_generic_address) > len) return 0;
    const struct acpi_generic_address *gas = (const void *)((const uint8_t *)f + offset);
    if (!gas->address || (gas->space_id != ACPI_SPACE_IO && gas->space_id != ACPI_SPACE_MEMORY)) return 0;
    if (gas->space_id == ACPI_SPACE_IO && gas->address > 0xffff) return 0;
    out->space = gas->space_id;
    out->address = gas->address;
    return 1;
}
#define FADT_REGISTER(f, len, field, out) fadt_register(f, len, offsetof(struct acpi_fadt, field), out)

/* An I/O port from the extended GAS field, else the 32-bit legacy one. */
static uint16_t fadt_port(const struct acpi_fadt *f, size_t len, size_t gas_offset, uint32_t legacy) {
    struct acpi_register r;
    if (fadt_register(f, len, gas_offset, &r) && r.space == ACPI_SPACE_IO) return (uint16_t)r.address;
    return legacy <= 0xffff ? (uint16_t)legacy : 0;
}
#define FADT_PORT(f, len, legacy, gas)                                                                       \
    fadt_port(f, len, offsetof(struct acpi_fadt, gas), FADT_FIELD(f, len, legacy))

void acpi_fadt_parse(const void *table, size_t length, struct acpi_fadt_info *out) {
    *out = (struct acpi_fadt_info){0};
    out->pm_timer_bits = 24;
    if (!table || length < sizeof(struct acpi_sdt_header)) return;
    const struct acpi_fadt *f = table;
    uint32_t flags = FADT_FIELD(f, length, flags);
    out->hardware_reduced = (flags & ACPI_FADT_HW_REDUCED) != 0;
    if (!out->hardware_reduced) {
        out->pm1a_cnt = FADT_PORT(f, length, pm1a_cnt_blk, x_pm1a_cnt_blk);
        out->pm1b_cnt = FADT_PORT(f, length, pm1b_cnt_blk, x_pm1b_cnt_blk);
        out->pm_timer = FADT_PORT(f, length, pm_tmr_blk, x_pm_tmr_blk);
        out->pm_timer_bits = (flags & ACPI_FADT_TMR_VAL_EXT) ? 32 : 24;
        out->smi_cmd = (uint16_t)FADT_FIELD(f, length, smi_cmd);
        out->acpi_enable = FADT_FIELD(f, length, acpi_enable);
    }
    FADT_REGISTER(f, length, sleep_control_reg, &out->sleep_control);
    FADT_REGISTER(f, length, sleep_status_reg, &out->sleep_status);
    if ((flags & ACPI_FADT_RESET_REG_SUP) && ACPI_HAS_FIELD(f, length, reset_value) &&
        FADT_REGISTER(f, length, reset_reg, &out->reset)) {
        out->reset_value = f->reset_value;
        out->reset_supported = 1;
    }
    out->dsdt = FADT_FIELD(f, length, x_dsdt);
    if (!out->dsdt) out->dsdt = FADT_FIELD(f, length, dsdt);
}
