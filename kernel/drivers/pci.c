/* pci.c - PCI enumeration. Configuration space through ECAM (the MCFG
 * table's memory window, one 1 MiB window per bus mapped on first use) or,
 * without MCFG, the legacy 0xCF8/0xCFC ports. Only buses reachable from bus
 * 0 through bridges are scanned, which keeps boot fast under emulation. */
#include "kernel/drivers/pci.h"
#include "kernel/drivers/acpi.h"
#include "kernel/drivers/acpi_parse.h"
#include "kernel/kernel.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/mm/paging.h"
#include "kernel/drivers/timer.h"

#define PCI_MAX_DEVICES 128
#define CONFIG_ADDRESS 0xcf8
#define CONFIG_DATA 0xcfc
#define PCI_COMMAND 0x04
#define COMMAND_MEMORY 0x02
#define COMMAND_BUS_MASTER 0x04

static struct pci_device devices[PCI_MAX_DEVICES];
static int device_count;
static int initialized;

static struct {
    uint64_t base; /* physical address of bus start_bus */
    uint8_t start_bus, end_bus;
    volatile uint8_t *bus_window[256]; /* mapped lazily */
} ecam;

/* The RAM ranges of the memory map, for the check that ECAM is not RAM. */
static size_t ram_ranges(uint64_t (*ram)[2], size_t max) {
    size_t n = 0;
    for (uint32_t i = 0; i < boot_info->mem_region_count && n < max; i++) {
        const struct boot_mem_region *r = &boot_info->mem[i];
        if (r->type == BOOT_MEM_RESERVED) continue;
        ram[n][0] = r->base;
        ram[n][1] = r->base + r->pages * 4096ull;
        n++;
    }
    return n;
}

static uint32_t legacy_read32(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset);
static uint32_t config_read32(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset);

/* ECAM from the MCFG when its window is believable: not over RAM, and the
 * host bridge answers through it as it does through port 0xCF8. An MCFG
 * that points nowhere leaves the legacy ports in charge. */
static void ecam_init(void) {
    const struct acpi_sdt_header *mcfg = acpi_find_table("MCFG");
    if (!mcfg) return;
    struct acpi_ecam_window w;
    acpi_mcfg_parse(mcfg, mcfg->length, &w);
    if (w.skipped)
        kprintf("pci: %d impossible MCFG window%s skipped\n", w.skipped, w.skipped == 1 ? "" : "s");
    if (!w.base) return;
    static uint64_t ram[BOOT_MAX_MEM_REGIONS][2];
    if (acpi_ecam_overlaps_ram(&w, (const uint64_t(*)[2])ram, ram_ranges(ram, BOOT_MAX_MEM_REGIONS))) {
        kprintf("pci: the MCFG window at 0x%lx lies over RAM: using port 0xCF8\n", (unsigned long)w.base);
        return;
    }
    ecam.base = w.base;
    ecam.start_bus = w.start_bus;
    ecam.end_bus = w.end_bus;
    uint32_t through_ecam = config_read32(w.start_bus, 0, 0, 0);
    uint32_t through_ports = legacy_read32(w.start_bus, 0, 0, 0);
    int ecam_answers = (through_ecam & 0xffff) != 0xffff && (through_ecam & 0xffff) != 0;
    int ports_answer = (through_ports & 0xffff) != 0xffff && (through_ports & 0xffff) != 0;
    if (!ecam_answers && ports_answer) {
        kprintf(
            "pci: nothing answers in the MCFG window at 0x%lx (read 0x%08x, port 0xCF8 reads 0x%08x): using "
            "port 0xCF8\n",
            (unsigned long)w.base, through_ecam, through_ports);
        ecam.base = 0;
    }
}

/* The function's 4 KiB of configuration space through ECAM, or NULL. */
static volatile uint8_t *ecam_function(uint8_t bus, uint8_t slot, uint8_t func) {
    if (!ecam.base || bus < ecam.start_bus || bus > ecam.end_bus) return 0;
    if (!ecam.bus_window[bus]) {
        uint64_t phys = ecam.base + ((uint64_t)(bus - ecam.start_bus) << 20);
        ecam.bus_window[bus] = paging_map_mmio(phys, 1 << 20);
    }
    return ecam.bus_window[bus] + ((uint32_t)slot << 15) + ((uint32_t)func << 12);
}

static uint32_t legacy_address(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset) {
    return 0x80000000u | ((uint32_t)bus << 16) | ((uint32_t)slot << 11) | ((uint32_t)func << 8) |
           (offset & 0xfc);
}

static uint32_t legacy_read32(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset) {
    if (offset >= 256) return 0xffffffff;
    outl(CONFIG_ADDRESS, legacy_address(bus, slot, func, offset));
    return inl(CONFIG_DATA);
}

static uint32_t config_read32(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset) {
    volatile uint8_t *f = ecam_function(bus, slot, func);
    if (f) return *(volatile uint32_t *)(f + (offset & 0xffc));
    return legacy_read32(bus, slot, func, offset);
}

static void config_write32(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset, uint32_t value) {
    volatile uint8_t *f = ecam_function(bus, slot, func);
    if (f) {
        *(volatile uint32_t *)(f + (offset & 0xffc)) = value;
        return;
    }
    if (offset >= 256) return;
    outl(CONFIG_ADDRESS, legacy_address(bus, slot, func, offset));
    outl(CONFIG_DATA, value);
}

uint32_t pci_read32(const struct pci_device *d, uint16_t offset) {
    return config_read32(d->bus, d->slot, d->func, offset);
}

