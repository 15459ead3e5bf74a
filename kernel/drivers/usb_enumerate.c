/* usb_enumerate.c - one new USB device: Address Device, the device and
 * configuration descriptors, SET_CONFIGURATION, then a HID boot keyboard
 * bound to the console or a hub handed to usb_hub.c. A device that fails is
 * released with a one-line message; the rest keeps working. */
#include "kernel/drivers/usb_device.h"
#include "kernel/console/console.h"
#include "kernel/drivers/usb_hid_keyboard.h"
#include "kernel/mm/memory.h"
#include "lib/string.h"

/* What the configuration descriptor says. */
struct config_facts {
    uint8_t value;
    int is_hub;
    int keyboard_interface; /* -1: none */
    /* The interrupt IN endpoint to drive: the keyboard's, or the hub's. */
    uint8_t endpoint;
    int max_packet, interval;
};

static void parse_config(const uint8_t *p, int length, struct config_facts *f) {
    memset(f, 0, sizeof *f);
    f->keyboard_interface = -1;
    int current_interface = -1, current_is_keyboard = 0, current_is_hub = 0;
    for (int off = 0; off + 2 <= length;) {
        int len = p[off], type = p[off + 1];
        if (len < 2 || off + len > length) break;
        if (type == 2 && len >= 6) {
            f->value = p[off + 5];
        } else if (type == 4 && len >= 9) {
            current_interface = p[off + 2];
            current_is_keyboard = p[off + 5] == 3 && p[off + 6] == 1 && p[off + 7] == 1;
            current_is_hub = p[off + 5] == 9;
            if (current_is_hub) f->is_hub = 1;
        } else if (type == 5 && len >= 7 && (current_is_keyboard || current_is_hub) && !f->endpoint) {
            uint8_t address = p[off + 2], attributes = p[off + 3];
            if ((address & 0x80) && (attributes & 3) == 3) {
                if (current_is_keyboard) f->keyboard_interface = current_interface;
                f->endpoint = address;
                f->max_packet = (p[off + 4] | (p[off + 5] << 8)) & 0x7ff;
                f->interval = p[off + 6];
            }
        }
        off += len;
    }
}

static int bind_keyboard(struct usb_device *dev, const struct config_facts *f) {
    struct xhci *hc = dev->hc;
    uint16_t iface = (uint16_t)f->keyboard_interface;
    if (xhci_control(hc, dev->slot, 0x21, 0x0b, 0, iface, 0) < 0) /* SET_PROTOCOL boot */
        kprintf("usb: keyboard refused SET_PROTOCOL(boot), using it anyway\n");
    xhci_control(hc, dev->slot, 0x21, 0x0a, 0, iface, 0); /* SET_IDLE 0: reports on change only (may stall) */
    int dci = xhci_configure_interrupt_in(hc, dev->slot, dev->speed, f->endpoint,
                                          f->max_packet ? f->max_packet : 8, f->interval);
    if (dci < 0) {
        kprintf("usb: cannot set up the keyboard's interrupt endpoint\n");
        return -1;
    }
    dev->buffer_phys = xhci_alloc_page(hc);
    dev->keyboard = dev->buffer_phys ? usb_keyboard_add() : -1;
    if (dev->keyboard < 0) {
        kprintf("usb: no room for another keyboard\n");
        return -1;
    }
    dev->buffer = phys_to_virt(dev->buffer_phys);
    dev->max_packet = 8;
    dev->dci = dci;
    xhci_queue_transfer(hc, dev->slot, dci, dev->buffer_phys, 8);
    kprintf("usb: keyboard ready (port %d, route 0x%x, slot %d)\n", dev->root_port, dev->route, dev->slot);
    return 0;
}

int usb_enumerate(struct usb_device *dev) {
    struct xhci *hc = dev->hc;
    int slot = xhci_enable_slot(hc);
    if (slot < 0) {
        usb_detach(dev);
        return -1;
    }
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
    if (!facts.is_hub && facts.keyboard_interface < 0) return 0; /* keep its slot, nothing to drive */
    if (xhci_control(hc, slot, 0x00, 0x09, facts.value, 0, 0) < 0) {
        kprintf("usb: SET_CONFIGURATION failed on slot %d\n", slot);
        goto fail;
    }
    int rc = facts.is_hub ? usb_hub_setup(dev, facts.endpoint, facts.max_packet, facts.interval)
                          : bind_keyboard(dev, &facts);
    if (rc == 0) return 0;
fail:
    kprintf("usb: giving up on the device on port %d (route 0x%x)\n", dev->root_port, dev->route);
    usb_detach(dev);
    return -1;
}
