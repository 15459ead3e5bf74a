/* main.c - kernel_main: check the loader's hand-over, bring up the core
 * (serial, CPU, GDT/IDT, memory, paging, heap, symbols, ACPI, timer, the
 * other processors), start the drivers and run the shell. */
#include "kernel/kernel.h"
#include "kernel/drivers/acpi.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/idt.h"
#include "kernel/mm/memory.h"
#include "kernel/mm/paging.h"
#include "kernel/mm/memory_map.h"
#include "kernel/drivers/pci.h"
#include "kernel/drivers/fbcon.h"
#include "kernel/drivers/virtio_gpu.h"
#include "kernel/arch/panic.h"
#include "kernel/drivers/timer.h"
#include "kernel/drivers/uart.h"
#include "kernel/drivers/usb.h"
#include "kernel/drivers/xhci.h"
#include "kernel/net/net.h"
#include "kernel/arch/smp.h"
#include "kernel/arch/workers.h"
#include "lib/config.h"
#include "lib/string.h"

static struct boot_info boot_info_copy;
const struct boot_info *boot_info;

static __attribute__((noreturn)) void halt_with(const char *message) {
    uart_write(message, strlen(message));
    uart_write("\nKERNEL PANIC: system halted\n", 29);
    cpu_halt_forever();
}

/* Drops memory-map entries that cannot be real and makes the rest sorted
 * and disjoint (kernel/mm/memory_map.c), so later code can trust the map. */
static void sanitize_memory_map(struct boot_info *info) {
    struct memory_map_report report;
    info->mem_region_count = memory_map_sanitize(info->mem, info->mem_region_count, &report);
    if (report.dropped || report.overlaps || report.truncated)
        kprintf(
            "kernel: memory map: %u impossible entries dropped, %u overlaps resolved (the more restrictive "
            "type kept), %u regions lost\n",
            report.dropped, report.overlaps, report.truncated);
}

/* The loader's direct map, if it already covers the range (early boot). */
static void *map_if_already_mapped(uint64_t phys, uint64_t size) {
    return paging_is_mapped(DIRECT_MAP_BASE + phys, size) ? phys_to_virt(phys) : NULL;
}

static void print_cpu(void) {
    kprintf("cpu: %s, %s, family %u model %u\n", cpu.vendor, cpu.brand, cpu.family, cpu.model);
    kprintf("cpu: sse2%s%s%s%s%s%s%s%s%s%s\n", cpu.sse3 ? " sse3" : "", cpu.ssse3 ? " ssse3" : "",
            cpu.sse41 ? " sse4.1" : "", cpu.sse42 ? " sse4.2" : "", cpu.avx ? " avx" : "",
            cpu.avx2 ? " avx2" : "", cpu.fma ? " fma" : "", cpu.f16c ? " f16c" : "",
            cpu.avx512f ? " avx512f" : "", cpu.avx512vnni ? " avx512vnni" : "");
}

static void fault_on_every_worker(void *kind, int worker, int nworkers) {
    debug_fault((const char *)kind);
}

/* boot.cfg test hooks: smp_test=1 runs the worker self-test, smp_fault=KIND
 * faults on the last worker (an AP) to check the dump and the halt,
 * smp_fault_all=KIND on every CPU at once (one dump, not interleaved). */
static void run_boot_smp_checks(void) {
    size_t len = strnlen(boot_info->cmdline, BOOT_CMDLINE_MAX);
    char value[16];
    if (config_get(boot_info->cmdline, len, "smp_test", value, sizeof value) > 0 && value[0] == '1') {
        char report[160];
        workers_selftest(report, sizeof report);
        kprintf("%s\n", report);
    }
    if (config_get(boot_info->cmdline, len, "smp_fault", value, sizeof value) > 0) workers_fault_test(value);
    if (config_get(boot_info->cmdline, len, "smp_fault_all", value, sizeof value) > 0)
        workers_run(fault_on_every_worker, value);
}