static void pci_write32(const struct pci_device *d, uint16_t offset, uint32_t value) {
    config_write32(d->bus, d->slot, d->func, offset, value);
}

uint16_t pci_read16(const struct pci_device *d, uint16_t offset) {
    return (uint16_t)(pci_read32(d, offset & ~3) >> ((offset & 2) * 8));
}

static void pci_write16(const struct pci_device *d, uint16_t offset, uint16_t value) {
    uint32_t v = pci_read32(d, offset & ~3);
    int shift = (offset & 2) * 8;
    v = (v & ~(0xffffu << shift)) | ((uint32_t)value << shift);
    pci_write32(d, offset & ~3, v);
}

uint64_t pci_bar_address(const struct pci_device *d, int bar, uint64_t *size) {
    if (size) *size = 0;
    if (bar < 0 || bar > 5 || (d->header_type & 0x7f) != 0) return 0;
    uint16_t off = 0x10 + bar * 4;
    uint32_t lo = pci_read32(d, off);
    if (lo & 1) return 0; /* I/O BAR */
    int is64 = ((lo >> 1) & 3) == 2;
    if (is64 && bar == 5) return 0;
    uint32_t hi = is64 ? pci_read32(d, off + 4) : 0;
    uint64_t addr = ((uint64_t)hi << 32) | (lo & ~0xfu);
    if (size) {
        /* Size probe with memory decoding off so nothing answers at ~0. */
        uint16_t cmd = pci_read16(d, PCI_COMMAND);
        pci_write16(d, PCI_COMMAND, cmd & ~COMMAND_MEMORY);
        pci_write32(d, off, 0xffffffff);
        uint64_t mask = pci_read32(d, off) & ~0xfu;
        pci_write32(d, off, lo);
        if (is64) {
            pci_write32(d, off + 4, 0xffffffff);
            mask |= (uint64_t)pci_read32(d, off + 4) << 32;
            pci_write32(d, off + 4, hi);
        } else {
            mask |= 0xffffffff00000000ull;
        }
        pci_write16(d, PCI_COMMAND, cmd);
        *size = mask ? (~mask + 1) : 0;
    }
    return addr;
}

void pci_enable_mmio_and_dma(const struct pci_device *d) {
    uint16_t cmd = pci_read16(d, PCI_COMMAND);
    pci_write16(d, PCI_COMMAND, cmd | COMMAND_MEMORY | COMMAND_BUS_MASTER);
}

static void scan_bus(uint8_t bus, int depth);

static void add_function(uint8_t bus, uint8_t slot, uint8_t func, int depth) {
    uint32_t id = config_read32(bus, slot, func, 0);
    if ((id & 0xffff) == 0xffff || (id & 0xffff) == 0) return;
    uint32_t class_reg = config_read32(bus, slot, func, 0x08);
    uint32_t header_reg = config_read32(bus, slot, func, 0x0c);
    if (device_count < PCI_MAX_DEVICES) {
        struct pci_device *d = &devices[device_count++];
        d->bus = bus;
        d->slot = slot;
        d->func = func;
        d->vendor = id & 0xffff;
        d->device = id >> 16;
        d->revision = class_reg & 0xff;
        d->prog_if = (class_reg >> 8) & 0xff;
        d->subclass = (class_reg >> 16) & 0xff;
        d->class_code = class_reg >> 24;
        d->header_type = (header_reg >> 16) & 0xff;
    }
    /* PCI-to-PCI bridge: follow its secondary bus. */
    if (((header_reg >> 16) & 0x7f) == 1 && depth < 16) {
        uint8_t secondary = (config_read32(bus, slot, func, 0x18) >> 8) & 0xff;
        if (secondary > bus) scan_bus(secondary, depth + 1);
    }
}

static void scan_bus(uint8_t bus, int depth) {
    for (uint8_t slot = 0; slot < 32; slot++) {
        uint32_t id = config_read32(bus, slot, 0, 0);
        if ((id & 0xffff) == 0xffff) continue;
        add_function(bus, slot, 0, depth);
        uint8_t header = (config_read32(bus, slot, 0, 0x0c) >> 16) & 0xff;
        if (header & 0x80)
            for (uint8_t func = 1; func < 8; func++) add_function(bus, slot, func, depth);
    }
}

int pci_device_count(void) {
    return device_count;
}

const struct pci_device *pci_device_at(int index) {
    return index >= 0 && index < device_count ? &devices[index] : 0;
}

static void print_device(const struct pci_device *d) {
    kprintf("pci: %02x:%02x.%x %04x:%04x class %02x.%02x.%02x\n", d->bus, d->slot, d->func, d->vendor,
            d->device, d->class_code, d->subclass, d->prog_if);
}

void pci_init(void) {
    if (initialized) return;
    initialized = 1;
    uint64_t start = timer_ns();
    ecam_init();
    scan_bus(ecam.base ? ecam.start_bus : 0, 0);
    for (int i = 0; i < device_count; i++) print_device(&devices[i]);
    uint64_t us = (timer_ns() - start) / 1000;
    kprintf("pci: %d functions (%s, %lu us)\n", device_count, ecam.base ? "ECAM" : "port 0xCF8",
            (unsigned long)us);
}

void pci_print_devices(void) {
    if (!initialized) pci_init();
    for (int i = 0; i < device_count; i++) print_device(&devices[i]);
    kprintf("%d functions, configuration space via %s\n", device_count, ecam.base ? "ECAM" : "port 0xCF8");
}
