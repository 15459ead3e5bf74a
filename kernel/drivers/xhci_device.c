/* xhci_device.c - device slots on an xHCI controller: input/device contexts,
 * Address Device, endpoint configuration, control transfers on EP0 and
 * Normal TRBs on interrupt endpoints. */
#include "kernel/drivers/xhci.h"
#include "kernel/drivers/xhci_regs.h"
#include "kernel/console/console.h"
#include "kernel/mm/memory.h"
#include "lib/string.h"

#define EP_TYPE_CONTROL 4
#define EP_TYPE_INTERRUPT_IN 7
#define CONTROL_TIMEOUT_US 500000

/* Input context entry: 0 = input control, 1 = slot, DCI n at n + 1. */
static uint32_t *input_entry(struct xhci *hc, int slot, int index) {
    return (uint32_t *)(hc->slots[slot].input_ctx + index * hc->context_size);
}

static uint32_t *device_entry(struct xhci *hc, int slot, int dci) {
    return (uint32_t *)(hc->slots[slot].device_ctx + dci * hc->context_size);
}

static void free_slot_memory(struct xhci *hc, int slot) {
    struct xhci_slot *s = &hc->slots[slot];
    if (s->input_phys) page_free(s->input_phys, 1);
    if (s->device_phys) page_free(s->device_phys, 1);
    for (int i = 0; i < 32; i++)
        if (s->rings[i].trbs) page_free(s->rings[i].phys, 1);
    memset(s, 0, sizeof *s);
    hc->dcbaa[slot] = 0;
}

int xhci_enable_slot(struct xhci *hc) {
    int slot = 0;
    int code = xhci_command(hc, 0, 0, TRB_TYPE(TRB_ENABLE_SLOT), &slot);
    if (code != XHCI_CC_SUCCESS || slot < 1 || slot > (int)hc->max_slots) {
        kprintf("usb: Enable Slot failed (code %d)\n", code);
        return -1;
    }
    struct xhci_slot *s = &hc->slots[slot];
    memset(s, 0, sizeof *s);
    s->input_phys = xhci_alloc_page(hc);
    s->device_phys = xhci_alloc_page(hc);
    if (!s->input_phys || !s->device_phys || xhci_ring_init(hc, &s->rings[1]) < 0) {
        kprintf("usb: out of memory for a device slot\n");
        free_slot_memory(hc, slot);
        xhci_command(hc, 0, 0, TRB_TYPE(TRB_DISABLE_SLOT) | ((uint32_t)slot << 24), 0);
        return -1;
    }
    s->input_ctx = phys_to_virt(s->input_phys);
    s->device_ctx = phys_to_virt(s->device_phys);
    s->in_use = 1;
    hc->dcbaa[slot] = s->device_phys;
    return slot;
}

void xhci_disable_slot(struct xhci *hc, int slot) {
    if (slot < 1 || slot > XHCI_MAX_SLOTS || !hc->slots[slot].in_use) return;
    xhci_command(hc, 0, 0, TRB_TYPE(TRB_DISABLE_SLOT) | ((uint32_t)slot << 24), 0);
    free_slot_memory(hc, slot);
}

int xhci_address_device(struct xhci *hc, int slot, const struct xhci_device_info *info) {
    struct xhci_slot *s = &hc->slots[slot];
    memset(s->input_ctx, 0, PAGE_SIZE);
    input_entry(hc, slot, 0)[1] = (1u << 0) | (1u << 1); /* add slot and EP0 */
    uint32_t *sc = input_entry(hc, slot, 1);
    sc[0] = (info->route & 0xfffff) | ((uint32_t)info->speed << 20) | (1u << 27);
    sc[1] = (uint32_t)info->root_port << 16;
    if (info->tt_slot) sc[2] = (uint32_t)info->tt_slot | ((uint32_t)info->tt_port << 8);
    uint32_t *ep0 = input_entry(hc, slot, 2);
    ep0[1] = (3u << 1) | (EP_TYPE_CONTROL << 3) | ((uint32_t)info->max_packet0 << 16);
    uint64_t dequeue = s->rings[1].phys | s->rings[1].cycle;
    ep0[2] = (uint32_t)dequeue;
    ep0[3] = (uint32_t)(dequeue >> 32);
    ep0[4] = 8; /* average TRB length for control */
    int code = xhci_command(hc, s->input_phys, 0, TRB_TYPE(TRB_ADDRESS_DEVICE) | ((uint32_t)slot << 24), 0);
    if (code != XHCI_CC_SUCCESS) {
        kprintf("usb: Address Device failed (code %d)\n", code);
        return -1;
    }
    return 0;
}

