/* apic.c - local APIC access for IPIs. xAPIC, unless the firmware enabled
 * x2APIC, the MADT has APIC ids above 254, or boot.cfg says apic=x2apic. In x2APIC mode registers are MSRs
 * (0x800 + offset/16) and the ICR is one 64-bit MSR; in xAPIC mode they are
 * 32-bit MMIO words, the ICR split in two with the high half written first. */
#include "kernel/arch/apic.h"
#include "kernel/arch/apic_mode.h"
#include "kernel/arch/cpu.h"
#include "kernel/mm/paging.h"

#define MSR_APIC_BASE 0x1Bu
#define APIC_BASE_ENABLE (1ull << 11)
#define APIC_BASE_X2APIC (1ull << 10)
#define APIC_BASE_ADDR 0xffffff000ull

#define REG_ID 0x20
#define REG_EOI 0xB0
#define REG_SVR 0xF0
#define REG_ICR_LOW 0x300
#define REG_ICR_HIGH 0x310
#define SVR_ENABLE (1u << 8)
#define SVR_SPURIOUS_VECTOR 0xFF

#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_NMI (4u << 8)
#define ICR_LEVEL_ASSERT (1u << 14)
#define ICR_PENDING (1u << 12)
#define ICR_ALL_BUT_SELF (3u << 18)

static volatile uint32_t *xapic;
static int x2apic;
static int available;

static uint32_t read_reg(uint32_t reg) {
    if (x2apic) return (uint32_t)cpu_read_msr(0x800 + reg / 16);
    return xapic[reg / 4];
}

static void write_reg(uint32_t reg, uint32_t v) {
    if (x2apic)
        cpu_write_msr(0x800 + reg / 16, v);
    else
        xapic[reg / 4] = v;
}

static void enable_this_cpu(void) {
    uint64_t base = cpu_read_msr(MSR_APIC_BASE) | APIC_BASE_ENABLE;
    if (x2apic) base |= APIC_BASE_X2APIC;
    cpu_write_msr(MSR_APIC_BASE, base);
    write_reg(REG_SVR, read_reg(REG_SVR) | SVR_ENABLE | SVR_SPURIOUS_VECTOR);
}

static const char *mode_reason = "";

int apic_init(int force_x2apic, uint32_t max_apic_id) {
    uint32_t r[4];
    cpu_cpuid(1, 0, r);
    if (!((r[3] >> 9) & 1)) return -1;
    uint64_t base = cpu_read_msr(MSR_APIC_BASE);
    /* cpu.x2apic, the bit /cpu reports, so tests can tell which mode was possible. */
    struct apic_mode_choice mode =
        apic_choose_mode(cpu.x2apic, (base & APIC_BASE_X2APIC) != 0, max_apic_id, force_x2apic);
    x2apic = mode.x2apic;
    mode_reason = mode.reason;
    if (!x2apic) {
        xapic = paging_map_mmio(base & APIC_BASE_ADDR, 4096);
        if (!xapic) return -1;
    }
    enable_this_cpu();
    available = 1;
    return 0;
}

const char *apic_mode_reason(void) {
    return mode_reason;
}

void apic_init_ap(void) {
    if (available) enable_this_cpu();
}

int apic_available(void) {
    return available;
}
int apic_is_x2apic(void) {
    return x2apic;
}

uint32_t apic_id(void) {
    if (!available) return 0;
    return x2apic ? read_reg(REG_ID) : read_reg(REG_ID) >> 24;
}

static void send_ipi(uint32_t dest, uint32_t command) {
    if (!available) return;
    if (x2apic) {
        cpu_write_msr(0x830, ((uint64_t)dest << 32) | command);
        return;
    }
    for (int i = 0; i < 100000 && (read_reg(REG_ICR_LOW) & ICR_PENDING); i++) cpu_relax();
    write_reg(REG_ICR_HIGH, dest << 24);
    write_reg(REG_ICR_LOW, command);
    for (int i = 0; i < 100000 && (read_reg(REG_ICR_LOW) & ICR_PENDING); i++) cpu_relax();
}

void apic_send_init(uint32_t id) {
    send_ipi(id, ICR_INIT | ICR_LEVEL_ASSERT);
}
void apic_send_startup(uint32_t id, uint8_t vector_page) {
    send_ipi(id, ICR_STARTUP | ICR_LEVEL_ASSERT | vector_page);
}
void apic_send_nmi(uint32_t id) {
    send_ipi(id, ICR_NMI | ICR_LEVEL_ASSERT);
}
