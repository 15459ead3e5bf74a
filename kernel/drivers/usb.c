/* usb.c - USB enumeration on xHCI: root ports, hubs (one or more tiers),
 * descriptors, and binding of HID boot keyboards. The work is split into
 * steps (one root port each) run from the console input poll, so boot
 * reaches the prompt first; any device that fails is skipped with a one-line
 * message and the rest keeps working. */
#include "kernel/drivers/usb.h"
#include "kernel/console/console.h"
#include "kernel/mm/memory.h"
#include "kernel/drivers/pci.h"
#include "kernel/drivers/timer.h"
#include "kernel/drivers/usb_hid_keyboard.h"
#include "kernel/drivers/xhci.h"
#include "lib/string.h"

#define MAX_CONTROLLERS 2
#define MAX_BOUND_KEYBOARDS USB_KEYBOARD_MAX
#define MAX_HUB_DEPTH 5

static struct xhci controllers[MAX_CONTROLLERS];
static int controller_count;
static int next_controller, next_port = 1; /* enumeration cursor */
static int enumeration_done;

struct bound_keyboard {
    struct xhci *hc;
    int slot, dci, index;
    uint8_t *buffer;
    uint64_t buffer_phys;
    int dead;
};
static struct bound_keyboard bound[MAX_BOUND_KEYBOARDS];
static int bound_count;

struct usb_device {
    struct xhci *hc;
    int slot, speed, root_port, depth;
    uint32_t route;
    int tt_slot, tt_port;
};

/* What the configuration descriptor says. */
struct config_facts {
    uint8_t value;
    int is_hub;
    int keyboard_interface; /* -1: none */
    uint8_t keyboard_endpoint;
    int keyboard_max_packet, keyboard_interval;
};

static void enumerate(struct usb_device *dev);

static void on_transfer(struct xhci *hc, int slot, int dci, int code, uint32_t residual) {
    for (int i = 0; i < bound_count; i++) {
        struct bound_keyboard *k = &bound[i];
        if (k->hc != hc || k->slot != slot || k->dci != dci || k->dead) continue;
        if (code == XHCI_CC_SUCCESS || code == XHCI_CC_SHORT_PACKET) {
            if (residual == 0) usb_keyboard_report(k->index, k->buffer);
            xhci_queue_transfer(hc, slot, dci, k->buffer_phys, 8);
        } else {
            kprintf("usb: keyboard on slot %d stopped (completion code %d)\n", slot, code);
            k->dead = 1;
        }
        return;
    }
}

static void parse_config(const uint8_t *p, int length, struct config_facts *f) {
    memset(f, 0, sizeof *f);
    f->keyboard_interface = -1;
    int current_interface = -1, current_is_keyboard = 0;
    for (int off = 0; off + 2 <= length;) {
        int len = p[off], type = p[off + 1];
        if (len < 2 || off + len > length) break;
        if (type == 2 && len >= 6) {
            f->value = p[off + 5];
        } else if (type == 4 && len >= 9) {
            current_interface = p[off + 2];
            current_is_keyboard = p[off + 5] == 3 && p[off + 6] == 1 && p[off + 7] == 1;
            if (p[off + 5] == 9) f->is_hub = 1;
        } else if (type == 5 && len >= 7 && current_is_keyboard && f->keyboard_interface < 0) {
            uint8_t address = p[off + 2], attributes = p[off + 3];
            if ((address & 0x80) && (attributes & 3) == 3) {
                f->keyboard_interface = current_interface;
                f->keyboard_endpoint = address;
                f->keyboard_max_packet = (p[off + 4] | (p[off + 5] << 8)) & 0x7ff;
                f->keyboard_interval = p[off + 6];
            }
        }
        off += len;
    }
}

static void bind_keyboard(struct usb_device *dev, const struct config_facts *f) {
    struct xhci *hc = dev->hc;
    uint16_t iface = (uint16_t)f->keyboard_interface;
    if (xhci_control(hc, dev->slot, 0x21, 0x0b, 0, iface, 0) < 0) /* SET_PROTOCOL boot */
        kprintf("usb: keyboard refused SET_PROTOCOL(boot), using it anyway\n");
    xhci_control(hc, dev->slot, 0x21, 0x0a, 0, iface, 0); /* SET_IDLE 0: reports on change only (may stall) */
    int dci = xhci_configure_interrupt_in(hc, dev->slot, dev->speed, f->keyboard_endpoint,
                                          f->keyboard_max_packet ? f->keyboard_max_packet : 8,
                                          f->keyboard_interval);
    if (dci < 0 || bound_count >= MAX_BOUND_KEYBOARDS) {
        kprintf("usb: cannot set up the keyboard's interrupt endpoint\n");
        return;
    }
    uint64_t phys = page_alloc(1);
    int index = phys ? usb_keyboard_add() : -1;
    if (index < 0) {
        kprintf("usb: no room for another keyboard\n");
        if (phys) page_free(phys, 1);
        return;
    }
    struct bound_keyboard *k = &bound[bound_count++];
    k->hc = hc;
    k->slot = dev->slot;
    k->dci = dci;
    k->index = index;
    k->buffer_phys = phys;
    k->buffer = phys_to_virt(phys);
    memset(k->buffer, 0, 8);
    xhci_queue_transfer(hc, dev->slot, dci, phys, 8);
    kprintf("usb: keyboard ready (port %d, route 0x%x, slot %d)\n", dev->root_port, dev->route, dev->slot);
}

