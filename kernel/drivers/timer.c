/* timer.c - time from the TSC. Its rate comes, best first, from:
 *   - CPUID 0x15 (crystal x ratio; with 0x16's base frequency when the
 *     crystal is not given), when the TSC is invariant (CPUID 0x80000007
 *     EDX[8]) and a short check against a reference timer agrees;
 *   - calibration over 50 ms against the HPET (ACPI "HPET" table), the ACPI
 *     PM timer (3.579545 MHz) or PIT channel 2 gated through port 0x61.
 * The boot log names the source. Under QEMU TCG the TSC runs at the host
 * rate and TCG CPUs offer no leaf 0x15, so the calibration is what runs. */
#include "kernel/drivers/timer.h"
#include "kernel/drivers/tsc_cpuid.h"
#include "kernel/drivers/acpi.h"
#include "kernel/arch/cpu.h"
#include "kernel/mm/paging.h"
#include "kernel/console/console.h"
#include "lib/format.h"

#define PM_TIMER_HZ 3579545ull
#define PIT_HZ 1193182ull
#define CALIBRATION_MS 50
#define CHECK_MS 10           /* the check of a CPUID frequency */
#define CPUID_TOLERANCE_PCT 2 /* how far a CPUID frequency may sit from the check */
#define STUCK_TICKS (1ull << 36)

static uint64_t hz;
static uint64_t start_tsc;
static char source[64] = "none";

uint64_t tsc_hz(void) {
    return hz;
}
const char *timer_source(void) {
    return source;
}

/* A free-running reference counter: read() returns its value, `mask` its
 * width, `hz` its rate. */
struct reference {
    const char *name;
    uint64_t hz;
    uint64_t mask;
    uint64_t (*read)(const struct reference *);
    uint16_t port;
    volatile uint64_t *counter;
};

static uint64_t read_pm_timer(const struct reference *r) {
    return inl(r->port);
}
static uint64_t read_hpet(const struct reference *r) {
    return *r->counter;
}

/* TSC ticks per second measured over `ms` of the reference; 0 if it does not tick. */
static uint64_t measure(const struct reference *r, unsigned ms) {
    uint64_t target = r->hz * ms / 1000;
    uint64_t last = r->read(r) & r->mask, elapsed = 0;
    uint64_t t0 = rdtsc();
    while (elapsed < target) {
        uint64_t now = r->read(r) & r->mask;
        elapsed += (now - last) & r->mask; /* wraps cleanly */
        last = now;
        if (rdtsc() - t0 > STUCK_TICKS) return 0;
    }
    uint64_t t1 = rdtsc();
    return (t1 - t0) * r->hz / elapsed;
}

#define HPET_CAPABILITIES 0x00
#define HPET_CONFIG 0x10
#define HPET_COUNTER 0xF0
#define HPET_ENABLE 1ull
#define FEMTOSECONDS 1000000000000000ull

/* The HPET's main counter from the ACPI "HPET" table (its base address is
 * a generic address at offset 40), enabled if the firmware left it off. */
static int hpet_reference(struct reference *r) {
    const uint8_t *table = acpi_find_table("HPET");
    if (!table || ((const struct acpi_sdt_header *)table)->length < 52) return 0;
    const struct acpi_generic_address *gas = (const void *)(table + 40);
    if (gas->space_id != ACPI_SPACE_MEMORY || !gas->address || (gas->address & 7)) return 0;
    volatile uint64_t *regs = paging_map_mmio(gas->address, 1024);
    uint64_t period_fs = regs[HPET_CAPABILITIES / 8] >> 32;
    if (period_fs == 0 || period_fs > 100000000ull) return 0; /* the spec caps it at 100 ns */
    if (!(regs[HPET_CONFIG / 8] & HPET_ENABLE)) regs[HPET_CONFIG / 8] |= HPET_ENABLE;
    int wide = (regs[HPET_CAPABILITIES / 8] >> 13) & 1;
    *r = (struct reference){"HPET", FEMTOSECONDS / period_fs, wide ? ~0ull : 0xffffffffull, read_hpet,
                            0,      regs + HPET_COUNTER / 8};
    return 1;
}

static int pm_timer_reference(struct reference *r) {
    int bits = 24;
    uint16_t port = acpi_pm_timer_port(&bits);
    if (!port) return 0;
    *r = (struct reference){"ACPI PM timer", PM_TIMER_HZ, bits == 32 ? 0xffffffffull : 0xffffffull,
                            read_pm_timer,   port,        0};
    return 1;
}

