/* test_firmware_tables.c - the kernel's firmware-table parsers on the host,
 * fed crafted and broken tables: the \_S5_ package in DSDT/SSDT AML, the
 * FADT (full and hardware-reduced), the MADT's processors. The expected
 * values are read off the byte layouts of the ACPI 6.5 specification
 * (chapters 5.2 and 20), written out by hand below. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/drivers/acpi_parse.c"
#include "kernel/drivers/tsc_cpuid.c"
#include "kernel/arch/apic_mode.h"
#include "kernel/mm/memory_map.c"
#include "tests/host/check.h"

/* ---------------------------------------------------------------- \_S5_ */

struct s5_case {
    const char *name;
    uint8_t bytes[32];
    size_t len;
    enum acpi_s5_result want;
    uint8_t a, b;
};

static const struct s5_case s5_cases[] = {
    /* QEMU's DSDT: Name (_S5, Package (0x04) {Zero, Zero, Zero, Zero}) */
    {"QEMU package of ZeroOps",
     {0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0, 0, 0, 0},
     12,
     ACPI_S5_FOUND,
     0,
     0},
    {"root prefix, BytePrefix values",
     {0x08, '\\', '_', 'S', '5', '_', 0x12, 0x08, 0x04, 0x0A, 0x07, 0x0A, 0x07, 0, 0},
     15,
     ACPI_S5_FOUND,
     7,
     7},
    {"two-byte PkgLength, word and one",
     {0x08, '_', 'S', '5', '_', 0x12, 0x48, 0x00, 0x03, 0x0B, 0x05, 0x00, 0x01, 0x00},
     14,
     ACPI_S5_FOUND,
     5,
     1},
    {"one element: used for both",
     {0x08, '_', 'S', '5', '_', 0x12, 0x04, 0x01, 0x0A, 0x05},
     10,
     ACPI_S5_FOUND,
     5,
     5},
    {"a reference, not a definition", {0x70, '_', 'S', '5', '_', 0x60}, 6, ACPI_S5_ABSENT, 0, 0},
    {"name at the very end", {0x08, '_', 'S', '5', '_'}, 5, ACPI_S5_TRUNCATED, 0, 0},
    {"package cut inside a value",
     {0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x04, 0x0A},
     9,
     ACPI_S5_TRUNCATED,
     0,
     0},
    {"PkgLength past the table",
     {0x08, '_', 'S', '5', '_', 0x12, 0x3F, 0x04, 0, 0},
     10,
     ACPI_S5_TRUNCATED,
     0,
     0},
    {"SLP_TYP out of range",
     {0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x02, 0x0A, 0x09, 0x0A, 0x09},
     12,
     ACPI_S5_ODD,
     0,
     0},
    {"a method, not a package", {0x08, '_', 'S', '5', '_', 0x14, 0x05, 0, 0, 0}, 10, ACPI_S5_ODD, 0, 0},
    {"zero elements", {0x08, '_', 'S', '5', '_', 0x12, 0x02, 0x00}, 8, ACPI_S5_ODD, 0, 0},
    {"reserved PkgLength bits",
     {0x08, '_', 'S', '5', '_', 0x12, 0x70, 0x00, 0x02, 0, 0},
     11,
     ACPI_S5_ODD,
     0,
     0},
    {"a string where a value belongs",
     {0x08, '_', 'S', '5', '_', 0x12, 0x06, 0x02, 0x0D, 'x', 0x00, 0x00},
     12,
     ACPI_S5_ODD,
     0,
     0},
    {"a bad definition, then a good one",
     {0x08, '_', 'S', '5', '_',  0x12, 0x04, 0x02, 0x0D, 0x00, 0x08,
      '_',  'S', '5', '_', 0x12, 0x05, 0x02, 0x0A, 0x06, 0x00},
     21,
     ACPI_S5_FOUND,
     6,
     0},
};

