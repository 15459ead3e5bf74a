/* usb.c - USB on xHCI: finds and starts the controllers, keeps the table of
 * devices, and watches the root ports. Work runs from the console input
 * poll, one step per poll, so boot reaches the prompt first: at start every
 * root port is looked at once; later a port is looked at again when the
 * controller reports a Port Status Change event, or when a periodic check
 * of PORTSC finds a change the events missed. A device that went away is
 * detached (with everything behind it, if it was a hub); a new one is reset
 * and enumerated (usb_enumerate.c, hubs in usb_hub.c). So keyboards work
 * whenever they are plugged in, also when their link comes up late. */
#include "kernel/drivers/usb.h"
#include "kernel/console/console.h"
#include "kernel/drivers/pci.h"
#include "kernel/drivers/timer.h"
#include "kernel/drivers/usb_device.h"
#include "kernel/drivers/usb_hid_keyboard.h"
#include "kernel/mm/memory.h"
#include "lib/string.h"

#define MAX_CONTROLLERS 2
#define PORT_CHECK_INTERVAL_NS 500000000ull /* the fallback PORTSC look */
#define DEBOUNCE_US 100000

static struct xhci controllers[MAX_CONTROLLERS];
static int controller_count;
static uint64_t root_failed[MAX_CONTROLLERS]; /* ports whose device failed, until replugged */
static uint64_t next_port_check_ns;
static int initial_scan_reported;
static struct usb_device devices[USB_MAX_DEVICES];

struct usb_device *usb_device_new(void) {
    for (int i = 0; i < USB_MAX_DEVICES; i++) {
        if (devices[i].in_use) continue;
        memset(&devices[i], 0, sizeof devices[i]);
        devices[i].in_use = 1;
        devices[i].keyboard = -1;
        return &devices[i];
    }
    return 0;
}

struct usb_device *usb_child(struct xhci *hc, struct usb_device *parent, int port) {
    for (int i = 0; i < USB_MAX_DEVICES; i++) {
        struct usb_device *d = &devices[i];
        if (d->in_use && d->hc == hc && d->parent == parent && d->parent_port == port) return d;
    }
    return 0;
}

void usb_detach(struct usb_device *dev) {
    if (!dev->in_use) return;
    for (int i = 0; i < USB_MAX_DEVICES; i++)
        if (devices[i].in_use && devices[i].parent == dev) usb_detach(&devices[i]);
    if (dev->keyboard >= 0) {
        usb_keyboard_remove(dev->keyboard);
        kprintf("usb: keyboard on slot %d removed\n", dev->slot);
    }
    if (dev->slot > 0) xhci_disable_slot(dev->hc, dev->slot); /* also frees its rings */
    if (dev->buffer_phys) page_free(dev->buffer_phys, 1);
    memset(dev, 0, sizeof *dev);
}

static struct usb_device *device_on_endpoint(struct xhci *hc, int slot, int dci) {
    for (int i = 0; i < USB_MAX_DEVICES; i++) {
        struct usb_device *d = &devices[i];
        if (d->in_use && d->hc == hc && d->slot == slot && d->dci == dci && !d->dead) return d;
    }
    return 0;
}

static void on_transfer(struct xhci *hc, int slot, int dci, int code, uint32_t residual) {
    struct usb_device *d = device_on_endpoint(hc, slot, dci);
    if (!d) return; /* a late event for a device already detached */
    if (d->is_hub) {
        usb_hub_on_change(d, code, residual);
    } else if (code == XHCI_CC_SUCCESS || code == XHCI_CC_SHORT_PACKET) {
        if (residual == 0) usb_keyboard_report(d->keyboard, d->buffer);
        xhci_queue_transfer(hc, slot, dci, d->buffer_phys, 8);
    } else {
        kprintf("usb: keyboard on slot %d stopped (completion code %d)\n", slot, code);
        d->dead = 1;
    }
}

