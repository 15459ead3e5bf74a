/* usb_hub.c - USB2/USB1 hubs: port power, the status-change interrupt
 * endpoint (a bitmap of ports that changed), and each changed port looked
 * at from the console poll: a device that went away is detached, a new one
 * is reset and enumerated. So keyboards can be plugged into a hub, or a hub
 * into a port, at any time. USB3 hubs are configured but their ports are
 * not enumerated. */
#include "kernel/drivers/usb_device.h"
#include "kernel/drivers/usb_descriptors.h"
#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include "kernel/mm/memory.h"

enum {
    HUB_STATUS_CONNECTED = 1u << 0,
    HUB_STATUS_ENABLED = 1u << 1,
    HUB_STATUS_LOW_SPEED = 1u << 9,
    HUB_STATUS_HIGH_SPEED = 1u << 10,
    HUB_CHANGE_CONNECTION = 1u << 16,
    HUB_CHANGE_RESET = 1u << 20,
};
enum {
    FEATURE_PORT_RESET = 4,
    FEATURE_PORT_POWER = 8,
    FEATURE_C_PORT_CONNECTION = 16,
    FEATURE_C_PORT_RESET = 20
};
#define DEBOUNCE_US 100000
#define RESET_TIMEOUT_NS 500000000ull

static int port_feature(struct usb_device *hub, uint8_t request, uint16_t feature, int port) {
    return xhci_control(hub->hc, hub->slot, 0x23, request, feature, (uint16_t)port, 0);
}

