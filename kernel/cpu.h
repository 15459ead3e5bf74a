/* cpu.h - CPU identification, feature bits, port I/O and small helpers. */
#ifndef KERNEL_CPU_H
#define KERNEL_CPU_H

#include <stdint.h>

struct cpu_info {
    char vendor[13];
    char brand[49];
    uint32_t family, model, stepping;
    int sse2, sse3, ssse3, sse41, sse42, avx, avx2, fma, f16c, avx512f, avx512bw, avx512vnni;
    int avx_enabled;     /* AVX state enabled in XCR0 by us */
    int logical_cores;   /* from the ACPI MADT (enabled local APICs), 1 if unknown */
};
extern struct cpu_info cpu;

void cpu_init(void);   /* CPUID, enable SSE and (if offered) AVX/AVX2 via XCR0 */

static inline void outb(uint16_t port, uint8_t v) { __asm__ volatile("outb %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outw(uint16_t port, uint16_t v) { __asm__ volatile("outw %0, %1" ::"a"(v), "Nd"(port)); }
static inline void outl(uint16_t port, uint32_t v) { __asm__ volatile("outl %0, %1" ::"a"(v), "Nd"(port)); }
static inline uint8_t inb(uint16_t port) { uint8_t v; __asm__ volatile("inb %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint16_t inw(uint16_t port) { uint16_t v; __asm__ volatile("inw %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline uint32_t inl(uint16_t port) { uint32_t v; __asm__ volatile("inl %1, %0" : "=a"(v) : "Nd"(port)); return v; }
static inline void cpu_relax(void) { __asm__ volatile("pause"); }
static inline __attribute__((noreturn)) void cpu_halt_forever(void) {
    for (;;) __asm__ volatile("cli; hlt");
}

#endif