static void test_s5(void) {
    for (size_t i = 0; i < sizeof s5_cases / sizeof s5_cases[0]; i++) {
        const struct s5_case *c = &s5_cases[i];
        uint8_t *copy = malloc(c->len); /* exact size, so ASan sees any read past it */
        memcpy(copy, c->bytes, c->len);
        uint8_t a = 0xEE, b = 0xEE;
        enum acpi_s5_result r = acpi_aml_find_s5(copy, c->len, &a, &b);
        int ok = r == c->want && (r != ACPI_S5_FOUND || (a == c->a && b == c->b));
        check(ok, c->name, "result %d (want %d), SLP_TYP %u/%u (want %u/%u)", r, c->want, a, b, c->a, c->b);
        free(copy);
    }
    /* Every cut of a good definition is truncated, never found or a crash. */
    const struct s5_case *full = &s5_cases[1];
    int bad_cuts = 0;
    for (size_t cut = 6; cut < full->len; cut++) {
        uint8_t *copy = malloc(cut);
        memcpy(copy, full->bytes, cut);
        uint8_t a, b;
        if (acpi_aml_find_s5(copy, cut, &a, &b) != ACPI_S5_TRUNCATED) bad_cuts++;
        free(copy);
    }
    check(bad_cuts == 0, "every truncation of a good \\_S5_ is reported truncated", "%d cuts were not",
          bad_cuts);
    uint8_t a, b;
    check(acpi_aml_find_s5(NULL, 0, &a, &b) == ACPI_S5_ABSENT, "empty AML", "not absent");
    /* Random bytes with _S5_ names sprinkled in: any answer, no hang, no stray read. */
    uint32_t x = 12345;
    int found = 0;
    for (int round = 0; round < 20000; round++) {
        size_t len = 1 + round % 40;
        uint8_t *buf = malloc(len);
        for (size_t i = 0; i < len; i++) {
            x ^= x << 13, x ^= x >> 17, x ^= x << 5;
            buf[i] = (uint8_t)x;
        }
        if (len >= 6) memcpy(buf + (x % (len - 5)), "\x08_S5_", 5);
        found += acpi_aml_find_s5(buf, len, &a, &b) == ACPI_S5_FOUND && a < 8 && b < 8;
        free(buf);
    }
    check_plain(1, "20000 random AML buffers parsed without a fault", "");
    printf("  (%d of them held a usable \\_S5_)\n", found);
}

/* ---------------------------------------------------------------- FADT */

static void set_gas(struct acpi_generic_address *g, uint8_t space, uint64_t address) {
    memset(g, 0, sizeof *g);
    g->space_id = space;
    g->bit_width = 8;
    g->address = address;
}

