/* cpu.c - CPUID identification and the control-register setup the rest of
 * the kernel relies on: SSE, AVX (XCR0), NX pages (EFER.NXE), CR0.WP. */
#include "kernel/arch/cpu.h"
#include "lib/string.h"
#include "llm/compute/cpu_features.h"

struct cpu_info cpu;
static int nx_supported;
static int gib_pages_supported;
static uint64_t enabled_xcr0; /* what the BSP put in XCR0; the APs copy it */
uint64_t cpu_park_tsc;

void cpu_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}

static uint64_t read_cr0(void) {
    uint64_t v;
    __asm__ volatile("mov %%cr0, %0" : "=r"(v));
    return v;
}
static uint64_t read_cr4(void) {
    uint64_t v;
    __asm__ volatile("mov %%cr4, %0" : "=r"(v));
    return v;
}
static void write_cr0(uint64_t v) {
    __asm__ volatile("mov %0, %%cr0" ::"r"(v) : "memory");
}
static void write_cr4(uint64_t v) {
    __asm__ volatile("mov %0, %%cr4" ::"r"(v) : "memory");
}

uint64_t cpu_read_msr(uint32_t msr) {
    uint32_t lo, hi;
    __asm__ volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
    return ((uint64_t)hi << 32) | lo;
}

