/* timer.c - time from the TSC, calibrated once at boot over ~5 ms against
 * the ACPI PM timer (3.579545 MHz) or, without one, PIT channel 2 gated
 * through port 0x61. Under QEMU TCG the TSC runs at the host rate. */
#include "kernel/drivers/timer.h"
#include "kernel/drivers/acpi.h"
#include "kernel/arch/cpu.h"

#define PM_TIMER_HZ 3579545ull
#define PIT_HZ 1193182ull
#define CALIBRATION_MS 5

static uint64_t hz;
static uint64_t start_tsc;
static const char *source = "none";

uint64_t tsc_hz(void) {
    return hz;
}
const char *timer_source(void) {
    return source;
}

static uint64_t calibrate_pm_timer(uint16_t port, int bits) {
    uint32_t mask = bits == 32 ? 0xffffffffu : 0xffffffu;
    uint64_t target = PM_TIMER_HZ * CALIBRATION_MS / 1000;
    uint32_t last = inl(port) & mask;
    uint64_t elapsed = 0;
    uint64_t t0 = rdtsc();
    while (elapsed < target) {
        uint32_t now = inl(port) & mask;
        elapsed += (now - last) & mask; /* wraps cleanly */
        last = now;
        if (rdtsc() - t0 > (1ull << 36)) return 0; /* timer not ticking */
    }
    uint64_t t1 = rdtsc();
    return (t1 - t0) * PM_TIMER_HZ / elapsed;
}

static uint64_t calibrate_pit(void) {
    uint16_t count = (uint16_t)(PIT_HZ * CALIBRATION_MS / 1000);
    uint8_t gate = inb(0x61);
    outb(0x61, (gate & ~0x02) & ~0x01); /* speaker off, gate low */
    outb(0x43, 0xB0);                   /* channel 2, lobyte/hibyte, mode 0 */
    outb(0x42, count & 0xff);
    outb(0x42, count >> 8);
    outb(0x61, (inb(0x61) & ~0x02) | 0x01); /* gate high: start counting */
    uint64_t t0 = rdtsc();
    while (!(inb(0x61) & 0x20)) { /* OUT2 goes high at terminal count */
        if (rdtsc() - t0 > (1ull << 36)) {
            outb(0x61, gate);
            return 0;
        }
    }
    uint64_t t1 = rdtsc();
    outb(0x61, gate);
    return (t1 - t0) * 1000 / CALIBRATION_MS;
}

void timer_init(void) {
    int bits = 24;
    uint16_t port = acpi_pm_timer_port(&bits);
    if (port) {
        hz = calibrate_pm_timer(port, bits);
        if (hz) source = "ACPI PM timer";
    }
    if (!hz) {
        hz = calibrate_pit();
        if (hz) source = "PIT";
    }
    if (!hz) {
        hz = 1000000000ull; /* nothing to measure against: assume 1 GHz */
        source = "assumed 1 GHz";
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