static void test_fadt(void) {
    struct acpi_fadt f;
    struct acpi_fadt_info info;
    memset(&f, 0, sizeof f);
    memcpy(f.header.signature, "FACP", 4);
    f.header.length = sizeof f;
    f.pm1a_cnt_blk = 0x604;
    f.pm_tmr_blk = 0x608;
    f.dsdt = 0x7ffe0000;
    f.flags = ACPI_FADT_TMR_VAL_EXT | ACPI_FADT_RESET_REG_SUP;
    set_gas(&f.reset_reg, ACPI_SPACE_IO, 0xCF9);
    f.reset_value = 0x06;
    acpi_fadt_parse(&f, sizeof f, &info);
    check(info.pm1a_cnt == 0x604 && info.pm_timer == 0x608 && info.pm_timer_bits == 32 &&
              !info.hardware_reduced,
          "full FADT: PM1a, PM timer (32-bit)", "pm1a 0x%x timer 0x%x bits %d", info.pm1a_cnt, info.pm_timer,
          info.pm_timer_bits);
    check(info.reset_supported && info.reset.space == ACPI_SPACE_IO && info.reset.address == 0xCF9 &&
              info.reset_value == 6 && info.dsdt == 0x7ffe0000,
          "full FADT: reset register 0xCF9 <- 6, DSDT", "reset %d 0x%lx <- %u", info.reset_supported,
          (unsigned long)info.reset.address, info.reset_value);

    set_gas(&f.x_pm1a_cnt_blk, ACPI_SPACE_IO, 0xB004);
    f.x_dsdt = 0x1234567000ull;
    acpi_fadt_parse(&f, sizeof f, &info);
    check(info.pm1a_cnt == 0xB004 && info.dsdt == 0x1234567000ull,
          "extended X_ fields win over the 32-bit ones", "pm1a 0x%x dsdt 0x%lx", info.pm1a_cnt,
          (unsigned long)info.dsdt);

    /* An ACPI 1.0 FADT ends before RESET_REG: nothing past its length is read. */
    acpi_fadt_parse(&f, 116, &info);
    check(info.pm1a_cnt == 0x604 && !info.reset_supported && info.dsdt == 0x7ffe0000,
          "short FADT: fields past its length are absent", "pm1a 0x%x reset %d", info.pm1a_cnt,
          info.reset_supported);

    /* Hardware-reduced: PM blocks ignored, the sleep registers used. */
    memset(&f, 0, sizeof f);
    f.header.length = sizeof f;
    f.flags = ACPI_FADT_HW_REDUCED | ACPI_FADT_RESET_REG_SUP;
    f.pm1a_cnt_blk = 0x604; /* firmware junk that must not be used */
    set_gas(&f.sleep_control_reg, ACPI_SPACE_MEMORY, 0xFED80000ull);
    set_gas(&f.sleep_status_reg, ACPI_SPACE_MEMORY, 0xFED80001ull);
    set_gas(&f.reset_reg, ACPI_SPACE_MEMORY, 0xFED80002ull);
    f.reset_value = 0x01;
    acpi_fadt_parse(&f, sizeof f, &info);
    check(info.hardware_reduced && info.pm1a_cnt == 0 && info.sleep_control.address == 0xFED80000ull &&
              info.sleep_control.space == ACPI_SPACE_MEMORY && info.sleep_status.address == 0xFED80001ull,
          "hardware-reduced FADT: sleep control/status registers, no PM1", "hw %d pm1a 0x%x ctl 0x%lx",
          info.hardware_reduced, info.pm1a_cnt, (unsigned long)info.sleep_control.address);
    check(info.reset_supported && info.reset.space == ACPI_SPACE_MEMORY &&
              info.reset.address == 0xFED80002ull,
          "hardware-reduced FADT: memory reset register", "reset %d", info.reset_supported);
    set_gas(&f.sleep_control_reg, 7 /* PCI config space: not ours */, 0x10);
    set_gas(&f.reset_reg, ACPI_SPACE_IO, 0x12345);
    acpi_fadt_parse(&f, sizeof f, &info);
    check(!info.sleep_control.address && !info.reset_supported, "unusable address spaces are refused",
          "ctl 0x%lx reset %d", (unsigned long)info.sleep_control.address, info.reset_supported);
    acpi_fadt_parse(&f, 10, &info);
    check(!info.hardware_reduced && !info.dsdt, "a FADT shorter than its header", "parsed something");
}

/* ---------------------------------------------------------------- MADT */

struct madt_builder {
    uint8_t bytes[4096];
    size_t len;
};

static void madt_begin(struct madt_builder *m) {
    memset(m, 0, sizeof *m);
    m->len = sizeof(struct acpi_madt);
}

static void madt_lapic(struct madt_builder *m, uint8_t id, uint32_t flags) {
    struct acpi_madt_local_apic e = {{ACPI_MADT_LOCAL_APIC, sizeof e}, id, id, flags};
    memcpy(m->bytes + m->len, &e, sizeof e);
    m->len += sizeof e;
}

static void madt_x2apic(struct madt_builder *m, uint32_t id, uint32_t flags) {
    struct acpi_madt_local_x2apic e = {{ACPI_MADT_LOCAL_X2APIC, sizeof e}, 0, id, flags, id};
    memcpy(m->bytes + m->len, &e, sizeof e);
    m->len += sizeof e;
}

static void madt_raw(struct madt_builder *m, uint8_t type, uint8_t length) {
    m->bytes[m->len] = type;
    m->bytes[m->len + 1] = length;
    m->len += length ? length : 2;
}

