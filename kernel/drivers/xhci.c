/* xhci.c - xHCI controller bring-up, rings, the event ring, commands and
 * root ports. Everything is polled with a timeout: a controller that does
 * not answer makes a function return -1 with a message, never hang. */
#include "kernel/drivers/xhci.h"
#include "kernel/drivers/xhci_regs.h"
#include "kernel/drivers/xhci_caps.h"
#include "kernel/console/console.h"
#include "kernel/mm/memory.h"
#include "kernel/mm/paging.h"
#include "kernel/drivers/timer.h"
#include "lib/string.h"

int xhci_force_dma32;

#define DMA32_LIMIT (1ull << 32)

uint64_t xhci_alloc_page(struct xhci *hc) {
    uint64_t phys = hc->dma32 ? page_alloc_below(DMA32_LIMIT, 1) : page_alloc(1);
    if (!phys) return 0;
    memset(phys_to_virt(phys), 0, PAGE_SIZE);
    if (phys + PAGE_SIZE - 1 > hc->dma_highest) hc->dma_highest = phys + PAGE_SIZE - 1;
    return phys;
}

int xhci_ring_init(struct xhci *hc, struct xhci_ring *ring) {
    ring->phys = xhci_alloc_page(hc);
    if (!ring->phys) return -1;
    ring->trbs = phys_to_virt(ring->phys);
    ring->index = 0;
    ring->cycle = 1;
    struct xhci_trb *link = &ring->trbs[RING_TRBS - 1];
    link->parameter = ring->phys;
    link->control = TRB_TYPE(TRB_LINK) | TRB_TOGGLE_CYCLE;
    return 0;
}

uint64_t xhci_ring_push(struct xhci_ring *ring, uint64_t parameter, uint32_t status, uint32_t control) {
    struct xhci_trb *trb = &ring->trbs[ring->index];
    uint64_t phys = ring->phys + ring->index * sizeof(struct xhci_trb);
    trb->parameter = parameter;
    trb->status = status;
    __asm__ volatile("" ::: "memory");
    trb->control = (control & ~TRB_CYCLE) | ring->cycle; /* hand it over last */
    if (++ring->index == RING_TRBS - 1) {
        struct xhci_trb *link = &ring->trbs[RING_TRBS - 1];
        link->control = (link->control & ~TRB_CYCLE) | ring->cycle;
        ring->index = 0;
        ring->cycle ^= 1;
    }
    return phys;
}

void xhci_ring_doorbell(struct xhci *hc, int slot, int target) {
    __asm__ volatile("mfence" ::: "memory");
    reg_write32(hc->db, slot * 4, target);
}

/* One event out of the ring, or 0 when the next slot still belongs to the controller. */
static int next_event(struct xhci *hc, struct xhci_trb *out) {
    volatile struct xhci_trb *trb = &hc->events[hc->event_index];
    if ((trb->control & TRB_CYCLE) != hc->event_cycle) return 0;
    __asm__ volatile("" ::: "memory");
    out->parameter = trb->parameter;
    out->status = trb->status;
    out->control = trb->control;
    if (++hc->event_index == EVENT_TRBS) {
        hc->event_index = 0;
        hc->event_cycle ^= 1;
    }
    uint64_t dequeue = hc->events_phys + hc->event_index * sizeof(struct xhci_trb);
    reg_write64(hc->rt, RT_IR0 + IR_ERDP, dequeue | ERDP_BUSY);
    return 1;
}

static void dispatch(struct xhci *hc, const struct xhci_trb *ev) {
    if (TRB_GET_TYPE(ev->control) == TRB_PORT_STATUS_CHANGE) {
        int port = (int)(ev->parameter >> 24) & 0xff;
        if (port >= 1 && port <= (int)hc->max_ports) hc->port_changed |= 1ull << (port - 1);
        return;
    }
    if (TRB_GET_TYPE(ev->control) != TRB_TRANSFER_EVENT || !hc->on_transfer) return;
    int slot = ev->control >> 24, dci = (ev->control >> 16) & 0x1f;
    if (dci > 1) hc->on_transfer(hc, slot, dci, ev->status >> 24, ev->status & 0xffffff);
}

void xhci_poll(struct xhci *hc) {
    struct xhci_trb ev;
    for (int i = 0; i < EVENT_TRBS && next_event(hc, &ev); i++) dispatch(hc, &ev);
}

int xhci_wait_event(struct xhci *hc, int type, int slot, int dci, uint64_t trb_phys, uint64_t timeout_us,
                    struct xhci_trb *out) {
    uint64_t deadline = timer_ns() + timeout_us * 1000;
    for (;;) {
        struct xhci_trb ev;
        if (next_event(hc, &ev)) {
            int ev_type = TRB_GET_TYPE(ev.control);
            int ev_slot = ev.control >> 24, ev_dci = (ev.control >> 16) & 0x1f;
            int match = ev_type == type && (!trb_phys || ev.parameter == trb_phys) &&
                        (type != TRB_TRANSFER_EVENT || (ev_slot == slot && ev_dci == dci));
            if (match) {
                *out = ev;
                return 0;
            }
            dispatch(hc, &ev);
        } else {
            __asm__ volatile("pause");
        }
        /* Checked on every pass: a stream of unrelated events cannot keep us here. */
        if (timer_ns() > deadline) return -1;
        if (reg_read32(hc->op, OP_USBSTS) & (STS_HSE | STS_HCE)) return -1;
    }
}