/* Looks at root port `port`: detaches what left, enumerates what came. */
static void service_root_port(int index, int port) {
    struct xhci *hc = &controllers[index];
    uint32_t sc = xhci_port_take_changes(hc, port);
    int connected = (sc & 1) != 0, changed = (sc & (1u << 17)) != 0; /* CCS, CSC */
    uint64_t bit = 1ull << (port - 1);
    struct usb_device *dev = usb_child(hc, 0, port);
    if (dev && (!connected || changed)) {
        kprintf("usb: device on port %d (slot %d) unplugged\n", port, dev->slot);
        usb_detach(dev);
        dev = 0;
    }
    if (changed) root_failed[index] &= ~bit;
    if (!connected || dev || (root_failed[index] & bit)) return;
    if (changed && initial_scan_reported) timer_sleep_us(DEBOUNCE_US);
    int speed = xhci_port_reset(hc, port);
    if (!speed) {
        root_failed[index] |= bit;
        return;
    }
    dev = usb_device_new();
    if (!dev) {
        kprintf("usb: too many devices, port %d ignored\n", port);
        root_failed[index] |= bit;
        return;
    }
    dev->hc = hc;
    dev->speed = speed;
    dev->root_port = port;
    dev->parent_port = port;
    if (usb_enumerate(dev) < 0) root_failed[index] |= bit;
}

/* The fallback for missed events: a root port whose connection differs from
 * what we hold (and has not failed), or that shows a connect change. */
static void check_root_ports(int index) {
    struct xhci *hc = &controllers[index];
    for (int port = 1; port <= (int)hc->max_ports; port++) {
        uint32_t sc = xhci_port_status(hc, port); /* the change bits stay for service_root_port */
        int connected = (sc & 1) != 0, changed = (sc & (1u << 17)) != 0;
        int held = usb_child(hc, 0, port) != 0;
        if (changed) root_failed[index] &= ~(1ull << (port - 1));
        if (changed || (connected != held && !(root_failed[index] & (1ull << (port - 1)))))
            hc->port_changed |= 1ull << (port - 1);
    }
}

/* One piece of work: a root port, or a hub's changed ports. 1 if it did any. */
static int usb_step(void) {
    for (int i = 0; i < controller_count; i++) {
        struct xhci *hc = &controllers[i];
        if (!hc->port_changed) continue;
        int port = __builtin_ctzll(hc->port_changed) + 1;
        hc->port_changed &= ~(1ull << (port - 1));
        service_root_port(i, port);
        return 1;
    }
    for (int i = 0; i < USB_MAX_DEVICES; i++) {
        if (!devices[i].in_use || !devices[i].hub_pending) continue;
        usb_hub_service(&devices[i]);
        return 1;
    }
    return 0;
}

static int usb_poll_key(void) {
    for (int i = 0; i < controller_count; i++) xhci_poll(&controllers[i]);
    if (!usb_step()) {
        if (!initial_scan_reported) {
            initial_scan_reported = 1;
            uint64_t dma_highest = 0;
            for (int i = 0; i < controller_count; i++)
                if (controllers[i].dma_highest > dma_highest) dma_highest = controllers[i].dma_highest;
            kprintf("usb: enumeration done at uptime %lu ms, DMA pages up to 0x%lx\n",
                    (unsigned long)timer_ms(), (unsigned long)dma_highest);
        }
        uint64_t now = timer_ns();
        if (now >= next_port_check_ns) {
            next_port_check_ns = now + PORT_CHECK_INTERVAL_NS;
            for (int i = 0; i < controller_count; i++) check_root_ports(i);
        }
    }
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
        kprintf("usb: xHCI %02x:%02x.%x running, %u ports, %u slots, DMA pages up to 0x%lx (%lu us)\n",
                d->bus, d->slot, d->func, hc->max_ports, hc->max_slots, (unsigned long)hc->dma_highest,
                (unsigned long)((timer_ns() - start) / 1000));
        /* Every root port is looked at once; then on events. */
        hc->port_changed = hc->max_ports >= 64 ? ~0ull : (1ull << hc->max_ports) - 1;
        controller_count++;
    }
    if (controller_count) console_register_input(usb_poll_key);
}
