/* timer.h - time from the TSC, calibrated at boot against the PIT/PM timer. */
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
/* What the TSC was calibrated against: "ACPI PM timer" or "PIT". */
const char *timer_source(void);

static inline uint64_t rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

#endif
