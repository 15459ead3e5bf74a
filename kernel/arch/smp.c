/* smp.c - bring-up of the application processors.
 *
 * The trampoline (smp_trampoline.asm) is copied to a free page below 1 MiB
 * with three more low pages as its page tables: a PML4 that copies the
 * kernel's upper-half entries and identity-maps the first 2 MiB, so the
 * switch to long mode works at the trampoline's physical address and can
 * then jump to kernel text. Every AP gets a stack with a guard page, its own
 * GDT/TSS/IST stacks, and the shared IDT; all of it is allocated here on the
 * BSP. The APs were put in wait-for-SIPI by cpu_park_other_processors, so
 * each needs only the two SIPIs (the INIT's 10 ms wait is counted from the
 * park). A late AP (after the timeout) halts itself. */
#include "kernel/arch/smp.h"
#include "kernel/drivers/acpi.h"
#include "kernel/arch/apic.h"
#include "kernel/arch/apic_mode.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/idt.h"
#include "kernel/mm/memory.h"
#include "kernel/mm/paging.h"
#include "kernel/drivers/timer.h"
#include "kernel/arch/workers.h"
#include "lib/config.h"
#include "lib/format.h"
#include "lib/string.h"

#define AP_STACK_SIZE (64 * 1024)
#define LOW_PAGES 4              /* trampoline, PML4, PDPT, PD */
#define AP_START_TIMEOUT_MS 1000 /* TCG vCPUs on a loaded host start late */
#define LOW_LIMIT (1ull << 20)

extern const uint8_t smp_trampoline_start[], smp_trampoline_end[];
extern const uint64_t smp_trampoline_gdtr_offset, smp_trampoline_farjump_offset;
extern const uint64_t smp_trampoline_long_mode_offset, smp_trampoline_data_offset;
extern uint64_t ap_ticket, ap_stack_tops[SMP_MAX_CPUS];
extern void ap_entry64(void);

struct cpu_slot {
    uint32_t apic_id;
    void *tables; /* gdt_prepare_cpu */
    int online;   /* set by the AP (atomic) */
    int worker;   /* assigned by the BSP once start-up is over; -1 = halt */
};

static struct cpu_slot cpus[SMP_MAX_CPUS];
static int present_count = 1;
static int online_count = 1;  /* final after start-up: the workers */
static int started_count = 1; /* APs that reached ap_main in time, plus the BSP */
static uint32_t bsp_apic_id;
static int boot_closed;          /* the BSP stopped waiting for APs */
static int workers_assigned;     /* cpus[].worker is final */
static uint32_t stopper_apic_id; /* APIC id + 1 of the CPU that stopped the others; 0 = none */

int smp_online_count(void) {
    return __atomic_load_n(&online_count, __ATOMIC_ACQUIRE);
}

static int smp_cpu_index(void) {
    if (online_count <= 1 || !apic_available()) return 0;
    uint32_t id = apic_id();
    for (int i = 0; i < SMP_MAX_CPUS; i++)
        if (cpus[i].apic_id == id && (i == 0 || cpus[i].worker > 0)) return i;
    return 0;
}

int smp_nmi_expected(void) {
    /* Every CPU but the one that asked for the stop (it is printing its report). */
    uint32_t stopper = __atomic_load_n(&stopper_apic_id, __ATOMIC_SEQ_CST);
    if (stopper) {
        if (stopper == apic_id() + 1) return 1;
        cpu_halt_forever();
    }
    return smp_cpu_index() != 0;
}