static void madt_parse_exact(const struct madt_builder *m, struct acpi_madt_cpus *out) {
    uint8_t *copy = malloc(m->len);
    memcpy(copy, m->bytes, m->len);
    acpi_madt_parse(copy, m->len, out);
    free(copy);
}

static void test_madt(void) {
    struct madt_builder m;
    struct acpi_madt_cpus c;
    madt_begin(&m);
    madt_lapic(&m, 0, 1);
    madt_lapic(&m, 1, 1);
    madt_lapic(&m, 2, 0); /* disabled */
    madt_raw(&m, 1, 12);  /* an I/O APIC: ignored */
    madt_lapic(&m, 3, 1);
    madt_parse_exact(&m, &c);
    check(c.count == 3 && c.ids[0] == 0 && c.ids[1] == 1 && c.ids[2] == 3 && c.max_id == 3,
          "plain MADT: 3 enabled", "count %d", c.count);

    madt_begin(&m);
    madt_lapic(&m, 0, 1);
    madt_lapic(&m, 1, 1);
    madt_lapic(&m, 1, 1);    /* duplicate */
    madt_x2apic(&m, 0, 1);   /* the same processor again as x2APIC */
    madt_lapic(&m, 0xFF, 1); /* broadcast id: not a processor */
    madt_x2apic(&m, 0xFFFFFFFFu, 1);
    madt_x2apic(&m, 300, 1); /* above 254: needs x2APIC */
    madt_parse_exact(&m, &c);
    check(c.count == 3 && c.duplicates == 2 && c.absurd == 2 && c.ids[2] == 300 && c.max_id == 300 &&
              c.x2apic_ids == 1,
          "duplicate and absurd APIC ids skipped, x2APIC id 300 kept", "count %d dup %d absurd %d max %u",
          c.count, c.duplicates, c.absurd, c.max_id);

    madt_begin(&m);
    for (int i = 0; i < 100; i++) madt_x2apic(&m, (uint32_t)i, 1);
    madt_parse_exact(&m, &c);
    check(c.count == ACPI_MAX_CPUS && c.over_limit == 100 - ACPI_MAX_CPUS,
          "more processors than the kernel starts", "count %d over %d", c.count, c.over_limit);

    madt_begin(&m);
    madt_lapic(&m, 0, 1);
    madt_raw(&m, 0, 0); /* zero length: would loop forever */
    madt_lapic(&m, 1, 1);
    madt_parse_exact(&m, &c);
    check(c.count == 1 && c.bad_entries == 1, "zero-length entry ends the walk", "count %d bad %d", c.count,
          c.bad_entries);

    madt_begin(&m);
    madt_lapic(&m, 0, 1);
    madt_raw(&m, 9, 16);
    m.len -= 8; /* the x2APIC entry claims 16 bytes, the table ends after 8 */
    madt_parse_exact(&m, &c);
    check(c.count == 1 && c.bad_entries == 1, "entry running past the table", "count %d bad %d", c.count,
          c.bad_entries);

    madt_begin(&m);
    madt_raw(&m, 0, 4); /* a local APIC entry too short to hold its fields */
    madt_parse_exact(&m, &c);
    check(c.count == 0 && c.bad_entries == 0, "too-short processor entry ignored", "count %d", c.count);
    acpi_madt_parse(m.bytes, 20, &c);
    check(c.count == 0, "MADT shorter than its header", "count %d", c.count);
}

/* ---------------------------------------------------------------- TSC rate */

