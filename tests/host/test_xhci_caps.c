/* test_xhci_caps.c - the kernel's xHCI extended capability walk
 * (kernel/drivers/xhci_caps.c) against a fake controller: a firmware that
 * hands the controller over after some polls, one that never does, one that
 * does not own it, and broken capability lists. QEMU's xHCI has no legacy
 * capability, so this is where the BIOS -> OS handoff is exercised. The
 * register layouts are written out by hand from the xHCI 1.2 specification
 * (section 7.1: USBLEGSUP, USBLEGCTLSTS; 7.2: Supported Protocol). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernel/drivers/xhci_caps.c"
#include "tests/host/check.h"

#define SPEC_BIOS_OWNED (1u << 16)
#define SPEC_OS_OWNED (1u << 24)

struct fake_xhci {
    uint32_t regs[0x1000 / 4];
    uint32_t size;
    uint32_t legacy_offset;  /* USBLEGSUP, 0 if none */
    int release_after_reads; /* the firmware clears BIOS-owned on this poll after OS-owned is set; <0 never */
    int polls_since_os_request; /* reads of USBLEGSUP since OS-owned was written */
    int reads, out_of_range;
    uint64_t clock_us;
    char log[8][128];
    int lines;
};

static uint32_t fake_read(void *ctx, uint32_t offset) {
    struct fake_xhci *f = ctx;
    f->reads++;
    if (offset + 4 > f->size || offset % 4) {
        f->out_of_range++;
        return 0xffffffffu;
    }
    uint32_t *reg = &f->regs[offset / 4];
    if (f->legacy_offset && offset == f->legacy_offset && (*reg & SPEC_OS_OWNED)) {
        f->polls_since_os_request++;
        if (f->release_after_reads >= 0 && f->polls_since_os_request >= f->release_after_reads)
            *reg &= ~SPEC_BIOS_OWNED;
    }
    return *reg;
}

static void fake_write(void *ctx, uint32_t offset, uint32_t value) {
    struct fake_xhci *f = ctx;
    if (offset + 4 > f->size || offset % 4) {
        f->out_of_range++;
        return;
    }
    f->regs[offset / 4] = value;
}

static uint64_t fake_now(void *ctx) {
    return ((struct fake_xhci *)ctx)->clock_us;
}

static void fake_sleep(void *ctx, uint64_t us) {
    ((struct fake_xhci *)ctx)->clock_us += us;
}

static void fake_log(void *ctx, const char *line) {
    struct fake_xhci *f = ctx;
    if (f->lines < 8) snprintf(f->log[f->lines++], sizeof f->log[0], "%s", line);
}

/* The walk over the fake, as the kernel runs it over MMIO. */
static void walk_fake(struct fake_xhci *f, uint32_t hccparams1, uint8_t *port_usb3, int max_port,
                      struct xhci_ext_caps *caps) {
    struct xhci_reg_io io = {f, f->size, fake_read, fake_write, fake_now, fake_sleep, fake_log};
    xhci_walk_extended_caps(&io, hccparams1, port_usb3, max_port, caps);
}

/* A list at 0x500: USBLEGSUP (id 1, next 4 dwords on), then a USB 3
 * Supported Protocol capability for ports 5-8 (id 2, major 3, last). */
static void fake_with_legacy(struct fake_xhci *f, uint32_t legsup, uint32_t legctlsts, int release_after) {
    memset(f, 0, sizeof *f);
    f->size = sizeof f->regs;
    f->legacy_offset = 0x500;
    f->release_after_reads = release_after;
    f->regs[0x500 / 4] = legsup | (4u << 8) | 1u;
    f->regs[0x504 / 4] = legctlsts;
    f->regs[0x510 / 4] = (3u << 24) | 2u; /* major revision 3, next 0 */
    f->regs[0x518 / 4] = (4u << 8) | 5u;  /* 4 ports from port 5 */
}

#define HCC_XECP_0x500 ((0x500u / 4) << 16)

static int log_has(const struct fake_xhci *f, const char *text) {
    for (int i = 0; i < f->lines; i++)
        if (strstr(f->log[i], text)) return 1;
    return 0;
}

