/* xhci_caps.c - the xHCI extended capability list (see xhci_caps.h).
 * Register layouts from the xHCI 1.2 specification, section 7. */
#include "kernel/drivers/xhci_caps.h"
#include "lib/format.h"

#define XCAP_LEGACY 1
#define XCAP_PROTOCOL 2
#define LEGACY_BIOS_OWNED (1u << 16)
#define LEGACY_OS_OWNED (1u << 24)
#define LEGACY_CONTROL 4 /* USBLEGCTLSTS, after USBLEGSUP */
/* USBLEGCTLSTS: the SMI enables (bits 0, 4, 13-15) cleared, the rest kept,
 * and the SMI event bits 29-31 (write 1 to clear) acknowledged. */
#define LEGACY_SMI_KEEP 0x000e1feeu
#define LEGACY_SMI_EVENTS (7u << 29)
#define HANDOFF_POLL_US 10

static int readable(const struct xhci_reg_io *io, uint32_t offset, uint32_t bytes) {
    return offset <= io->size && bytes <= io->size - offset;
}

/* Sets OS-owned, waits for the firmware to clear BIOS-owned (clears it
 * itself after the timeout), then turns the firmware's SMIs off. */
static void take_from_firmware(const struct xhci_reg_io *io, uint32_t offset, struct xhci_ext_caps *out) {
    uint32_t cap = io->read32(io->ctx, offset);
    io->write32(io->ctx, offset, cap | LEGACY_OS_OWNED);
    out->handoff = XHCI_HANDOFF_NOT_OWNED;
    if (cap & LEGACY_BIOS_OWNED) {
        uint64_t start = io->now_us(io->ctx), waited = 0;
        while ((cap = io->read32(io->ctx, offset)) & LEGACY_BIOS_OWNED) {
            waited = io->now_us(io->ctx) - start;
            if (waited >= XHCI_HANDOFF_TIMEOUT_US) break;
            io->sleep_us(io->ctx, HANDOFF_POLL_US);
        }
        out->handoff_us = io->now_us(io->ctx) - start;
        char line[96];
        if (cap & LEGACY_BIOS_OWNED) {
            out->handoff = XHCI_HANDOFF_FORCED;
            io->write32(io->ctx, offset, (cap & ~LEGACY_BIOS_OWNED) | LEGACY_OS_OWNED);
            snprintf(line, sizeof line,
                     "xhci: firmware did not release the controller in %lu ms, taking it anyway",
                     (unsigned long)(out->handoff_us / 1000));
        } else {
            out->handoff = XHCI_HANDOFF_RELEASED;
            snprintf(line, sizeof line, "xhci: firmware handed the controller over in %lu us",
                     (unsigned long)out->handoff_us);
        }
        io->log(io->ctx, line);
    }
    if (!readable(io, offset + LEGACY_CONTROL, 4)) return;
    uint32_t control = io->read32(io->ctx, offset + LEGACY_CONTROL);
    io->write32(io->ctx, offset + LEGACY_CONTROL, (control & LEGACY_SMI_KEEP) | LEGACY_SMI_EVENTS);
}

static void note_protocol(const struct xhci_reg_io *io, uint32_t offset, uint32_t cap, uint8_t *port_usb3,
                          int max_port) {
    if (!readable(io, offset + 8, 4)) return;
    uint32_t ports = io->read32(io->ctx, offset + 8);
    int major = cap >> 24, first = ports & 0xff, count = (ports >> 8) & 0xff;
    for (int p = first < 1 ? 1 : first; p < first + count && p <= max_port; p++) port_usb3[p] = major >= 3;
}

void xhci_walk_extended_caps(const struct xhci_reg_io *io, uint32_t hccparams1, uint8_t *port_usb3,
                             int max_port, struct xhci_ext_caps *out) {
    *out = (struct xhci_ext_caps){XHCI_HANDOFF_NO_LEGACY_CAP, 0, 0, 0};
    uint32_t offset = (hccparams1 >> 16) * 4;
    int legacy_done = 0;
    while (offset) {
        /* Each pointer is relative and points forward, so the list cannot
         * cycle, but all-ones registers (a controller gone) make it endless. */
        if (!readable(io, offset, 4) || out->caps == XHCI_MAX_EXT_CAPS) {
            out->broken = 1;
            char line[96];
            snprintf(line, sizeof line,
                     "xhci: extended capability list broken at offset 0x%x after %d entries",
                     (unsigned)offset, out->caps);
            io->log(io->ctx, line);
            return;
        }
        uint32_t cap = io->read32(io->ctx, offset);
        out->caps++;
        int id = cap & 0xff;
        if (id == XCAP_LEGACY && !legacy_done) {
            take_from_firmware(io, offset, out);
            legacy_done = 1;
        } else if (id == XCAP_PROTOCOL) {
            note_protocol(io, offset, cap, port_usb3, max_port);
        }
        uint32_t next = (cap >> 8) & 0xff;
        offset = next ? offset + next * 4 : 0;
    }
}