/* Hub port status: wPortStatus | wPortChange << 16, or -1. */
static int64_t port_status(struct usb_device *hub, int port) {
    if (xhci_control(hub->hc, hub->slot, 0xa3, 0x00, 0, (uint16_t)port, 4) != 4) return -1;
    const uint8_t *b = hub->hc->bounce;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

int usb_hub_setup(struct usb_device *hub, uint8_t endpoint, int max_packet, int interval) {
    struct xhci *hc = hub->hc;
    int type = hub->speed == USB_SPEED_SUPER ? 0x2a : 0x29;
    struct usb_hub_facts desc;
    int got = xhci_control(hc, hub->slot, 0xa0, 0x06, (uint16_t)(type << 8), 0, 9);
    if (usb_parse_hub(hc->bounce, got, &desc) < 0) {
        kprintf("usb: hub on port %d: no hub descriptor\n", hub->root_port);
        return -1;
    }
    int ports = desc.ports, power_on_ms = desc.power_on_ms, ttt = desc.think_time;
    if (xhci_configure_hub(hc, hub->slot, ports, ttt) < 0)
        kprintf("usb: hub on port %d: controller refused the hub context\n", hub->root_port);
    hub->is_hub = 1;
    hub->hub_ports = ports;
    kprintf("usb: hub with %d ports (port %d, route 0x%x)\n", ports, hub->root_port, hub->route);
    if (hub->speed == USB_SPEED_SUPER || hub->depth >= USB_MAX_HUB_DEPTH) {
        if (hub->speed == USB_SPEED_SUPER) kprintf("usb: USB3 hub ports are not enumerated\n");
        return 0;
    }
    for (int p = 1; p <= ports; p++) port_feature(hub, 0x03, FEATURE_PORT_POWER, p);
    timer_sleep_us((uint64_t)(power_on_ms < 20 ? 20 : power_on_ms) * 1000);
    hub->hub_pending = ((1u << ports) - 1) << 1;
    if (!endpoint) {
        kprintf("usb: hub on port %d has no status endpoint: devices plugged later are not seen\n",
                hub->root_port);
        return 0;
    }
    int bytes = max_packet > 0 && max_packet <= 64 ? max_packet : (ports + 8) / 8;
    int dci = xhci_configure_interrupt_in(hc, hub->slot, hub->speed, endpoint, bytes, interval);
    hub->buffer_phys = dci > 0 ? xhci_alloc_page(hc) : 0;
    if (!hub->buffer_phys) {
        kprintf("usb: hub on port %d: cannot watch its ports, devices plugged later are not seen\n",
                hub->root_port);
        return 0;
    }
    hub->buffer = phys_to_virt(hub->buffer_phys);
    hub->dci = dci;
    hub->max_packet = bytes;
    xhci_queue_transfer(hc, hub->slot, dci, hub->buffer_phys, (uint32_t)bytes);
    return 0;
}

void usb_hub_on_change(struct usb_device *hub, int code, uint32_t residual) {
    if (code != XHCI_CC_SUCCESS && code != XHCI_CC_SHORT_PACKET) {
        kprintf("usb: hub on slot %d stopped reporting (completion code %d)\n", hub->slot, code);
        hub->dead = 1;
        return;
    }
    int got = hub->max_packet - (int)residual;
    uint32_t bits = 0;
    for (int i = 0; i < got && i < 4; i++) bits |= (uint32_t)hub->buffer[i] << (8 * i);
    hub->hub_pending |= bits & (((1u << hub->hub_ports) - 1) << 1);
    xhci_queue_transfer(hub->hc, hub->slot, hub->dci, hub->buffer_phys, (uint32_t)hub->max_packet);
}

/* Resets port p and enumerates what is on it; 0, or -1 if it failed. */
static int attach(struct usb_device *hub, int p) {
    port_feature(hub, 0x03, FEATURE_PORT_RESET, p);
    uint64_t deadline = timer_ns() + RESET_TIMEOUT_NS;
    int64_t st;
    do {
        timer_sleep_us(2000);
        st = port_status(hub, p);
    } while (st >= 0 && !(st & HUB_CHANGE_RESET) && timer_ns() < deadline);
    if (st < 0 || !(st & HUB_CHANGE_RESET) || !(st & HUB_STATUS_ENABLED)) {
        kprintf("usb: hub port %d did not come out of reset\n", p);
        return -1;
    }
    port_feature(hub, 0x01, FEATURE_C_PORT_RESET, p);
    timer_sleep_us(10000); /* reset recovery */
    struct usb_device *child = usb_device_new();
    if (!child) {
        kprintf("usb: too many devices, hub port %d ignored\n", p);
        return -1;
    }
    child->hc = hub->hc;
    child->root_port = hub->root_port;
    child->depth = hub->depth + 1;
    child->parent = hub;
    child->parent_port = p;
    child->speed = (st & HUB_STATUS_LOW_SPEED)    ? USB_SPEED_LOW
                   : (st & HUB_STATUS_HIGH_SPEED) ? USB_SPEED_HIGH
                                                  : USB_SPEED_FULL;
    child->route = hub->route | ((uint32_t)p << (hub->depth * 4));
    if (hub->speed == USB_SPEED_HIGH && child->speed != USB_SPEED_HIGH) {
        child->tt_slot = hub->slot;
        child->tt_port = p;
    } else {
        child->tt_slot = hub->tt_slot;
        child->tt_port = hub->tt_port;
    }
    return usb_enumerate(child);
}

static void service_port(struct usb_device *hub, int p) {
    int64_t st = port_status(hub, p);
    if (st < 0) return;
    for (int bit = 0; bit < 5; bit++) /* acknowledge every change: connection, enable, ..., reset */
        if (st & (HUB_CHANGE_CONNECTION << bit)) port_feature(hub, 0x01, FEATURE_C_PORT_CONNECTION + bit, p);
    int connected = (st & HUB_STATUS_CONNECTED) != 0, changed = (st & HUB_CHANGE_CONNECTION) != 0;
    struct usb_device *child = usb_child(hub->hc, hub, p);
    if (child && (!connected || changed)) {
        kprintf("usb: device on hub port %d (slot %d) unplugged\n", p, child->slot);
        usb_detach(child);
        child = 0;
    }
    if (changed) hub->hub_failed &= ~(1u << p);
    if (!connected || child || (hub->hub_failed & (1u << p))) return;
    if (changed) timer_sleep_us(DEBOUNCE_US);
    if (attach(hub, p) < 0) hub->hub_failed |= 1u << p;
}

void usb_hub_service(struct usb_device *hub) {
    for (int p = 1; p <= hub->hub_ports && hub->in_use; p++) {
        if (!(hub->hub_pending & (1u << p))) continue;
        hub->hub_pending &= ~(1u << p);
        service_port(hub, p);
    }
}
