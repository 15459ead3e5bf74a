/* nic.h - what every network card driver offers the network stack: its MAC
 * address, link state, and a polled receive and transmit ring. Frames are
 * whole Ethernet frames without the CRC. No interrupts: kernel/net polls. */
#ifndef KERNEL_DRIVERS_NET_NIC_H
#define KERNEL_DRIVERS_NET_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/drivers/pci.h"

#define NIC_FRAME_MAX 1514 /* Ethernet header + 1500 bytes of payload */

struct nic;

/* A driver's entry points (one const table per driver). */
struct nic_ops {
    bool (*link_up)(struct nic *nic);
    /* The next received frame (its length in *len), or NULL when none has
     * arrived; valid until rx_release, which gives the buffer back. */
    const void *(*rx_peek)(struct nic *nic, size_t *len);
    void (*rx_release)(struct nic *nic);
    /* A free transmit buffer of NIC_FRAME_MAX bytes, or NULL while the ring
     * is full; tx_send hands the first len bytes of it to the card. */
    void *(*tx_buffer)(struct nic *nic);
    void (*tx_send)(struct nic *nic, size_t len);
};

struct nic {
    const char *model; /* "virtio-net", "e1000", "e1000e" */
    uint8_t mac[6];
    const struct pci_device *pci;
    const struct nic_ops *ops;
    void *driver;     /* the driver's own state */
    uint64_t dma_end; /* one past the highest byte the card may DMA to (rings, buffers) */
    uint64_t rx_frames, tx_frames, rx_errors;
};

/* One probe per device family: 1 and *nic filled when pci is theirs and
 * started, 0 when not theirs, -1 after printing one line saying why it
 * failed (the kernel goes on without it). */
int virtio_net_probe(const struct pci_device *pci, struct nic *nic);
int e1000_probe(const struct pci_device *pci, struct nic *nic);

/* The first card that starts, among every PCI function; NULL (and one line
 * per card that failed) when none. */
struct nic *nic_probe_first(void);

#endif