void cpu_write_msr(uint32_t msr, uint64_t v) {
    __asm__ volatile("wrmsr" ::"c"(msr), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

static void xsetbv(uint32_t index, uint64_t v) {
    __asm__ volatile("xsetbv" ::"c"(index), "a"((uint32_t)v), "d"((uint32_t)(v >> 32)));
}

#define MSR_EFER 0xC0000080u
#define EFER_NXE (1ull << 11)

static void identify(void) {
    uint32_t r[4];
    cpu_cpuid(0, 0, r);
    uint32_t max_leaf = r[0];
    memcpy(cpu.vendor + 0, &r[1], 4);
    memcpy(cpu.vendor + 4, &r[3], 4);
    memcpy(cpu.vendor + 8, &r[2], 4);
    cpu.vendor[12] = 0;

    cpu_cpuid(1, 0, r);
    uint32_t base_family = (r[0] >> 8) & 0xf, base_model = (r[0] >> 4) & 0xf;
    cpu.stepping = r[0] & 0xf;
    cpu.family = base_family == 0xf ? base_family + ((r[0] >> 20) & 0xff) : base_family;
    cpu.model =
        (base_family == 0x6 || base_family == 0xf) ? (((r[0] >> 16) & 0xf) << 4) | base_model : base_model;
    cpu.sse2 = (r[3] >> 26) & 1;
    cpu.sse3 = r[2] & 1;
    cpu.ssse3 = (r[2] >> 9) & 1;
    cpu.fma = (r[2] >> 12) & 1;
    cpu.sse41 = (r[2] >> 19) & 1;
    cpu.sse42 = (r[2] >> 20) & 1;
    int xsave = (r[2] >> 26) & 1;
    int under_hypervisor = (r[2] >> 31) & 1;
    cpu.avx = (r[2] >> 28) & 1;
    cpu.f16c = (r[2] >> 29) & 1;
    cpu.x2apic = (r[2] >> 21) & 1;
    if (!xsave) cpu.avx = 0;

    if (max_leaf >= 7) {
        cpu_cpuid(7, 0, r);
        cpu.avx2 = (r[1] >> 5) & 1;
        cpu.avx512f = (r[1] >> 16) & 1;
        cpu.avx512bw = (r[1] >> 30) & 1;
        cpu.avx512vl = (r[1] >> 31) & 1;
        cpu.avx512vnni = (r[2] >> 11) & 1;
    }

    if (under_hypervisor) {
        cpu_cpuid(0x40000000u, 0, r);
        memcpy(cpu.hypervisor + 0, &r[1], 4);
        memcpy(cpu.hypervisor + 4, &r[2], 4);
        memcpy(cpu.hypervisor + 8, &r[3], 4);
        cpu.hypervisor[12] = 0;
    }

    cpu_cpuid(0x80000000u, 0, r);
    uint32_t max_ext = r[0];
    if (max_ext >= 0x80000001u) {
        cpu_cpuid(0x80000001u, 0, r);
        nx_supported = (r[3] >> 20) & 1;
        gib_pages_supported = (r[3] >> 26) & 1;
    }
    if (max_ext >= 0x80000004u) {
        for (uint32_t i = 0; i < 3; i++) {
            cpu_cpuid(0x80000002u + i, 0, r);
            memcpy(cpu.brand + 16 * i, r, 16);
        }
        cpu.brand[48] = 0;
        /* Some CPUs pad the brand string with leading spaces. */
        size_t skip = 0;
        while (cpu.brand[skip] == ' ') skip++;
        memmove(cpu.brand, cpu.brand + skip, 49 - skip);
    } else {
        strlcpy(cpu.brand, "unknown", sizeof cpu.brand);
    }
    cpu.logical_cores = 1;
}

static void enable_sse(void) {
    uint64_t cr0 = read_cr0();
    cr0 &= ~(1ull << 2);               /* EM: no x87 emulation */
    cr0 |= (1ull << 1) | (1ull << 16); /* MP; WP: write protection applies to the kernel too */
    cr0 &= ~(1ull << 3);               /* TS: no lazy FPU switching */
    write_cr0(cr0);
    uint64_t cr4 = read_cr4();
    cr4 |= (1ull << 9) | (1ull << 10); /* OSFXSR, OSXMMEXCPT */
    write_cr4(cr4);
}

static void enable_sse_and_avx(void) {
    enable_sse();
    if (cpu.avx) {
        write_cr4(read_cr4() | (1ull << 18)); /* OSXSAVE */
        uint32_t r[4];
        cpu_cpuid(0xD, 0, r); /* XCR0 bits the CPU supports */
        uint64_t supported = ((uint64_t)r[3] << 32) | r[0];
        uint64_t xcr0 = 0x7;                /* x87 | SSE | AVX */
        const uint64_t avx512_state = 0xE0; /* opmask | ZMM_Hi256 | Hi16_ZMM */
        int avx512_ok = cpu.avx512f && (supported & avx512_state) == avx512_state;
        if (avx512_ok) xcr0 |= avx512_state;
        if ((supported & 0x7) == 0x7) {
            xsetbv(0, xcr0);
            enabled_xcr0 = xcr0;
            cpu.avx_enabled = 1;
        }
        if (!avx512_ok) cpu.avx512f = cpu.avx512bw = cpu.avx512vl = cpu.avx512vnni = 0;
    }
    if (!cpu.avx_enabled) {
        /* Without OS support these instructions fault: hide them. */
        cpu.avx = cpu.avx2 = cpu.fma = cpu.f16c = 0;
        cpu.avx512f = cpu.avx512bw = cpu.avx512vl = cpu.avx512vnni = 0;
    }
}

/* llm/ asks cpu_features() before running SIMD code; only the kernel knows
 * which state it enabled in XCR0, so the flags go over after that step. */
static void publish_simd_features(void) {
    struct cpu_features f = {
        .sse2 = cpu.sse2,
        .ssse3 = cpu.ssse3,
        .sse41 = cpu.sse41,
        .avx = cpu.avx,
        .avx2 = cpu.avx2,
        .fma = cpu.fma,
        .f16c = cpu.f16c,
        .avx512f = cpu.avx512f,
        .avx512bw = cpu.avx512bw,
        .avx512vl = cpu.avx512vl,
        .avx512vnni = cpu.avx512vnni,
    };
    cpu_features_set(&f);
}

void cpu_init(void) {
    identify();
    enable_sse_and_avx();
    publish_simd_features();
    if (nx_supported) cpu_write_msr(MSR_EFER, cpu_read_msr(MSR_EFER) | EFER_NXE);
}

void cpu_init_ap(void) {
    enable_sse();
    if (cpu.avx_enabled) {
        write_cr4(read_cr4() | (1ull << 18)); /* OSXSAVE */
        xsetbv(0, enabled_xcr0);
    }
    if (nx_supported) cpu_write_msr(MSR_EFER, cpu_read_msr(MSR_EFER) | EFER_NXE);
}

int cpu_has_nx(void) {
    return nx_supported;
}
int cpu_has_gib_pages(void) {
    return gib_pages_supported;
}

/* Firmware leaves the other processors spinning in its own wait loop, which
 * under emulation steals host time from us. An INIT IPI to all-but-self puts
 * them into wait-for-SIPI: stopped until someone starts them properly. */
#define MSR_APIC_BASE 0x1Bu
#define MSR_X2APIC_ICR 0x830u
#define APIC_BASE_ENABLE (1ull << 11)
#define APIC_BASE_X2APIC (1ull << 10)
#define ICR_INIT_ALL_BUT_SELF 0x000C4500u /* shorthand all-excluding-self, level assert, INIT */
#define ICR_DELIVERY_PENDING (1u << 12)

int cpu_park_other_processors(void *(*map_mmio)(uint64_t phys, uint64_t size)) {
    uint32_t r[4];
    cpu_cpuid(1, 0, r);
    if (!((r[3] >> 9) & 1)) return 1; /* no local APIC */
    uint64_t base = cpu_read_msr(MSR_APIC_BASE);
    if (!(base & APIC_BASE_ENABLE)) return 1;
    cpu_park_tsc = __builtin_ia32_rdtsc();
    if (base & APIC_BASE_X2APIC) {
        cpu_write_msr(MSR_X2APIC_ICR, ICR_INIT_ALL_BUT_SELF);
        return 1;
    }
    volatile uint32_t *apic = map_mmio(base & 0xffffff000ull, 4096);
    if (!apic) return 0;
    volatile uint32_t *icr_low = apic + 0x300 / 4, *icr_high = apic + 0x310 / 4;
    *icr_high = 0;
    *icr_low = ICR_INIT_ALL_BUT_SELF;
    for (int i = 0; i < 1000000 && (*icr_low & ICR_DELIVERY_PENDING); i++) cpu_relax();
    return 1;
}