void smp_stop_others(void) {
    uint32_t self = apic_id(), none = 0;
    if (online_count <= 1 || !__atomic_compare_exchange_n(&stopper_apic_id, &none, self + 1, 0,
                                                          __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
        return;
    for (int i = 0; i < SMP_MAX_CPUS; i++)
        if ((i == 0 || cpus[i].worker > 0) && cpus[i].apic_id != self) apic_send_nmi(cpus[i].apic_id);
}

/* TLB shootdown: a generation bumped by the CPU that changed the tables,
 * and the generation each CPU (by index) has flushed for. */
static uint64_t tlb_generation;
static uint64_t tlb_flushed[SMP_MAX_CPUS];
static unsigned tlb_shootdowns, tlb_missed;
#define SHOOTDOWN_TIMEOUT_MS 100
#define SHOOTDOWN_RESEND_US 1000

static int is_online_slot(int i) {
    return i == 0 || cpus[i].worker > 0;
}

int smp_tlb_shootdown_nmi(void) {
    int i = smp_cpu_index();
    uint64_t wanted = __atomic_load_n(&tlb_generation, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&tlb_flushed[i], __ATOMIC_SEQ_CST) >= wanted) return 0;
    uint64_t cr3;
    __asm__ volatile("mov %%cr3, %0; mov %0, %%cr3" : "=r"(cr3)::"memory");
    __atomic_store_n(&tlb_flushed[i], wanted, __ATOMIC_SEQ_CST);
    return 1;
}

void smp_flush_tlb_others(void) {
    if (smp_online_count() <= 1 || !__atomic_load_n(&workers_assigned, __ATOMIC_ACQUIRE)) return;
    int self = smp_cpu_index();
    uint64_t wanted = __atomic_add_fetch(&tlb_generation, 1, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&tlb_shootdowns, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&tlb_flushed[self], wanted, __ATOMIC_SEQ_CST); /* the caller flushed its own */
    uint64_t hz = tsc_hz(), start = rdtsc();
    for (int i = 0; i < SMP_MAX_CPUS; i++) {
        if (i == self || !is_online_slot(i)) continue;
        uint64_t last_send = rdtsc();
        apic_send_nmi(cpus[i].apic_id);
        while (__atomic_load_n(&tlb_flushed[i], __ATOMIC_SEQ_CST) < wanted) {
            cpu_relax();
            uint64_t now = rdtsc();
            if (now - start > hz / 1000 * SHOOTDOWN_TIMEOUT_MS) {
                kprintf("smp: CPU %d did not flush its TLB within %d ms\n", i, SHOOTDOWN_TIMEOUT_MS);
                __atomic_add_fetch(&tlb_missed, 1, __ATOMIC_RELAXED);
                break;
            }
            if (now - last_send > hz / 1000000 * SHOOTDOWN_RESEND_US) { /* an NMI may merge with another */
                apic_send_nmi(cpus[i].apic_id);
                last_send = now;
            }
        }
    }
}

void smp_tlb_stats(unsigned *shootdowns, unsigned *missed) {
    *shootdowns = __atomic_load_n(&tlb_shootdowns, __ATOMIC_RELAXED);
    *missed = __atomic_load_n(&tlb_missed, __ATOMIC_RELAXED);
}

/* Called by ap_entry64 on the AP's own stack, kernel CR3 loaded. */
__attribute__((noreturn)) void ap_main(uint64_t ticket) {
    int index = (int)ticket + 1;
    if (index >= SMP_MAX_CPUS || !cpus[index].tables || __atomic_load_n(&boot_closed, __ATOMIC_SEQ_CST))
        cpu_halt_forever();
    gdt_load_cpu(cpus[index].tables);
    idt_load();
    cpu_init_ap();
    paging_init_ap();
    apic_init_ap();
    cpus[index].apic_id = apic_id();
    __atomic_store_n(&cpus[index].online, 1, __ATOMIC_SEQ_CST);
    __atomic_fetch_add(&started_count, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&workers_assigned, __ATOMIC_ACQUIRE)) cpu_relax();
    int worker = cpus[index].worker;
    if (worker < 0) cpu_halt_forever();
    workers_ap_loop(worker);
}

/* `count` free pages below 1 MiB (not page 0) from the boot memory map;
 * the page allocator never hands these out. */
static int find_low_pages(const struct boot_info *info, uint64_t *pages, int count) {
    int found = 0;
    for (uint32_t i = 0; i < info->mem_region_count && found < count; i++) {
        const struct boot_mem_region *r = &info->mem[i];
        if (r->type != BOOT_MEM_USABLE && r->type != BOOT_MEM_RECLAIMABLE) continue;
        for (uint64_t p = r->base; p < r->base + r->pages * PAGE_SIZE && found < count; p += PAGE_SIZE)
            if (p >= PAGE_SIZE && p + PAGE_SIZE <= LOW_LIMIT) pages[found++] = p;
    }
    return found == count;
}