/* Hub port status: wPortStatus | wPortChange << 16, or -1. */
static int64_t hub_port_status(struct usb_device *hub, int port) {
    if (xhci_control(hub->hc, hub->slot, 0xa3, 0x00, 0, (uint16_t)port, 4) != 4) return -1;
    const uint8_t *b = hub->hc->bounce;
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

static void setup_hub(struct usb_device *hub) {
    struct xhci *hc = hub->hc;
    int type = hub->speed == USB_SPEED_SUPER ? 0x2a : 0x29;
    if (xhci_control(hc, hub->slot, 0xa0, 0x06, (uint16_t)(type << 8), 0, 9) < 7) {
        kprintf("usb: hub on port %d: no hub descriptor\n", hub->root_port);
        return;
    }
    int ports = hc->bounce[2], power_on_ms = hc->bounce[5] * 2;
    int ttt = (hc->bounce[3] >> 5) & 3;
    if (ports > 15) ports = 15;
    if (xhci_configure_hub(hc, hub->slot, ports, ttt) < 0)
        kprintf("usb: hub on port %d: controller refused the hub context\n", hub->root_port);
    kprintf("usb: hub with %d ports (port %d, route 0x%x)\n", ports, hub->root_port, hub->route);
    if (hub->speed == USB_SPEED_SUPER || hub->depth >= MAX_HUB_DEPTH) {
        if (hub->speed == USB_SPEED_SUPER) kprintf("usb: USB3 hub ports are not enumerated\n");
        return;
    }
    for (int p = 1; p <= ports; p++)
        xhci_control(hc, hub->slot, 0x23, 0x03, 8, (uint16_t)p, 0); /* PORT_POWER */
    timer_sleep_us((uint64_t)(power_on_ms < 20 ? 20 : power_on_ms) * 1000);
    for (int p = 1; p <= ports; p++) {
        int64_t st = hub_port_status(hub, p);
        if (st < 0 || !(st & 1)) continue;
        xhci_control(hc, hub->slot, 0x23, 0x01, 16, (uint16_t)p, 0); /* clear C_PORT_CONNECTION */
        xhci_control(hc, hub->slot, 0x23, 0x03, 4, (uint16_t)p, 0);  /* PORT_RESET */
        uint64_t deadline = timer_ns() + 500000000ull;
        do {
            timer_sleep_us(2000);
            st = hub_port_status(hub, p);
        } while (st >= 0 && !(st & (1 << 20)) && timer_ns() < deadline);
        if (st < 0 || !(st & (1 << 20)) || !(st & 2)) {
            kprintf("usb: hub port %d did not come out of reset\n", p);
            continue;
        }
        xhci_control(hc, hub->slot, 0x23, 0x01, 20, (uint16_t)p, 0); /* clear C_PORT_RESET */
        timer_sleep_us(10000);                                       /* reset recovery */
        struct usb_device child = {.hc = hc, .root_port = hub->root_port, .depth = hub->depth + 1};
        child.speed = (st & (1 << 9)) ? USB_SPEED_LOW : (st & (1 << 10)) ? USB_SPEED_HIGH : USB_SPEED_FULL;
        child.route = hub->route | ((uint32_t)p << (hub->depth * 4));
        if (hub->speed == USB_SPEED_HIGH && child.speed != USB_SPEED_HIGH) {
            child.tt_slot = hub->slot;
            child.tt_port = p;
        } else {
            child.tt_slot = hub->tt_slot;
            child.tt_port = hub->tt_port;
        }
        enumerate(&child);
    }
}

static void enumerate(struct usb_device *dev) {
    struct xhci *hc = dev->hc;
    int slot = xhci_enable_slot(hc);
    if (slot < 0) return;
    dev->slot = slot;
    int mps0 = dev->speed == USB_SPEED_SUPER ? 512 : dev->speed == USB_SPEED_HIGH ? 64 : 8;
    struct xhci_device_info info = {.speed = dev->speed,
                                    .route = dev->route,
                                    .root_port = dev->root_port,
                                    .tt_slot = dev->tt_slot,
                                    .tt_port = dev->tt_port,
                                    .max_packet0 = mps0};
    if (xhci_address_device(hc, slot, &info) < 0) goto fail;
    if (xhci_control(hc, slot, 0x80, 0x06, 0x0100, 0, 8) < 8) {
        kprintf("usb: device on port %d does not answer GET_DESCRIPTOR\n", dev->root_port);
        goto fail;
    }
    int reported = hc->bounce[7];
    if (dev->speed == USB_SPEED_SUPER) reported = reported < 16 ? 1 << reported : 512;
    if (reported >= 8 && reported != mps0 && xhci_set_max_packet0(hc, slot, reported) < 0) {
        kprintf("usb: cannot update EP0 max packet size\n");
        goto fail;
    }
    if (xhci_control(hc, slot, 0x80, 0x06, 0x0100, 0, 18) < 18) goto fail;
    uint8_t device_class = hc->bounce[4];
    uint16_t vendor = hc->bounce[8] | (hc->bounce[9] << 8), product = hc->bounce[10] | (hc->bounce[11] << 8);
    if (xhci_control(hc, slot, 0x80, 0x06, 0x0200, 0, 9) < 9) goto fail;
    int total = hc->bounce[2] | (hc->bounce[3] << 8);
    if (total > 1024) total = 1024;
    int got = xhci_control(hc, slot, 0x80, 0x06, 0x0200, 0, (uint16_t)total);
    if (got < 9) goto fail;
    struct config_facts facts;
    parse_config(hc->bounce, got, &facts);
    if (device_class == 9) facts.is_hub = 1;
    kprintf("usb: device %04x:%04x on port %d (route 0x%x, speed %d, slot %d)\n", vendor, product,
            dev->root_port, dev->route, dev->speed, slot);
    if (!facts.is_hub && facts.keyboard_interface < 0) return; /* keep its slot, nothing to drive */
    if (xhci_control(hc, slot, 0x00, 0x09, facts.value, 0, 0) < 0) {
        kprintf("usb: SET_CONFIGURATION failed on slot %d\n", slot);
        goto fail;
    }
    if (facts.is_hub)
        setup_hub(dev);
    else
        bind_keyboard(dev, &facts);
    return;
fail:
    kprintf("usb: giving up on the device on port %d (route 0x%x)\n", dev->root_port, dev->route);
    xhci_disable_slot(hc, slot);
}

/* One enumeration step: the next root port of the current controller. */
static void enumeration_step(void) {
    if (next_controller >= controller_count) {
        enumeration_done = 1;
        kprintf("usb: enumeration done at uptime %lu ms\n", (unsigned long)timer_ms());
        return;
    }
    struct xhci *hc = &controllers[next_controller];
    int port = next_port++;
    if (next_port > (int)hc->max_ports) {
        next_controller++;
        next_port = 1;
    }
    if (!xhci_port_connected(hc, port)) return;
    int speed = xhci_port_reset(hc, port);
    if (!speed) return;
    struct usb_device dev = {.hc = hc, .speed = speed, .root_port = port};
    enumerate(&dev);
}

static int usb_poll_key(void) {
    if (!enumeration_done) enumeration_step();
    for (int i = 0; i < controller_count; i++) xhci_poll(&controllers[i]);
    return usb_keyboard_next_key();
}

void usb_init(void) {
    uint64_t start = timer_ns();
    for (int i = 0; i < pci_device_count() && controller_count < MAX_CONTROLLERS; i++) {
        const struct pci_device *d = pci_device_at(i);
        if (d->class_code != 0x0c || d->subclass != 0x03 || d->prog_if != 0x30) continue;
        struct xhci *hc = &controllers[controller_count];
        memset(hc, 0, sizeof *hc);
        hc->on_transfer = on_transfer;
        if (xhci_start(hc, d) < 0) {
            kprintf("usb: xHCI %02x:%02x.%x skipped\n", d->bus, d->slot, d->func);
            continue;
        }
        kprintf("usb: xHCI %02x:%02x.%x running, %u ports, %u slots (%lu us)\n", d->bus, d->slot, d->func,
                hc->max_ports, hc->max_slots, (unsigned long)((timer_ns() - start) / 1000));
        controller_count++;
    }
    if (controller_count)
        console_register_input(usb_poll_key);
    else
        enumeration_done = 1;
}