static void test_tsc_cpuid(void) {
    const char *leaf = "";
    /* Crystal 24 MHz, ratio 176/2: 24e6 * 88 = 2.112 GHz. */
    struct tsc_cpuid_leaves c = {0x1B, 1, {2, 176, 24000000}, 2100};
    uint64_t hz = tsc_hz_from_cpuid(&c, &leaf);
    check(hz == 2112000000ull && !strcmp(leaf, "CPUID 0x15"), "0x15 with a crystal: crystal x ratio",
          "%lu Hz from %s", (unsigned long)hz, leaf);
    /* Skylake client: no crystal in ECX, so 0x16's base frequency. */
    struct tsc_cpuid_leaves sky = {0x16, 1, {2, 284, 0}, 4000};
    hz = tsc_hz_from_cpuid(&sky, &leaf);
    check(hz == 4000000000ull && !strcmp(leaf, "CPUID 0x15/0x16"), "0x15 without a crystal: 0x16 base",
          "%lu Hz from %s", (unsigned long)hz, leaf);
    struct tsc_cpuid_leaves variant = c;
    variant.invariant = 0;
    check(tsc_hz_from_cpuid(&variant, &leaf) == 0, "a TSC that is not invariant is calibrated", "rate given");
    struct tsc_cpuid_leaves old = {0x0D, 1, {2, 176, 24000000}, 0}; /* leaf 0x15 beyond the max leaf */
    check(tsc_hz_from_cpuid(&old, &leaf) == 0, "leaf 0x15 past the highest leaf is ignored", "rate given");
    struct tsc_cpuid_leaves zero = {0x1F, 1, {0, 0, 0}, 0}; /* QEMU TCG, many hypervisors */
    check(tsc_hz_from_cpuid(&zero, &leaf) == 0, "zero ratio: no rate", "rate given");
    struct tsc_cpuid_leaves no16 = {0x15, 1, {2, 284, 0}, 4000};
    check(tsc_hz_from_cpuid(&no16, &leaf) == 0, "no crystal and no leaf 0x16: no rate", "rate given");
}

/* ---------------------------------------------------------------- APIC mode */

static void test_apic_mode(void) {
    struct apic_mode_choice m = apic_choose_mode(1, 0, 7, 0);
    check(!m.x2apic && !m.reason[0], "x2APIC-capable CPU, small ids: xAPIC", "x2apic %d", m.x2apic);
    m = apic_choose_mode(1, 1, 7, 0);
    check(m.x2apic, "firmware left x2APIC on: kept", "x2apic %d", m.x2apic);
    m = apic_choose_mode(0, 1, 7, 0);
    check(m.x2apic, "firmware's x2APIC kept even if CPUID hides it", "x2apic %d", m.x2apic);
    m = apic_choose_mode(1, 0, 255, 0);
    check(m.x2apic, "APIC id 255 needs x2APIC", "x2apic %d", m.x2apic);
    m = apic_choose_mode(1, 0, 254, 0);
    check(!m.x2apic, "APIC id 254 fits xAPIC", "x2apic %d", m.x2apic);
    m = apic_choose_mode(1, 0, 3, 1);
    check(m.x2apic && strstr(m.reason, "boot.cfg"), "forced by boot.cfg", "x2apic %d", m.x2apic);
    m = apic_choose_mode(0, 0, 3, 1);
    check(!m.x2apic && strstr(m.reason, "no x2APIC"), "forced without CPU support: xAPIC, said why", "%s",
          m.reason);
    m = apic_choose_mode(0, 0, 300, 0);
    check(!m.x2apic && strstr(m.reason, "stay off"), "big ids without x2APIC: said why", "%s", m.reason);
}

/* ---------------------------------------------------------------- MCFG */

