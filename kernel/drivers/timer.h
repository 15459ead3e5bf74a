/* timer.h - time from the TSC: its rate from CPUID (invariant TSC) or
 * calibrated at boot against the HPET, the ACPI PM timer or the PIT. */
#ifndef KERNEL_TIMER_H
#define KERNEL_TIMER_H

#include <stdint.h>

void timer_init(void);
uint64_t timer_ns(void); /* since timer_init */
uint64_t timer_ms(void);
uint64_t tsc_hz(void);
void timer_sleep_us(uint64_t us);
/* Nanoseconds for a TSC tick count (0 before calibration). */
uint64_t timer_ticks_to_ns(uint64_t ticks);
/* Where the TSC rate came from: "CPUID 0x15, invariant TSC", "HPET, 50 ms",
 * "ACPI PM timer, 50 ms", "PIT, 50 ms" or "assumed 1 GHz". */
const char *timer_source(void);

static inline uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

#endif