static void *low_page(uint64_t phys) {
    void *v = paging_map_phys(phys, PAGE_SIZE);
    memset(v, 0, PAGE_SIZE);
    return v;
}

/* Copies and patches the trampoline; returns its physical page. */
static uint64_t install_trampoline(const uint64_t low[LOW_PAGES]) {
    uint64_t tramp = low[0];
    uint64_t *pml4 = low_page(low[1]), *pdpt = low_page(low[2]), *pd = low_page(low[3]);
    const uint64_t *kernel_pml4 = phys_to_virt(paging_kernel_cr3());
    for (int i = 256; i < 512; i++) pml4[i] = kernel_pml4[i];
    pml4[0] = low[2] | 3; /* present, writable */
    pdpt[0] = low[3] | 3;
    pd[0] = 0 | 3 | (1ull << 7); /* 2 MiB identity page at 0 */

    uint8_t *code = low_page(tramp);
    size_t size = (size_t)(smp_trampoline_end - smp_trampoline_start);
    memcpy(code, smp_trampoline_start, size);
    uint32_t gdt_phys = (uint32_t)(tramp + smp_trampoline_data_offset);
    memcpy(code + smp_trampoline_gdtr_offset + 2, &gdt_phys, 4);
    uint32_t long_mode = (uint32_t)(tramp + smp_trampoline_long_mode_offset);
    memcpy(code + smp_trampoline_farjump_offset + 2, &long_mode, 4);

    /* The data block after the GDT (24 bytes) and GDTR (8): see the .asm. */
    uint8_t *data = code + smp_trampoline_gdtr_offset + 8;
    uint32_t cr4 = 1u << 5; /* PAE */
    uint32_t low_cr3 = (uint32_t)low[1];
    uint32_t efer = (1u << 8) | (cpu_has_nx() ? 1u << 11 : 0); /* LME, NXE */
    uint32_t cr0 = (1u << 31) | (1u << 4) | 1u;                /* PG, ET, PE */
    uint64_t kernel_cr3 = paging_kernel_cr3(), entry = (uint64_t)ap_entry64;
    memcpy(data + 0, &cr4, 4);
    memcpy(data + 4, &low_cr3, 4);
    memcpy(data + 8, &efer, 4);
    memcpy(data + 12, &cr0, 4);
    memcpy(data + 16, &kernel_cr3, 8);
    memcpy(data + 24, &entry, 8);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return tramp;
}

static void wait_until_tsc(uint64_t deadline) {
    while ((int64_t)(rdtsc() - deadline) < 0) cpu_relax();
}

static int count_started(void) {
    return __atomic_load_n(&started_count, __ATOMIC_ACQUIRE);
}

/* Ends start-up: late APs halt, the online ones get dense worker numbers. */
static void close_boot(void) {
    __atomic_store_n(&boot_closed, 1, __ATOMIC_SEQ_CST);
    int workers = 1;
    cpus[0].worker = 0;
    for (int i = 1; i < SMP_MAX_CPUS; i++)
        cpus[i].worker = __atomic_load_n(&cpus[i].online, __ATOMIC_SEQ_CST) ? workers++ : -1;
    workers_init(workers);
    __atomic_store_n(&online_count, workers, __ATOMIC_RELEASE);
    __atomic_store_n(&workers_assigned, 1, __ATOMIC_RELEASE);
}