static uint64_t calibrate_pit(unsigned ms) {
    uint16_t count = (uint16_t)(PIT_HZ * ms / 1000);
    uint8_t gate = inb(0x61);
    outb(0x61, (gate & ~0x02) & ~0x01); /* speaker off, gate low */
    outb(0x43, 0xB0);                   /* channel 2, lobyte/hibyte, mode 0 */
    outb(0x42, count & 0xff);
    outb(0x42, count >> 8);
    outb(0x61, (inb(0x61) & ~0x02) | 0x01); /* gate high: start counting */
    uint64_t t0 = rdtsc();
    while (!(inb(0x61) & 0x20)) { /* OUT2 goes high at terminal count */
        if (rdtsc() - t0 > STUCK_TICKS) {
            outb(0x61, gate);
            return 0;
        }
    }
    uint64_t t1 = rdtsc();
    outb(0x61, gate);
    return (t1 - t0) * PIT_HZ / count;
}

/* The TSC rate CPUID states, 0 when it states none or the TSC is not invariant. */
static uint64_t cpuid_tsc_hz(const char **leaf) {
    struct tsc_cpuid_leaves c = {0};
    uint32_t r[4];
    cpu_cpuid(0x80000000u, 0, r);
    if (r[0] >= 0x80000007u) {
        cpu_cpuid(0x80000007u, 0, r);
        c.invariant = (r[3] >> 8) & 1;
    }
    cpu_cpuid(0, 0, r);
    c.max_leaf = r[0];
    if (c.max_leaf >= 0x15) { /* higher leaves repeat the last one on Intel: ask only for real ones */
        cpu_cpuid(0x15, 0, r);
        c.leaf15[0] = r[0], c.leaf15[1] = r[1], c.leaf15[2] = r[2];
    }
    if (c.max_leaf >= 0x16) {
        cpu_cpuid(0x16, 0, r);
        c.leaf16_base_mhz = r[0] & 0xffff;
    }
    return tsc_hz_from_cpuid(&c, leaf);
}

void timer_init(void) {
    struct reference ref;
    int have_ref = hpet_reference(&ref) || pm_timer_reference(&ref);
    const char *leaf = "";
    uint64_t stated = cpuid_tsc_hz(&leaf);
    if (stated) {
        /* A wrong table (some hypervisors) would skew every figure: check it. */
        uint64_t seen = have_ref ? measure(&ref, CHECK_MS) : calibrate_pit(CHECK_MS);
        uint64_t diff = seen > stated ? seen - stated : stated - seen;
        if (seen && diff * 100 <= stated * CPUID_TOLERANCE_PCT) {
            hz = stated;
            snprintf(source, sizeof source, "%s, invariant TSC", leaf);
        } else {
            kprintf("timer: %s says %lu kHz but the TSC runs at %lu kHz: calibrating\n", leaf,
                    (unsigned long)(stated / 1000), (unsigned long)(seen / 1000));
        }
    }
    if (!hz && have_ref) {
        hz = measure(&ref, CALIBRATION_MS);
        if (hz) snprintf(source, sizeof source, "%s, %d ms", ref.name, CALIBRATION_MS);
    }
    if (!hz) {
        hz = calibrate_pit(CALIBRATION_MS);
        if (hz) snprintf(source, sizeof source, "PIT, %d ms", CALIBRATION_MS);
    }
    if (!hz) {
        hz = 1000000000ull; /* nothing to measure against: assume 1 GHz */
        snprintf(source, sizeof source, "assumed 1 GHz");
    }
    start_tsc = rdtsc();
}

uint64_t timer_ticks_to_ns(uint64_t ticks) {
    if (!hz) return 0;
    /* Split to avoid overflow of ticks * 1e9. */
    return ticks / hz * 1000000000ull + (ticks % hz) * 1000000000ull / hz;
}

uint64_t timer_ns(void) {
    return timer_ticks_to_ns(rdtsc() - start_tsc);
}
uint64_t timer_ms(void) {
    return timer_ns() / 1000000ull;
}

void timer_sleep_us(uint64_t us) {
    if (!hz) return;
    uint64_t ticks = hz / 1000000ull * us + (hz % 1000000ull) * us / 1000000ull;
    uint64_t t0 = rdtsc();
    while (rdtsc() - t0 < ticks) cpu_relax();
}
