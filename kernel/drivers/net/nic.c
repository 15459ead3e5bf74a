/* nic.c - finds the first network card a driver can start. */
#include "kernel/drivers/net/nic.h"

#include "kernel/console/console.h"
#include "kernel/mm/memory.h"

static int (*const probes[])(const struct pci_device *, struct nic *) = {virtio_net_probe, e1000_probe};

struct nic *nic_probe_first(void) {
    static struct nic nic;
    for (int i = 0; i < pci_device_count(); i++) {
        const struct pci_device *pci = pci_device_at(i);
        for (size_t p = 0; p < sizeof probes / sizeof probes[0]; p++) {
            struct nic candidate = {0};
            candidate.pci = pci;
            if (probes[p](pci, &candidate) == 1) {
                nic = candidate;
                return &nic;
            }
        }
    }
    return NULL;
}