void smp_init(const struct boot_info *info) {
    uint32_t ids[ACPI_MAX_CPUS];
    int n = acpi_cpu_apic_ids(ids, ACPI_MAX_CPUS);
    present_count = n > 0 ? n : 1;
    if (n <= 1) {
        workers_init(1);
        return; /* uniprocessor: nothing to wait for */
    }
    char apic_mode[16] = "";
    config_get(info->cmdline, strnlen(info->cmdline, BOOT_CMDLINE_MAX), "apic", apic_mode, sizeof apic_mode);
    if (apic_init(!strcmp(apic_mode, "x2apic"), acpi_max_apic_id()) != 0) {
        kprintf("smp: no usable local APIC: running on the boot processor only\n");
        workers_init(1);
        return;
    }
    bsp_apic_id = apic_id();
    cpus[0].apic_id = bsp_apic_id;
    uint64_t low[LOW_PAGES];
    if (!find_low_pages(info, low, LOW_PAGES)) {
        kprintf("smp: no free memory below 1 MiB for the AP trampoline: boot processor only\n");
        workers_init(1);
        return;
    }

    /* Per-AP resources, indexed by start ticket (cpu index - 1). */
    int aps = 0;
    /* An xAPIC addresses ids up to 254 only. */
    int kept = 0;
    for (int i = 0; i < n; i++)
        if (apic_is_x2apic() || ids[i] <= XAPIC_MAX_ID) ids[kept++] = ids[i];
    if (kept < n)
        kprintf("smp: %d processor%s above APIC id 254 left off (xAPIC)\n", n - kept,
                n - kept == 1 ? "" : "s");
    n = kept;
    for (int i = 0; i < n && aps + 1 < SMP_MAX_CPUS; i++) {
        if (ids[i] == bsp_apic_id) continue;
        uint64_t stack = page_alloc(AP_STACK_SIZE / PAGE_SIZE);
        void *tables = gdt_prepare_cpu();
        if (!stack || !tables) {
            kprintf("smp: out of memory for AP stacks: starting %d of %d AP%s\n", aps, n - 1,
                    n - 1 == 1 ? "" : "s");
            if (stack) page_free(stack, AP_STACK_SIZE / PAGE_SIZE);
            break;
        }
        char label[32];
        snprintf(label, sizeof label, "CPU %d's stack", aps + 1);
        uint8_t *base = paging_map_stack(stack, AP_STACK_SIZE, label);
        ap_stack_tops[aps] = (uint64_t)(base + AP_STACK_SIZE);
        cpus[aps + 1].tables = tables;
        aps++;
    }
    uint64_t tramp = install_trampoline(low);

    /* INIT was sent by the park at boot; 10 ms must have passed since. */
    uint64_t hz = tsc_hz();
    if (cpu_park_tsc)
        wait_until_tsc(cpu_park_tsc + hz / 100);
    else
        for (int i = 0; i < n; i++)
            if (ids[i] != bsp_apic_id) apic_send_init(ids[i]);
    if (!cpu_park_tsc) wait_until_tsc(rdtsc() + hz / 100);

    int sent = 0;
    for (int i = 0; i < n && sent < aps; i++)
        if (ids[i] != bsp_apic_id) apic_send_startup(ids[i], (uint8_t)(tramp >> 12)), sent++;
    wait_until_tsc(rdtsc() + hz / 5000); /* 200 us */
    if (count_started() < 1 + aps) {
        sent = 0;
        for (int i = 0; i < n && sent < aps; i++)
            if (ids[i] != bsp_apic_id) apic_send_startup(ids[i], (uint8_t)(tramp >> 12)), sent++;
    }
    uint64_t deadline = rdtsc() + hz / 1000 * AP_START_TIMEOUT_MS;
    while (count_started() < 1 + aps && (int64_t)(rdtsc() - deadline) < 0) cpu_relax();
    close_boot();

    /* Mappings made while the APs were starting (none today) reach them too. */
    smp_flush_tlb_others();
    int online = smp_online_count();
    if (online < n) {
        for (int i = 0; i < n; i++) {
            int up = ids[i] == bsp_apic_id;
            for (int c = 1; c < SMP_MAX_CPUS && !up; c++)
                up = cpus[c].worker > 0 && cpus[c].apic_id == ids[i];
            if (!up)
                kprintf("smp: processor with APIC ID %u did not start within %d ms\n", ids[i],
                        AP_START_TIMEOUT_MS);
        }
    }
    const char *why = apic_mode_reason();
    kprintf("smp: %d of %d processors online (%s%s%s)\n", online, n, apic_is_x2apic() ? "x2APIC" : "xAPIC",
            why[0] ? ": " : "", why);
}
