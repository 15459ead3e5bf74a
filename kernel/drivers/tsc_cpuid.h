/* tsc_cpuid.h - the TSC rate as CPUID states it, from the leaf values
 * alone (a pure function: tests/host/test_firmware_tables.c feeds it the
 * leaves of real and broken CPUs). */
#ifndef KERNEL_TSC_CPUID_H
#define KERNEL_TSC_CPUID_H

#include <stdint.h>

struct tsc_cpuid_leaves {
    uint32_t max_leaf;        /* CPUID 0 EAX */
    int invariant;            /* CPUID 0x80000007 EDX[8] */
    uint32_t leaf15[3];       /* EAX denominator, EBX numerator, ECX crystal Hz */
    uint32_t leaf16_base_mhz; /* CPUID 0x16 EAX[15:0] */
};

/* TSC ticks per second, or 0 when the leaves state none (absent leaves,
 * zero ratio, a TSC that is not invariant). *leaf names the leaves used. */
uint64_t tsc_hz_from_cpuid(const struct tsc_cpuid_leaves *c, const char **leaf);

#endif
