/* tsc_cpuid.c - the TSC rate from CPUID 0x15/0x16 (see tsc_cpuid.h). */
#include "kernel/drivers/tsc_cpuid.h"

uint64_t tsc_hz_from_cpuid(const struct tsc_cpuid_leaves *c, const char **leaf) {
    if (!c->invariant || c->max_leaf < 0x15) return 0; /* not invariant: the rate may change */
    uint32_t denominator = c->leaf15[0], numerator = c->leaf15[1], crystal = c->leaf15[2];
    if (!denominator || !numerator) return 0;
    if (crystal) {
        *leaf = "CPUID 0x15";
        return (uint64_t)crystal * numerator / denominator;
    }
    /* No crystal rate given (e.g. Skylake client): the TSC runs at the base frequency. */
    if (c->max_leaf < 0x16 || !c->leaf16_base_mhz) return 0;
    *leaf = "CPUID 0x15/0x16";
    return (uint64_t)c->leaf16_base_mhz * 1000000ull;
}