static void test_released_after_polls(void) {
    struct fake_xhci f;
    /* SMI enables on (bits 0, 4, 13, 14, 15), an event pending (bit 29), bit 1 (kept). */
    fake_with_legacy(&f, SPEC_BIOS_OWNED, 0x2000e013u, 5);
    uint8_t usb3[65] = {0};
    struct xhci_ext_caps caps;
    walk_fake(&f, HCC_XECP_0x500, usb3, 64, &caps);
    check(caps.handoff == XHCI_HANDOFF_RELEASED, "firmware releasing after 5 polls: released", "handoff %d",
          caps.handoff);
    check(f.polls_since_os_request == 5, "the wait stops at the poll that saw the release", "%d polls",
          f.polls_since_os_request);
    uint32_t legsup = f.regs[0x500 / 4];
    check((legsup & SPEC_OS_OWNED) && !(legsup & SPEC_BIOS_OWNED), "USBLEGSUP ends OS-owned", "0x%08x",
          legsup);
    /* USBLEGCTLSTS: enables 0, 4, 13-15 cleared, bit 1 kept, 29-31 written as 1 (acknowledged). */
    check(f.regs[0x504 / 4] == 0xe0000002u, "SMIs off and events acknowledged", "USBLEGCTLSTS 0x%08x",
          f.regs[0x504 / 4]);
    check(caps.handoff_us > 0 && caps.handoff_us < 1000, "handoff time is the polls' sleeps", "%lu us",
          (unsigned long)caps.handoff_us);
    check(log_has(&f, "firmware handed the controller over in"), "the handoff is logged", "log: %s",
          f.lines ? f.log[0] : "(none)");
    check(usb3[5] && usb3[8] && !usb3[4] && !usb3[9], "ports 5-8 are USB3 from the protocol capability",
          "%d %d %d %d", usb3[4], usb3[5], usb3[8], usb3[9]);
    check(!caps.broken && caps.caps == 2 && f.out_of_range == 0, "a good list is walked whole",
          "caps %d broken %d", caps.caps, caps.broken);
}

static void test_never_released(void) {
    struct fake_xhci f;
    fake_with_legacy(&f, SPEC_BIOS_OWNED, 0, -1);
    uint8_t usb3[65] = {0};
    struct xhci_ext_caps caps;
    walk_fake(&f, HCC_XECP_0x500, usb3, 64, &caps);
    check(caps.handoff == XHCI_HANDOFF_FORCED, "firmware that never lets go: forced", "handoff %d",
          caps.handoff);
    check(f.clock_us >= 1000000 && f.clock_us < 1100000, "forced after the 1 s timeout, not much later",
          "waited %lu us", (unsigned long)f.clock_us);
    uint32_t legsup = f.regs[0x500 / 4];
    check((legsup & SPEC_OS_OWNED) && !(legsup & SPEC_BIOS_OWNED), "BIOS-owned cleared by us, OS-owned set",
          "0x%08x", legsup);
    check(log_has(&f, "firmware did not release the controller in 1000 ms, taking it anyway"),
          "the forced takeover is logged", "log: %s", f.lines ? f.log[0] : "(none)");
    check(usb3[6], "the walk goes on after a forced handoff", "port 6 not USB3");
}

static void test_not_owned(void) {
    struct fake_xhci f;
    fake_with_legacy(&f, 0, 0, -1);
    uint8_t usb3[65] = {0};
    struct xhci_ext_caps caps;
    walk_fake(&f, HCC_XECP_0x500, usb3, 64, &caps);
    check(caps.handoff == XHCI_HANDOFF_NOT_OWNED && f.clock_us == 0 && f.lines == 0,
          "a controller the firmware does not own: OS-owned set, no wait, no log",
          "handoff %d, %lu us, %d lines", caps.handoff, (unsigned long)f.clock_us, f.lines);
    check(f.regs[0x500 / 4] & SPEC_OS_OWNED, "OS-owned set even so", "0x%08x", f.regs[0x500 / 4]);
}

