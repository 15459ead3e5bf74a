/* apic.h - the local APIC of the running processor (x2APIC MSRs or xAPIC
 * MMIO mapped uncached): enable, ID, INIT/SIPI/NMI IPIs,
 * EOI. Interrupts stay off (IF=0): the APIC is used only for IPIs. */
#ifndef KERNEL_APIC_H
#define KERNEL_APIC_H

#include <stdint.h>

/* BSP: maps/enables the APIC: x2APIC when the firmware enabled it, when
 * max_apic_id (the MADT's largest) exceeds 254, or when forced (boot.cfg
 * apic=x2apic) and the CPU has it; xAPIC otherwise. Returns 0 on success,
 * -1 when there is no usable local APIC. */
int apic_init(int force_x2apic, uint32_t max_apic_id);
/* Why the mode was chosen ("" for plain xAPIC). */
const char *apic_mode_reason(void);
/* Each AP: enables its own APIC in the same mode as the BSP. */
void apic_init_ap(void);
int apic_available(void);
int apic_is_x2apic(void);
uint32_t apic_id(void);
void apic_send_init(uint32_t apic_id);
void apic_send_startup(uint32_t apic_id, uint8_t vector_page);
void apic_send_nmi(uint32_t apic_id);

#endif