static void test_mcfg(void) {
    struct {
        struct acpi_mcfg mcfg;
        struct acpi_mcfg_allocation a[5];
    } t;
    memset(&t, 0, sizeof t);
    /* QEMU q35: one window at 0xB0000000, buses 0-255. */
    t.a[0] = (struct acpi_mcfg_allocation){0xB0000000ull, 0, 0, 255, 0};
    struct acpi_ecam_window w;
    acpi_mcfg_parse(&t, sizeof t.mcfg + sizeof t.a[0], &w);
    check(w.base == 0xB0000000ull && w.start_bus == 0 && w.end_bus == 255 && !w.skipped, "QEMU's MCFG window",
          "base 0x%lx", (unsigned long)w.base);

    t.a[0] = (struct acpi_mcfg_allocation){0, 0, 0, 255, 0};                     /* points at nothing */
    t.a[1] = (struct acpi_mcfg_allocation){0xE0000800ull, 0, 0, 255, 0};         /* not 1 MiB aligned */
    t.a[2] = (struct acpi_mcfg_allocation){0xE0000000ull, 0, 9, 3, 0};           /* buses inverted */
    t.a[3] = (struct acpi_mcfg_allocation){0xFFFFFFFFFFF00000ull, 0, 0, 255, 0}; /* past 2^52 */
    t.a[4] = (struct acpi_mcfg_allocation){0xC0000000ull, 1, 0, 255, 0};         /* segment 1: not used */
    acpi_mcfg_parse(&t, sizeof t, &w);
    check(w.base == 0 && w.skipped == 4, "MCFG windows pointing nowhere are all skipped",
          "base 0x%lx skipped %d", (unsigned long)w.base, w.skipped);
    t.a[4] = (struct acpi_mcfg_allocation){0xC0000000ull, 0, 0, 63, 0};
    acpi_mcfg_parse(&t, sizeof t, &w);
    check(w.base == 0xC0000000ull && w.end_bus == 63 && w.skipped == 4, "the good window after the bad ones",
          "base 0x%lx", (unsigned long)w.base);
    acpi_mcfg_parse(&t, sizeof t.mcfg + 8, &w); /* a window cut in half by the length */
    check(w.base == 0 && !w.skipped, "a half window past the table's length is not read", "base 0x%lx",
          (unsigned long)w.base);
    acpi_mcfg_parse(&t, 20, &w);
    check(w.base == 0, "MCFG shorter than its header", "base 0x%lx", (unsigned long)w.base);

    const uint64_t ram[2][2] = {{0, 0x80000000ull}, {0x100000000ull, 0x140000000ull}};
    struct acpi_ecam_window over_ram = {0x40000000ull, 0, 255, 0}, beside = {0xB0000000ull, 0, 255, 0};
    check(acpi_ecam_overlaps_ram(&over_ram, ram, 2), "an ECAM window over RAM is caught", "not caught");
    check(!acpi_ecam_overlaps_ram(&beside, ram, 2), "an ECAM window in the PCI hole is fine", "refused");
}

/* ---------------------------------------------------------------- memory map */

#define MIB (1ull << 20)
#define REGION(base, bytes, type) ((struct boot_mem_region){(base), (bytes) / 4096, (type), 0})

static int map_equals(const struct boot_mem_region *got, uint32_t n, const struct boot_mem_region *want,
                      uint32_t m) {
    if (n != m) return 0;
    for (uint32_t i = 0; i < n; i++)
        if (got[i].base != want[i].base || got[i].pages != want[i].pages || got[i].type != want[i].type)
            return 0;
    return 1;
}

static void print_map(const struct boot_mem_region *mem, uint32_t n) {
    for (uint32_t i = 0; i < n; i++)
        printf("    0x%lx +%lu pages type %u\n", (unsigned long)mem[i].base, (unsigned long)mem[i].pages,
               mem[i].type);
}