int xhci_set_max_packet0(struct xhci *hc, int slot, int max_packet0) {
    memset(hc->slots[slot].input_ctx, 0, PAGE_SIZE);
    input_entry(hc, slot, 0)[1] = 1u << 1;
    uint32_t *ep0 = input_entry(hc, slot, 2);
    memcpy(ep0, device_entry(hc, slot, 1), hc->context_size);
    ep0[1] = (ep0[1] & 0xffff) | ((uint32_t)max_packet0 << 16);
    int code = xhci_command(hc, hc->slots[slot].input_phys, 0,
                            TRB_TYPE(TRB_EVALUATE_CONTEXT) | ((uint32_t)slot << 24), 0);
    return code == XHCI_CC_SUCCESS ? 0 : -1;
}

/* Input context for Configure Endpoint: the current slot context with add flags. */
static uint32_t *prepare_configure(struct xhci *hc, int slot, uint32_t add_flags) {
    memset(hc->slots[slot].input_ctx, 0, PAGE_SIZE);
    input_entry(hc, slot, 0)[1] = add_flags | 1u;
    uint32_t *sc = input_entry(hc, slot, 1);
    memcpy(sc, device_entry(hc, slot, 0), hc->context_size);
    sc[3] = 0; /* device address / state are output-only */
    return sc;
}

static int configure(struct xhci *hc, int slot) {
    return xhci_command(hc, hc->slots[slot].input_phys, 0,
                        TRB_TYPE(TRB_CONFIGURE_ENDPOINT) | ((uint32_t)slot << 24), 0);
}

int xhci_configure_hub(struct xhci *hc, int slot, int ports, int ttt) {
    uint32_t *sc = prepare_configure(hc, slot, 0);
    sc[0] |= 1u << 26;
    sc[1] = (sc[1] & 0x00ffffff) | ((uint32_t)ports << 24);
    sc[2] = (sc[2] & ~(3u << 16)) | ((uint32_t)(ttt & 3) << 16);
    int code = configure(hc, slot);
    return code == XHCI_CC_SUCCESS ? 0 : -1;
}

int xhci_configure_interrupt_in(struct xhci *hc, int slot, int speed, uint8_t address, int max_packet,
                                int interval) {
    int number = address & 0x0f;
    if (number == 0 || !(address & 0x80)) return -1;
    int dci = number * 2 + 1;
    struct xhci_slot *s = &hc->slots[slot];
    if (!s->rings[dci].trbs && xhci_ring_init(hc, &s->rings[dci]) < 0) return -1;
    uint32_t *sc = prepare_configure(hc, slot, 1u << dci);
    uint32_t entries = sc[0] >> 27;
    if ((uint32_t)dci > entries) sc[0] = (sc[0] & 0x07ffffff) | ((uint32_t)dci << 27);
    /* Interval is 2^n * 125 us: HS/SS use bInterval - 1, LS/FS give ms frames. */
    int exponent;
    if (speed == USB_SPEED_HIGH || speed == USB_SPEED_SUPER) {
        exponent = interval < 1 ? 0 : (interval > 16 ? 15 : interval - 1);
    } else {
        int frames = interval < 1 ? 1 : interval;
        exponent = 3;
        while (exponent < 10 && (1 << (exponent - 3)) < frames) exponent++;
    }
    uint32_t *ep = input_entry(hc, slot, dci + 1);
    ep[0] = (uint32_t)exponent << 16;
    ep[1] = (3u << 1) | (EP_TYPE_INTERRUPT_IN << 3) | ((uint32_t)(max_packet & 0x7ff) << 16);
    uint64_t dequeue = s->rings[dci].phys | s->rings[dci].cycle;
    ep[2] = (uint32_t)dequeue;
    ep[3] = (uint32_t)(dequeue >> 32);
    ep[4] = (uint32_t)max_packet | ((uint32_t)max_packet << 16);
    int code = configure(hc, slot);
    if (code != XHCI_CC_SUCCESS) {
        kprintf("usb: Configure Endpoint failed (code %d)\n", code);
        return -1;
    }
    return dci;
}

