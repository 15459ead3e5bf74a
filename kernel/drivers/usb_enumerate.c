/* usb_enumerate.c - one new USB device: Address Device, the device and
 * configuration descriptors, SET_CONFIGURATION, then a HID boot keyboard
 * bound to the console or a hub handed to usb_hub.c. A device that fails is
 * released with a one-line message; the rest keeps working. */
#include "kernel/drivers/usb_device.h"
#include "kernel/drivers/usb_descriptors.h"
#include "kernel/console/console.h"
#include "kernel/drivers/usb_hid_keyboard.h"
#include "kernel/mm/memory.h"
#include "lib/string.h"

static int bind_keyboard(struct usb_device *dev, const struct usb_config_facts *f) {
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
    int reported = usb_device_max_packet0(hc->bounce, 8, dev->speed == USB_SPEED_SUPER);
    if (reported >= 8 && reported != mps0 && xhci_set_max_packet0(hc, slot, reported) < 0) {
        kprintf("usb: cannot update EP0 max packet size\n");
        goto fail;
    }
    struct usb_device_facts device;
    int got = xhci_control(hc, slot, 0x80, 0x06, 0x0100, 0, 18);
    if (usb_parse_device(hc->bounce, got, &device) < 0) goto fail;
    got = xhci_control(hc, slot, 0x80, 0x06, 0x0200, 0, 9);
    int total = usb_config_total_length(hc->bounce, got);
    if (total < 9) goto fail;
    got = xhci_control(hc, slot, 0x80, 0x06, 0x0200, 0, (uint16_t)total);
    if (got < 9) goto fail;
    struct usb_config_facts facts;
    usb_parse_config(hc->bounce, got, &facts);
    if (device.device_class == 9) facts.is_hub = 1;
    kprintf("usb: device %04x:%04x on port %d (route 0x%x, speed %d, slot %d)\n", device.vendor,
            device.product, dev->root_port, dev->route, dev->speed, slot);
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
