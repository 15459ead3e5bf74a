/* xhci_regs.h - xHCI register offsets, TRB types and bits (from the xHCI
 * 1.2 specification), plus the helpers shared by xhci.c and xhci_device.c. */
#ifndef KERNEL_XHCI_REGS_H
#define KERNEL_XHCI_REGS_H

#include <stdint.h>
#include "kernel/drivers/xhci.h"

#define CAP_HCSPARAMS1 0x04
#define CAP_HCSPARAMS2 0x08
#define CAP_HCCPARAMS1 0x10
#define CAP_DBOFF 0x14
#define CAP_RTSOFF 0x18
#define HCC_AC64 (1u << 0)
#define HCC_CSZ (1u << 2)

#define OP_USBCMD 0x00
#define OP_USBSTS 0x04
#define OP_PAGESIZE 0x08
#define OP_CRCR 0x18
#define OP_DCBAAP 0x30
#define OP_CONFIG 0x38
#define PORTSC(port) (0x400 + 0x10 * ((port)-1))
#define CMD_RUN (1u << 0)
#define CMD_RESET (1u << 1)
#define STS_HALTED (1u << 0)
#define STS_HSE (1u << 2)
#define STS_NOT_READY (1u << 11)
#define STS_HCE (1u << 12)

#define PORT_CONNECTED (1u << 0)
#define PORT_CONNECT_CHANGE (1u << 17)
#define PORT_ENABLED (1u << 1)
#define PORT_RESET (1u << 4)
#define PORT_POWER (1u << 9)
#define PORT_RESET_CHANGE (1u << 21)
#define PORT_CHANGE_BITS (0x7fu << 17)
/* Bits that keep their value when written back (PP, indicator, wake enables);
 * PED and the change bits are write-1-to-clear and must be written as 0. */
#define PORT_PRESERVE (PORT_POWER | (3u << 14) | (7u << 25))

#define RT_IR0 0x20
#define IR_IMAN 0x00
#define IR_ERSTSZ 0x08
#define IR_ERSTBA 0x10
#define IR_ERDP 0x18
#define IMAN_PENDING 1u
#define ERDP_BUSY (1u << 3)

#define RING_TRBS 256
#define EVENT_TRBS 256

#define TRB_CYCLE (1u << 0)
#define TRB_TOGGLE_CYCLE (1u << 1)
#define TRB_ISP (1u << 2)
#define TRB_IOC (1u << 5)
#define TRB_IDT (1u << 6)
#define TRB_TYPE(t) ((uint32_t)(t) << 10)
#define TRB_GET_TYPE(c) (((c) >> 10) & 0x3f)
#define TRB_DIR_IN (1u << 16)

enum {
    TRB_NORMAL = 1,
    TRB_SETUP = 2,
    TRB_DATA = 3,
    TRB_STATUS = 4,
    TRB_LINK = 6,
    TRB_ENABLE_SLOT = 9,
    TRB_DISABLE_SLOT = 10,
    TRB_ADDRESS_DEVICE = 11,
    TRB_CONFIGURE_ENDPOINT = 12,
    TRB_EVALUATE_CONTEXT = 13,
    TRB_RESET_ENDPOINT = 14,
    TRB_SET_TR_DEQUEUE = 16,
    TRB_TRANSFER_EVENT = 32,
    TRB_COMMAND_COMPLETION = 33,
    TRB_PORT_STATUS_CHANGE = 34,
};

static inline uint32_t reg_read32(volatile uint8_t *base, uint32_t off) {
    return *(volatile uint32_t *)(base + off);
}
static inline void reg_write32(volatile uint8_t *base, uint32_t off, uint32_t v) {
    *(volatile uint32_t *)(base + off) = v;
}
static inline void reg_write64(volatile uint8_t *base, uint32_t off, uint64_t v) {
    *(volatile uint32_t *)(base + off) = (uint32_t)v;
    *(volatile uint32_t *)(base + off + 4) = (uint32_t)(v >> 32);
}

/* Shared between xhci.c and xhci_device.c. */
int xhci_ring_init(struct xhci *hc, struct xhci_ring *ring);
uint64_t xhci_ring_push(struct xhci_ring *ring, uint64_t parameter, uint32_t status, uint32_t control);
void xhci_ring_doorbell(struct xhci *hc, int slot, int target);
/* Waits for an event of `type` (matching trb_phys if nonzero, and slot/dci
 * for transfer events), handing other events to the normal dispatch.
 * 0 with *out filled, or -1 on timeout / controller error. */
int xhci_wait_event(struct xhci *hc, int type, int slot, int dci, uint64_t trb_phys, uint64_t timeout_us,
                    struct xhci_trb *out);
/* Runs a command; returns its completion code (-2 on timeout), *slot_out the slot ID. */
int xhci_command(struct xhci *hc, uint64_t parameter, uint32_t status, uint32_t control, int *slot_out);

#endif
