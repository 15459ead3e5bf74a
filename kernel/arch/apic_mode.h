/* apic_mode.h - which local APIC mode to run, from facts alone (a pure
 * function, unit-tested on the host in tests/host/test_firmware_tables.c). */
#ifndef KERNEL_APIC_MODE_H
#define KERNEL_APIC_MODE_H

#include <stdint.h>

#define XAPIC_MAX_ID 254 /* 255 is the xAPIC broadcast id */

struct apic_mode_choice {
    int x2apic;
    const char *reason; /* "" for plain xAPIC */
};

/* xAPIC unless something requires x2APIC: it is the mode every x86_64
 * machine has, and the firmware's choice is kept when it made one (there
 * is no way back from x2APIC to xAPIC without a reset). */
static inline struct apic_mode_choice apic_choose_mode(int cpu_has_x2apic, int firmware_enabled_x2apic,
                                                       uint32_t max_apic_id, int forced) {
    if (firmware_enabled_x2apic) return (struct apic_mode_choice){1, "enabled by the firmware"};
    if (cpu_has_x2apic && max_apic_id > XAPIC_MAX_ID)
        return (struct apic_mode_choice){1, "APIC ids above 254"};
    if (cpu_has_x2apic && forced) return (struct apic_mode_choice){1, "apic=x2apic in boot.cfg"};
    if (max_apic_id > XAPIC_MAX_ID)
        return (struct apic_mode_choice){0, "the CPU has no x2APIC: processors above id 254 stay off"};
    if (forced) return (struct apic_mode_choice){0, "apic=x2apic in boot.cfg, but the CPU has no x2APIC"};
    return (struct apic_mode_choice){0, ""};
}

#endif
