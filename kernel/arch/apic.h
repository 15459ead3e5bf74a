/* apic.h - the local APIC of the running processor (x2APIC when the CPU
 * has it, else xAPIC MMIO mapped uncached): enable, ID, INIT/SIPI/NMI IPIs,
 * EOI. Interrupts stay off (IF=0): the APIC is used only for IPIs. */
#ifndef KERNEL_APIC_H
#define KERNEL_APIC_H

#include <stdint.h>

/* BSP: maps/enables the APIC (x2APIC if available). Returns 0 on success,
 * -1 when there is no usable local APIC. */
int apic_init(void);
/* Each AP: enables its own APIC in the same mode as the BSP. */
void apic_init_ap(void);
int apic_available(void);
int apic_is_x2apic(void);
uint32_t apic_id(void);
void apic_send_init(uint32_t apic_id);
void apic_send_startup(uint32_t apic_id, uint8_t vector_page);
void apic_send_nmi(uint32_t apic_id);
void apic_send_nmi_all_but_self(void);
void apic_eoi(void);

#endif