/* After a stall the endpoint is halted: reset it and move its dequeue
 * pointer past whatever was left on the ring. */
static void recover_endpoint(struct xhci *hc, int slot, int dci) {
    struct xhci_ring *ring = &hc->slots[slot].rings[dci];
    uint32_t target = ((uint32_t)slot << 24) | ((uint32_t)dci << 16);
    xhci_command(hc, 0, 0, TRB_TYPE(TRB_RESET_ENDPOINT) | target, 0);
    uint64_t dequeue = (ring->phys + ring->index * sizeof(struct xhci_trb)) | ring->cycle;
    xhci_command(hc, dequeue, 0, TRB_TYPE(TRB_SET_TR_DEQUEUE) | target, 0);
}

int xhci_control(struct xhci *hc, int slot, uint8_t request_type, uint8_t request, uint16_t value,
                 uint16_t index, uint16_t length) {
    if (length > PAGE_SIZE) return -1;
    struct xhci_ring *ring = &hc->slots[slot].rings[1];
    int in = (request_type & 0x80) != 0;
    uint64_t setup = request_type | ((uint64_t)request << 8) | ((uint64_t)value << 16) |
                     ((uint64_t)index << 32) | ((uint64_t)length << 48);
    uint32_t transfer_type = length ? (in ? 3u : 2u) : 0u;
    xhci_ring_push(ring, setup, 8, TRB_TYPE(TRB_SETUP) | TRB_IDT | (transfer_type << 16));
    uint64_t data_phys = 0;
    if (length)
        data_phys = xhci_ring_push(ring, hc->bounce_phys, length,
                                   TRB_TYPE(TRB_DATA) | TRB_IOC | TRB_ISP | (in ? TRB_DIR_IN : 0));
    uint64_t status_phys =
        xhci_ring_push(ring, 0, 0, TRB_TYPE(TRB_STATUS) | TRB_IOC | ((length && in) ? 0 : TRB_DIR_IN));
    xhci_ring_doorbell(hc, slot, 1);

    int transferred = length;
    for (;;) {
        struct xhci_trb ev;
        if (xhci_wait_event(hc, TRB_TRANSFER_EVENT, slot, 1, 0, CONTROL_TIMEOUT_US, &ev) < 0) {
            kprintf("usb: control request %02x/%02x to slot %d timed out\n", request_type, request, slot);
            return -2;
        }
        int code = ev.status >> 24;
        if (code != XHCI_CC_SUCCESS && code != XHCI_CC_SHORT_PACKET) {
            recover_endpoint(hc, slot, 1);
            return -1;
        }
        if (ev.parameter == data_phys) transferred = length - (int)(ev.status & 0xffffff);
        if (ev.parameter == status_phys) return transferred;
    }
}

int xhci_queue_transfer(struct xhci *hc, int slot, int dci, uint64_t phys, uint32_t length) {
    struct xhci_ring *ring = &hc->slots[slot].rings[dci];
    if (!ring->trbs) return -1;
    xhci_ring_push(ring, phys, length, TRB_TYPE(TRB_NORMAL) | TRB_IOC | TRB_ISP);
    xhci_ring_doorbell(hc, slot, dci);
    return 0;
}