int xhci_command(struct xhci *hc, uint64_t parameter, uint32_t status, uint32_t control, int *slot_out) {
    uint64_t phys = xhci_ring_push(&hc->command, parameter, status, control);
    xhci_ring_doorbell(hc, 0, 0);
    struct xhci_trb ev;
    if (xhci_wait_event(hc, TRB_COMMAND_COMPLETION, 0, 0, phys, 500000, &ev) < 0) {
        kprintf("xhci: command type %u timed out\n", TRB_GET_TYPE(control));
        return -2;
    }
    if (slot_out) *slot_out = ev.control >> 24;
    return ev.status >> 24;
}

static int wait_bits(volatile uint8_t *base, uint32_t offset, uint32_t mask, uint32_t want,
                     uint64_t timeout_us) {
    uint64_t deadline = timer_ns() + timeout_us * 1000;
    while ((reg_read32(base, offset) & mask) != want) {
        if (timer_ns() > deadline) return -1;
        timer_sleep_us(10);
    }
    return 0;
}

/* The controller's registers for xhci_caps.c (which the host tests drive with a fake). */
static uint32_t cap_read32(void *ctx, uint32_t offset) {
    return reg_read32(((struct xhci *)ctx)->cap, offset);
}
static void cap_write32(void *ctx, uint32_t offset, uint32_t value) {
    reg_write32(((struct xhci *)ctx)->cap, offset, value);
}
static uint64_t clock_us(void *ctx) {
    return timer_ns() / 1000;
}
static void sleep_us(void *ctx, uint64_t us) {
    timer_sleep_us(us);
}
static void log_line(void *ctx, const char *line) {
    kprintf("%s\n", line);
}

/* Extended capabilities: BIOS handoff (legacy support) and which ports are USB3. */
static void walk_extended_caps(struct xhci *hc, uint64_t mapped_size) {
    struct xhci_reg_io io = {hc,      (uint32_t)mapped_size, cap_read32, cap_write32, clock_us, sleep_us,
                             log_line};
    struct xhci_ext_caps caps;
    xhci_walk_extended_caps(&io, reg_read32(hc->cap, CAP_HCCPARAMS1), hc->port_usb3, XHCI_MAX_PORTS, &caps);
}

static int setup_scratchpad(struct xhci *hc) {
    uint32_t hcs2 = reg_read32(hc->cap, CAP_HCSPARAMS2);
    uint32_t count = (((hcs2 >> 21) & 0x1f) << 5) | (hcs2 >> 27);
    if (!count) return 0;
    if (count > 512) return -1;
    uint64_t array_phys = xhci_alloc_page(hc);
    if (!array_phys) return -1;
    uint64_t *array = phys_to_virt(array_phys);
    for (uint32_t i = 0; i < count; i++)
        if (!(array[i] = xhci_alloc_page(hc))) return -1;
    hc->dcbaa[0] = array_phys;
    return 0;
}