static void test_memory_map(void) {
    static struct boot_mem_region mem[BOOT_MAX_MEM_REGIONS];
    struct memory_map_report r;
    /* Out of order, touching regions of one type, a zero-length one, an unaligned one. */
    mem[0] = REGION(16 * MIB, 16 * MIB, BOOT_MEM_USABLE);
    mem[1] = REGION(1 * MIB, 15 * MIB, BOOT_MEM_USABLE);
    mem[2] = REGION(64 * MIB, 0, BOOT_MEM_USABLE);
    mem[3] = (struct boot_mem_region){0x1234, 1, BOOT_MEM_USABLE, 0};
    mem[4] = REGION(0, 640 * 1024, BOOT_MEM_USABLE);
    uint32_t n = memory_map_sanitize(mem, 5, &r);
    struct boot_mem_region want1[] = {REGION(0, 640 * 1024, BOOT_MEM_USABLE),
                                      REGION(1 * MIB, 31 * MIB, BOOT_MEM_USABLE)};
    check(map_equals(mem, n, want1, 2) && r.dropped == 2 && r.overlaps == 0,
          "zero-length and unaligned dropped, sorted, touching merged", "n %u dropped %u", n, r.dropped);
    if (n != 2) print_map(mem, n);

    /* A reserved hole inside usable RAM, and ACPI tables half over it. */
    mem[0] = REGION(0, 64 * MIB, BOOT_MEM_USABLE);
    mem[1] = REGION(16 * MIB, 4 * MIB, BOOT_MEM_RESERVED);
    mem[2] = REGION(18 * MIB, 4 * MIB, BOOT_MEM_ACPI_RECLAIM);
    mem[3] = REGION(60 * MIB, 8 * MIB, BOOT_MEM_LOADER);
    n = memory_map_sanitize(mem, 4, &r);
    struct boot_mem_region want2[] = {
        REGION(0, 16 * MIB, BOOT_MEM_USABLE),
        REGION(16 * MIB, 4 * MIB, BOOT_MEM_RESERVED),
        REGION(20 * MIB, 2 * MIB, BOOT_MEM_ACPI_RECLAIM),
        REGION(22 * MIB, 38 * MIB, BOOT_MEM_USABLE),
        REGION(60 * MIB, 8 * MIB, BOOT_MEM_LOADER),
    };
    check(map_equals(mem, n, want2, 5) && r.overlaps == 4, "overlaps: the more restrictive type keeps them",
          "n %u overlaps %u", n, r.overlaps);
    if (n != 5) print_map(mem, n);

    /* The same region twice, and one type unknown. */
    mem[0] = REGION(32 * MIB, 32 * MIB, BOOT_MEM_USABLE);
    mem[1] = REGION(32 * MIB, 32 * MIB, BOOT_MEM_USABLE);
    mem[2] = REGION(128 * MIB, 4 * MIB, 99);
    mem[3] = (struct boot_mem_region){0xfffffffffffff000ull, 16, BOOT_MEM_USABLE, 0}; /* wraps */
    n = memory_map_sanitize(mem, 4, &r);
    struct boot_mem_region want3[] = {REGION(32 * MIB, 32 * MIB, BOOT_MEM_USABLE)};
    check(map_equals(mem, n, want3, 1) && r.dropped == 2,
          "duplicate region once, unknown type and wrap dropped", "n %u dropped %u", n, r.dropped);

    /* A full map of overlapping regions: no more than the capacity, every
     * page of usable output covered only by usable input. */
    uint32_t x = 99;
    for (uint32_t i = 0; i < BOOT_MAX_MEM_REGIONS; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        mem[i] = REGION((uint64_t)(x % 4096) * MIB, (uint64_t)(1 + x % 64) * MIB, 1 + (x >> 8) % 6);
    }
    static struct boot_mem_region input[BOOT_MAX_MEM_REGIONS];
    memcpy(input, mem, sizeof input);
    n = memory_map_sanitize(mem, BOOT_MAX_MEM_REGIONS, &r);
    int sorted = 1, wrong = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (i && mem[i].base < mem[i - 1].base + mem[i - 1].pages * 4096) sorted = 0;
        for (uint32_t j = 0; j < BOOT_MAX_MEM_REGIONS; j++) {
            uint64_t lo = input[j].base, hi = lo + input[j].pages * 4096;
            if (lo < mem[i].base + mem[i].pages * 4096 && mem[i].base < hi && input[j].type > mem[i].type)
                wrong++;
        }
    }
    check(n <= BOOT_MAX_MEM_REGIONS && sorted && !wrong,
          "512 random overlapping regions: disjoint, strictest type", "n %u sorted %d wrong %d", n, sorted,
          wrong);
}

int main(void) {
    test_s5();
    test_fadt();
    test_madt();
    test_tsc_cpuid();
    test_apic_mode();
    test_memory_map();
    test_mcfg();
    return failures ? 1 : 0;
}
