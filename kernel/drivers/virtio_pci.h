/* virtio_pci.h - the virtio 1.x PCI transport ("modern" devices: regions
 * found through vendor-specific PCI capabilities) and one split virtqueue
 * driven synchronously: a request, a response, the used ring polled. */
#ifndef KERNEL_VIRTIO_PCI_H
#define KERNEL_VIRTIO_PCI_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/drivers/pci.h"

#define VIRTIO_PCI_VENDOR 0x1af4

struct virtio_pci {
    const struct pci_device *pci;
    volatile uint8_t *common; /* struct virtio_pci_common_cfg */
    volatile uint8_t *notify; /* notify region */
    volatile uint8_t *device; /* device-specific configuration (NULL if none) */
    uint32_t notify_multiplier;
};

struct virtq {
    uint16_t index, size;
    uint16_t next_avail, last_used;
    struct virtq_desc *desc;
    struct virtq_avail *avail;
    struct virtq_used *used;
    volatile uint16_t *notify; /* where the queue index is written */
    void *request, *response;  /* one page each, for the caller's messages */
    uint64_t request_phys, response_phys;
};

/* Finds the common configuration and notify regions, maps them, resets the
 * device and negotiates VIRTIO_F_VERSION_1 alone. NULL, or why not. */
const char *virtio_pci_open(const struct pci_device *pci, struct virtio_pci *dev);
/* Like virtio_pci_open, plus the device-specific feature bits 0-31 in
 * `wanted` that the device offers (written to *granted). */
const char *virtio_pci_open_features(const struct pci_device *pci, struct virtio_pci *dev, uint32_t wanted,
                                     uint32_t *granted);
/* The largest size the device allows for queue `index` (0: no such queue). */
uint16_t virtio_pci_queue_max(struct virtio_pci *dev, uint16_t index);
/* Points queue `index` at rings the caller laid out (physical addresses of
 * the descriptor table, driver and device areas) and enables it; returns
 * where the queue's index is written to notify the device. */
volatile uint16_t *virtio_pci_queue_enable(struct virtio_pci *dev, uint16_t index, uint16_t size,
                                           uint64_t desc, uint64_t driver, uint64_t device);
/* Sets up queue `index` (at most 16 entries). NULL, or why not. */
const char *virtq_create(struct virtio_pci *dev, uint16_t index, struct virtq *q);
/* DRIVER_OK: the device may now be used. NULL, or why not. */
const char *virtio_pci_start(struct virtio_pci *dev);
/* Writes 0 to the status: the device forgets its queues and stops DMA. */
void virtio_pci_reset(struct virtio_pci *dev);
/* Sends q->request (request_size bytes) with q->response as the writable
 * buffer, notifies and waits up to 1 s for the device. 0, or -1 on time-out. */
int virtq_call(struct virtio_pci *dev, struct virtq *q, size_t request_size, size_t response_size);

#endif
