/* xhci.h - xHCI host controller: rings, commands, device slots, control and
 * interrupt transfers, all polled (the event ring is read, no interrupts).
 * USB enumeration on top of it lives in usb.c. */
#ifndef KERNEL_XHCI_H
#define KERNEL_XHCI_H

#include <stdint.h>
#include "kernel/drivers/pci.h"

#define XHCI_MAX_SLOTS 32
#define XHCI_MAX_PORTS 64

/* PORTSC speed values. */
enum { USB_SPEED_FULL = 1, USB_SPEED_LOW = 2, USB_SPEED_HIGH = 3, USB_SPEED_SUPER = 4 };

/* Completion codes used here. */
enum { XHCI_CC_SUCCESS = 1, XHCI_CC_STALL = 6, XHCI_CC_SHORT_PACKET = 13 };

struct xhci_trb {
    uint64_t parameter;
    uint32_t status;
    uint32_t control;
};

struct xhci_ring {
    struct xhci_trb *trbs; /* one page: 255 TRBs and a link TRB back */
    uint64_t phys;
    uint32_t index;
    uint32_t cycle;
};

struct xhci_slot {
    int in_use;
    uint8_t *input_ctx; /* one page each, CPU view */
    uint64_t input_phys;
    uint8_t *device_ctx;
    uint64_t device_phys;
    struct xhci_ring rings[32]; /* by DCI; trbs == 0 when unused */
};

struct xhci;
/* Called for transfer events on endpoints other than EP0 (interrupt IN). */
typedef void (*xhci_transfer_handler)(struct xhci *hc, int slot, int dci, int code, uint32_t residual);

struct xhci {
    const struct pci_device *pci;
    volatile uint8_t *cap, *op, *rt, *db;
    uint32_t max_slots, max_ports, context_size;
    int dma32;             /* AC64 = 0: every DMA page below 4 GiB */
    uint64_t dma_highest;  /* last byte of the highest page handed to the controller (logged, tested) */
    uint64_t port_changed; /* root ports with a Port Status Change event, bit port - 1 */
    uint64_t *dcbaa;
    uint64_t dcbaa_phys;
    struct xhci_ring command;
    struct xhci_trb *events;
    uint64_t events_phys;
    uint32_t event_index, event_cycle;
    uint8_t port_usb3[XHCI_MAX_PORTS + 1]; /* by 1-based port number */
    uint8_t *bounce;                       /* one DMA page for control transfers */
    uint64_t bounce_phys;
    struct xhci_slot slots[XHCI_MAX_SLOTS + 1];
    xhci_transfer_handler on_transfer;
};

/* Set before xhci_start to treat a 64-bit controller as 32-bit (boot.cfg
 * xhci_dma32=1: tests the below-4-GiB path on QEMU, whose xHCI has AC64). */
extern int xhci_force_dma32;
/* One zeroed page the controller can reach (below 4 GiB when hc->dma32),
 * its physical address; 0 when out of memory. */
uint64_t xhci_alloc_page(struct xhci *hc);

/* Takes the controller from the firmware, resets and starts it. 0 or -1
 * (after printing why). */
int xhci_start(struct xhci *hc, const struct pci_device *pci);
/* Reads every pending event; transfer events on non-EP0 endpoints go to
 * hc->on_transfer. Cheap when there is none (one memory read). */
void xhci_poll(struct xhci *hc);

/* Root ports (PORTSC bits: 0 connected, 17 connect change). */
uint32_t xhci_port_status(struct xhci *hc, int port);
/* PORTSC of a root port, whose change bits are then cleared (acknowledged). */
uint32_t xhci_port_take_changes(struct xhci *hc, int port);
/* Returns the speed of an enabled device after reset (USB2) or link-up
 * (USB3), 0 when nothing usable is connected. */
int xhci_port_reset(struct xhci *hc, int port);

/* Device slots. Slot context facts for Address Device. */
struct xhci_device_info {
    int speed;
    uint32_t route; /* route string below the root port */
    int root_port;
    int tt_slot, tt_port; /* transaction translator for LS/FS behind a HS hub */
    int max_packet0;
};
int xhci_enable_slot(struct xhci *hc);
void xhci_disable_slot(struct xhci *hc, int slot);
int xhci_address_device(struct xhci *hc, int slot, const struct xhci_device_info *info);
int xhci_set_max_packet0(struct xhci *hc, int slot, int max_packet0);
/* Marks the slot as a hub with `ports` downstream ports (and `mtt`/`ttt`). */
int xhci_configure_hub(struct xhci *hc, int slot, int ports, int ttt);
/* Adds an interrupt IN endpoint (address 0x81..0x8f); returns its DCI or -1. */
int xhci_configure_interrupt_in(struct xhci *hc, int slot, int speed, uint8_t address, int max_packet,
                                int interval);

/* Control transfer on EP0 with data in hc->bounce (len <= 4096). Returns
 * bytes transferred, -1 on error/stall (endpoint recovered), -2 on timeout. */
int xhci_control(struct xhci *hc, int slot, uint8_t request_type, uint8_t request, uint16_t value,
                 uint16_t index, uint16_t length);
/* Queues one Normal TRB (IOC) on an endpoint and rings its doorbell. */
int xhci_queue_transfer(struct xhci *hc, int slot, int dci, uint64_t phys, uint32_t length);

#endif
