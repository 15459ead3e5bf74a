/* cpu.h - CPU identification, feature bits, port I/O and small helpers. */
#ifndef KERNEL_CPU_H
#define KERNEL_CPU_H

#include <stdint.h>

struct cpu_info {
    char vendor[13];
    char brand[49];
    char hypervisor[13]; /* CPUID 0x40000000 signature ("TCGTCGTCGTCG", "KVMKVMKVM"), "" on bare metal */
    uint32_t family, model, stepping;
    int sse2, sse3, ssse3, sse41, sse42, avx, avx2, fma, f16c, avx512f, avx512bw, avx512vl, avx512vnni;
    int x2apic;        /* CPUID 1 ECX bit 21: the local APIC offers x2APIC mode */
    int avx_enabled;   /* AVX state enabled in XCR0 by us */
    int logical_cores; /* from the ACPI MADT (enabled local APICs), 1 if unknown */
};
extern struct cpu_info cpu;

/* CPUID, enable SSE and (if offered) AVX/AVX2 via XCR0, NX pages, CR0.WP.
 * Feature flags that need OS-enabled state (avx, avx2, fma, f16c, avx512*)
 * are cleared when that state could not be enabled, so they are safe to test.
 * Then tells llm/ which SIMD sets it may use (llm/compute/cpu_features.h). */
void cpu_init(void);
/* On an application processor: the same CR0/CR4/XCR0/EFER setup as the BSP. */
void cpu_init_ap(void);
/* TSC when cpu_park_other_processors sent INIT (0 if it did not). */
extern uint64_t cpu_park_tsc;
int cpu_has_nx(void);        /* EFER.NXE enabled: NX bit usable in page tables */
int cpu_has_gib_pages(void); /* 1 GiB pages */
/* Stops the other processors (INIT IPI): they stay halted in wait-for-SIPI.
 * map_mmio maps the local APIC registers (paging_map_mmio); when it returns
 * NULL nothing is done and the result is 0, else 1. */
int cpu_park_other_processors(void *(*map_mmio)(uint64_t phys, uint64_t size));
/* CPUID leaf/sub-leaf into r = {eax, ebx, ecx, edx}. */
void cpu_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]);
uint64_t cpu_read_msr(uint32_t msr);
void cpu_write_msr(uint32_t msr, uint64_t v);

static inline void outb(uint16_t port, uint8_t v) {
    __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port));
}
static inline void outw(uint16_t port, uint16_t v) {
    __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port));
}
static inline void outl(uint16_t port, uint32_t v) {
    __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port));
}
static inline uint8_t inb(uint16_t port) {
    uint8_t v;
    __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint16_t inw(uint16_t port) {
    uint16_t v;
    __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline uint32_t inl(uint16_t port) {
    uint32_t v;
    __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
    return v;
}
static inline void cpu_relax(void) {
    __asm__ volatile("pause");
}
static inline __attribute__((noreturn)) void cpu_halt_forever(void) {
    for (;;) __asm__ volatile("cli; hlt");
}

#endif