void kernel_main(uint64_t boot_info_phys) {
    uart_init();
    const struct boot_info *handed = phys_to_virt(boot_info_phys);
    if (!boot_info_phys || handed->magic != BOOT_INFO_MAGIC)
        halt_with("kernel: bad boot_info (wrong magic): not started by our loader");
    if (handed->version != BOOT_INFO_VERSION || handed->size != sizeof(struct boot_info))
        halt_with("kernel: boot_info version/size mismatch between loader and kernel");
    if (handed->mem_region_count == 0 || handed->mem_region_count > BOOT_MAX_MEM_REGIONS)
        halt_with("kernel: boot_info memory map is empty or too large");
    memcpy(&boot_info_copy, handed, sizeof boot_info_copy);
    boot_info_copy.cmdline[BOOT_CMDLINE_MAX - 1] = 0;
    boot_info = &boot_info_copy;

    kprintf("\nkernel: started\n");
    sanitize_memory_map(&boot_info_copy);
    if (boot_info_copy.mem_region_count == 0) halt_with("kernel: no usable entry in the memory map");
    cpu_init();
    /* The other processors spin in the firmware's loop and, under emulation,
     * slow us down: stop them now if the local APIC is reachable, else once
     * our page tables can map it. */
    int others_parked = cpu_park_other_processors(map_if_already_mapped);
    gdt_init();
    idt_init();
    page_alloc_init(boot_info, boot_info_phys);
    paging_init(boot_info);
    /* From here on: our page tables and our stack, so boot-services memory is free. */
    page_alloc_reclaim_boot_services(boot_info);
    if (!others_parked) cpu_park_other_processors(paging_map_mmio);
    char alloc[8]; /* boot.cfg debug_alloc=high: RAM above 4 GiB handed out first (tests DMA limits) */
    if (config_get(boot_info->cmdline, strnlen(boot_info->cmdline, BOOT_CMDLINE_MAX), "debug_alloc", alloc,
                   sizeof alloc) > 0 &&
        !strcmp(alloc, "high"))
        page_alloc_prefer_above(1ull << 32);

    if (boot_info->kernel_file) {
        /* The symbols are copied: the file, mostly debug info, goes back to free RAM. */
        symbols_init(phys_to_virt(boot_info->kernel_file), boot_info->kernel_file_size);
        page_alloc_release_loader_data(boot_info->kernel_file, boot_info->kernel_file_size);
        boot_info_copy.kernel_file = boot_info_copy.kernel_file_size = 0;
    }
    acpi_init(boot_info->acpi_rsdp, boot_info->firmware_vendor);
    cpu.logical_cores = acpi_cpu_count();
    timer_init();

    smp_init(boot_info);

    print_cpu();
    kprintf("cpu: %d logical core%s, TSC %lu MHz (%s)\n", cpu.logical_cores,
            cpu.logical_cores == 1 ? "" : "s", (unsigned long)(tsc_hz() / 1000000), timer_source());
    workers_calibrate();
    struct memory_stats m;
    memory_get_stats(&m);
    kprintf("memory: %lu MiB usable, %lu MiB free, RAM up to 0x%lx\n", (unsigned long)(m.total_bytes >> 20),
            (unsigned long)(m.free_bytes >> 20), (unsigned long)m.highest_phys);

    fbcon_init(&boot_info->fb);
    if (!uart_is_present()) kprintf("serial: no COM1 port, screen only\n");
    ps2_init();
    pci_init();
    if (!fbcon_size(NULL, NULL)) virtio_gpu_init(); /* OVMF's virtio-gpu GOP leaves no framebuffer */
    char dma32[4]; /* boot.cfg xhci_dma32=1: the below-4-GiB DMA path on a 64-bit controller */
    xhci_force_dma32 = config_get(boot_info->cmdline, strnlen(boot_info->cmdline, BOOT_CMDLINE_MAX),
                                  "xhci_dma32", dma32, sizeof dma32) > 0 &&
                       dma32[0] == '1';
    usb_init();
    if (boot_info->ramdisk && boot_info->ramdisk_size) {
        int files = ramdisk_init(phys_to_virt(boot_info->ramdisk), boot_info->ramdisk_size);
        kprintf("ramdisk: %d file%s, %lu KiB\n", files, files == 1 ? "" : "s",
                (unsigned long)(boot_info->ramdisk_size >> 10));
    } else {
        ramdisk_init(NULL, 0);
        kprintf("ramdisk: none\n");
    }
    net_init(boot_info->cmdline, strnlen(boot_info->cmdline, BOOT_CMDLINE_MAX));
    run_boot_smp_checks();
    shell_run();
}
