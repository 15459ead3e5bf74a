/* pci.h - PCI configuration space (ECAM from ACPI MCFG, port 0xCF8 as a
 * fallback) and the list of functions found at boot. */
#ifndef KERNEL_PCI_H
#define KERNEL_PCI_H

#include <stdint.h>

struct pci_device {
    uint8_t bus, slot, func;
    uint8_t header_type;
    uint16_t vendor, device;
    uint8_t class_code, subclass, prog_if, revision;
};

/* Enumerates every bus reachable from bus 0 through bridges and prints one
 * line per function. Safe to call once; later calls do nothing. */
void pci_init(void);
int pci_device_count(void);
const struct pci_device *pci_device_at(int index);

uint32_t pci_read32(const struct pci_device *dev, uint16_t offset);
uint16_t pci_read16(const struct pci_device *dev, uint16_t offset);

/* Physical address and size of a memory BAR (32- or 64-bit); 0 if the BAR is
 * missing, an I/O BAR or unassigned. */
uint64_t pci_bar_address(const struct pci_device *dev, int bar, uint64_t *size);
/* Sets memory space and bus master in the command register. */
void pci_enable_mmio_and_dma(const struct pci_device *dev);

/* Prints every function found, then their count and the configuration
 * space access method (the shell's /pci). Scans first if pci_init has not. */
void pci_print_devices(void);

#endif
