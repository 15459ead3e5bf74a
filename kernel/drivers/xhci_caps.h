/* xhci_caps.h - the xHCI extended capability list: the USB legacy support
 * handoff (firmware -> OS, USBLEGSUP) and which root ports are USB3.
 * It reaches the registers only through struct xhci_reg_io, so the kernel
 * passes the controller's MMIO and tests/host/test_xhci_caps.c a fake
 * controller whose "firmware" lets go late, never, or whose list is broken. */
#ifndef KERNEL_XHCI_CAPS_H
#define KERNEL_XHCI_CAPS_H

#include <stdint.h>

struct xhci_reg_io {
    void *ctx;
    uint32_t size; /* bytes of capability register space: nothing at or past it is read */
    uint32_t (*read32)(void *ctx, uint32_t offset);
    void (*write32)(void *ctx, uint32_t offset, uint32_t value);
    uint64_t (*now_us)(void *ctx);
    void (*sleep_us)(void *ctx, uint64_t us);
    void (*log)(void *ctx, const char *line); /* one line, no newline */
};

enum xhci_handoff {
    XHCI_HANDOFF_NO_LEGACY_CAP, /* nothing to take over */
    XHCI_HANDOFF_NOT_OWNED,     /* the firmware did not hold it */
    XHCI_HANDOFF_RELEASED,      /* the firmware let go within the timeout */
    XHCI_HANDOFF_FORCED,        /* it did not: its semaphore cleared by us */
};

/* Longest wait for the firmware's semaphore (the xHCI spec suggests 1 s). */
#define XHCI_HANDOFF_TIMEOUT_US 1000000u
/* A list longer than this is taken as broken (real controllers have ~5). */
#define XHCI_MAX_EXT_CAPS 64

struct xhci_ext_caps {
    enum xhci_handoff handoff;
    uint64_t handoff_us; /* time waited for the firmware */
    int caps;            /* capabilities read */
    int broken;          /* the walk stopped at a pointer out of range or a list too long */
};

/* Walks the list that HCCPARAMS1's xECP field starts: takes the controller
 * from the firmware (with a log line when it waited or forced it) and sets
 * port_usb3[p] for the root ports 1..max_port a USB3 protocol capability
 * names. Never reads outside io->size and never loops: a broken list is
 * logged and cut short. */
void xhci_walk_extended_caps(const struct xhci_reg_io *io, uint32_t hccparams1, uint8_t *port_usb3,
                             int max_port, struct xhci_ext_caps *out);

#endif