static void test_no_list(void) {
    struct fake_xhci f;
    fake_with_legacy(&f, SPEC_BIOS_OWNED, 0, -1);
    uint8_t usb3[65] = {0};
    struct xhci_ext_caps caps;
    walk_fake(&f, 0, usb3, 64, &caps);
    check(caps.handoff == XHCI_HANDOFF_NO_LEGACY_CAP && f.reads == 0 && caps.caps == 0,
          "xECP 0: nothing read", "handoff %d, %d reads", caps.handoff, f.reads);
}

static void test_broken_lists(void) {
    struct fake_xhci f;
    uint8_t usb3[65] = {0};
    struct xhci_ext_caps caps;

    /* Registers of a controller that is gone read all ones: id 0xff, next
     * 0xff forever. The walk must stop inside the register space. */
    memset(&f, 0, sizeof f);
    f.size = sizeof f.regs;
    memset(f.regs, 0xff, sizeof f.regs);
    walk_fake(&f, HCC_XECP_0x500, usb3, 64, &caps);
    check(caps.broken && f.out_of_range == 0 && f.reads < 16,
          "all-ones registers: stops at the end of the space", "broken %d, %d reads, %d out of range",
          caps.broken, f.reads, f.out_of_range);
    check(log_has(&f, "extended capability list broken"), "the broken list is logged", "log: %s",
          f.lines ? f.log[0] : "(none)");

    /* An endless list: every capability (id 0xc0, vendor) points one dword on. */
    memset(&f, 0, sizeof f);
    f.size = sizeof f.regs;
    for (int i = 0x40; i < 0x400; i++) f.regs[i] = (1u << 8) | 0xc0u;
    walk_fake(&f, (0x100u / 4) << 16, usb3, 64, &caps);
    check(caps.broken && caps.caps == XHCI_MAX_EXT_CAPS && f.reads == XHCI_MAX_EXT_CAPS,
          "an endless list is cut at the entry limit", "broken %d, caps %d, reads %d", caps.broken, caps.caps,
          f.reads);

    /* xECP past a small (4 KiB) register space: not a single read there. */
    memset(&f, 0, sizeof f);
    f.size = sizeof f.regs;
    walk_fake(&f, 0xffffu << 16, usb3, 64, &caps);
    check(caps.broken && f.reads == 0 && f.out_of_range == 0, "xECP out of range: nothing read",
          "broken %d, %d reads", caps.broken, f.reads);

    /* A legacy capability in the last dword: USBLEGCTLSTS would be past the end. */
    memset(&f, 0, sizeof f);
    f.size = sizeof f.regs;
    f.legacy_offset = 0xffc;
    f.release_after_reads = 2;
    f.regs[0xffc / 4] = SPEC_BIOS_OWNED | 1u;
    walk_fake(&f, (0xffcu / 4) << 16, usb3, 64, &caps);
    check(caps.handoff == XHCI_HANDOFF_RELEASED && f.out_of_range == 0,
          "legacy capability at the end: handoff done, USBLEGCTLSTS not touched",
          "handoff %d, %d out of range", caps.handoff, f.out_of_range);

    /* A protocol capability naming ports 0 and past max_port: only 1..max_port set. */
    memset(&f, 0, sizeof f);
    f.size = sizeof f.regs;
    f.regs[0x100 / 4] = (3u << 24) | 2u;
    f.regs[0x108 / 4] = (255u << 8) | 0u; /* 255 ports from port 0 */
    uint8_t ports[10];
    memset(ports, 0, sizeof ports);
    walk_fake(&f, (0x100u / 4) << 16, ports + 1, 4, &caps);
    check(!ports[0] && !ports[1] && ports[2] && ports[5] && !ports[6],
          "protocol port range clipped to 1..max_port", "%d %d %d %d %d", ports[0], ports[1], ports[2],
          ports[5], ports[6]);
}

int main(void) {
    test_released_after_polls();
    test_never_released();
    test_not_owned();
    test_no_list();
    test_broken_lists();
    return failures ? 1 : 0;
}