int xhci_start(struct xhci *hc, const struct pci_device *pci) {
    hc->pci = pci;
    uint64_t size;
    uint64_t bar = pci_bar_address(pci, 0, &size);
    if (!bar || size < 0x1000) {
        kprintf("xhci: %02x:%02x.%x has no usable BAR0\n", pci->bus, pci->slot, pci->func);
        return -1;
    }
    if (size > (1 << 20)) size = 1 << 20;
    pci_enable_mmio_and_dma(pci);
    hc->cap = paging_map_mmio(bar, size);
    uint32_t cap_length = reg_read32(hc->cap, 0) & 0xff;
    if (cap_length == 0xff || cap_length < 0x20) {
        kprintf("xhci: registers at 0x%lx do not answer\n", (unsigned long)bar);
        return -1;
    }
    hc->op = hc->cap + cap_length;
    hc->rt = hc->cap + (reg_read32(hc->cap, CAP_RTSOFF) & ~0x1fu);
    hc->db = hc->cap + (reg_read32(hc->cap, CAP_DBOFF) & ~0x3u);
    uint32_t hcs1 = reg_read32(hc->cap, CAP_HCSPARAMS1);
    hc->max_slots = hcs1 & 0xff;
    if (hc->max_slots > XHCI_MAX_SLOTS) hc->max_slots = XHCI_MAX_SLOTS;
    hc->max_ports = hcs1 >> 24;
    if (hc->max_ports > XHCI_MAX_PORTS) hc->max_ports = XHCI_MAX_PORTS;
    uint32_t hcc1 = reg_read32(hc->cap, CAP_HCCPARAMS1);
    hc->context_size = (hcc1 & HCC_CSZ) ? 64 : 32;
    hc->dma32 = !(hcc1 & HCC_AC64) || xhci_force_dma32;
    if (hc->dma32)
        kprintf("xhci: 32-bit DMA only (%s): rings, contexts and buffers below 4 GiB\n",
                (hcc1 & HCC_AC64) ? "forced by boot.cfg" : "AC64 = 0");
    if (!(reg_read32(hc->op, OP_PAGESIZE) & 1)) {
        kprintf("xhci: controller does not support 4 KiB pages\n");
        return -1;
    }
    walk_extended_caps(hc, size);

    /* Stop, then reset. */
    reg_write32(hc->op, OP_USBCMD, reg_read32(hc->op, OP_USBCMD) & ~CMD_RUN);
    if (wait_bits(hc->op, OP_USBSTS, STS_HALTED, STS_HALTED, 100000) < 0) {
        kprintf("xhci: controller did not halt\n");
        return -1;
    }
    reg_write32(hc->op, OP_USBCMD, CMD_RESET);
    if (wait_bits(hc->op, OP_USBCMD, CMD_RESET, 0, 1000000) < 0 ||
        wait_bits(hc->op, OP_USBSTS, STS_NOT_READY, 0, 1000000) < 0) {
        kprintf("xhci: controller reset timed out\n");
        return -1;
    }

    hc->dcbaa_phys = xhci_alloc_page(hc);
    hc->bounce_phys = xhci_alloc_page(hc);
    hc->events_phys = xhci_alloc_page(hc);
    uint64_t erst_phys = xhci_alloc_page(hc);
    if (!hc->dcbaa_phys || !hc->bounce_phys || !hc->events_phys || !erst_phys ||
        xhci_ring_init(hc, &hc->command) < 0) {
        kprintf("xhci: out of memory\n");
        return -1;
    }
    hc->dcbaa = phys_to_virt(hc->dcbaa_phys);
    hc->bounce = phys_to_virt(hc->bounce_phys);
    hc->events = phys_to_virt(hc->events_phys);
    hc->event_index = 0;
    hc->event_cycle = 1;
    if (setup_scratchpad(hc) < 0) {
        kprintf("xhci: cannot allocate scratchpad buffers\n");
        return -1;
    }

    reg_write32(hc->op, OP_CONFIG, hc->max_slots);
    reg_write64(hc->op, OP_DCBAAP, hc->dcbaa_phys);
    reg_write64(hc->op, OP_CRCR, hc->command.phys | 1);
    uint64_t *erst = phys_to_virt(erst_phys);
    erst[0] = hc->events_phys;
    erst[1] = EVENT_TRBS;
    reg_write32(hc->rt, RT_IR0 + IR_IMAN, IMAN_PENDING); /* clear, interrupts stay off */
    reg_write32(hc->rt, RT_IR0 + IR_ERSTSZ, 1);
    reg_write64(hc->rt, RT_IR0 + IR_ERDP, hc->events_phys);
    reg_write64(hc->rt, RT_IR0 + IR_ERSTBA, erst_phys);

    reg_write32(hc->op, OP_USBCMD, CMD_RUN);
    if (wait_bits(hc->op, OP_USBSTS, STS_HALTED, 0, 100000) < 0) {
        kprintf("xhci: controller did not start\n");
        return -1;
    }
    /* Turn on port power where the controller leaves it to software. */
    for (uint32_t p = 1; p <= hc->max_ports; p++) {
        uint32_t sc = reg_read32(hc->op, PORTSC(p));
        if (!(sc & PORT_POWER)) reg_write32(hc->op, PORTSC(p), (sc & PORT_PRESERVE) | PORT_POWER);
    }
    return 0;
}

uint32_t xhci_port_take_changes(struct xhci *hc, int port) {
    uint32_t sc = reg_read32(hc->op, PORTSC(port));
    if (sc & PORT_CHANGE_BITS)
        reg_write32(hc->op, PORTSC(port), (sc & PORT_PRESERVE) | (sc & PORT_CHANGE_BITS));
    return sc;
}

uint32_t xhci_port_status(struct xhci *hc, int port) {
    return reg_read32(hc->op, PORTSC(port));
}

int xhci_port_reset(struct xhci *hc, int port) {
    uint32_t sc = reg_read32(hc->op, PORTSC(port));
    if (!(sc & PORT_CONNECTED)) return 0;
    if (!hc->port_usb3[port] || !(sc & PORT_ENABLED)) {
        /* USB2 ports need a reset to become enabled; USB3 ones link up alone
         * (a warm-ish reset only if they did not). */
        reg_write32(hc->op, PORTSC(port), (sc & PORT_PRESERVE) | PORT_RESET);
        if (wait_bits(hc->op, PORTSC(port), PORT_RESET_CHANGE, PORT_RESET_CHANGE, 500000) < 0) {
            kprintf("usb: port %d reset timed out\n", port);
            return 0;
        }
    }
    sc = reg_read32(hc->op, PORTSC(port));
    /* Acknowledge the change bits (write-1-to-clear). */
    reg_write32(hc->op, PORTSC(port), (sc & PORT_PRESERVE) | PORT_CHANGE_BITS);
    if (!(sc & PORT_ENABLED)) return 0;
    return (sc >> 10) & 0xf;
}
