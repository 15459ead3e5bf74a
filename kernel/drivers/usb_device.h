/* usb_device.h - the USB devices the kernel knows, shared by usb.c (root
 * ports, polling, unplug), usb_enumerate.c (descriptors, keyboards) and
 * usb_hub.c (hub ports). A device lives in one table entry from its
 * enumeration until it is unplugged (usb_detach), and knows its parent hub,
 * so unplugging a hub takes everything behind it. */
#ifndef KERNEL_USB_DEVICE_H
#define KERNEL_USB_DEVICE_H

#include <stdint.h>
#include "kernel/drivers/usb_descriptors.h"
#include "kernel/drivers/xhci.h"

#define USB_MAX_DEVICES 32
#define USB_MAX_HUB_DEPTH 5

struct usb_device {
    int in_use;
    struct xhci *hc;
    int slot, speed, root_port, depth;
    uint32_t route;
    int tt_slot, tt_port;
    struct usb_device *parent; /* NULL: on a root port */
    int parent_port;           /* port of the parent hub (or the root port) */
    /* An interrupt IN endpoint we keep a transfer queued on (keyboard
     * reports, or a hub's port-change bitmap); dci 0 = none. */
    int dci, dead;
    int max_packet;
    uint8_t *buffer;
    uint64_t buffer_phys;
    int keyboard; /* usb_hid_keyboard index, -1: not a keyboard */
    int is_hub, hub_ports;
    uint32_t hub_pending; /* hub ports to look at, bit p for port p */
    uint32_t hub_failed;  /* hub ports whose device failed: not retried until replugged */
};

/* A free table entry, zeroed (keyboard = -1), or NULL when the table is full. */
struct usb_device *usb_device_new(void);
/* Takes dev (a reset, enabled port's device: speed, route, root_port,
 * parent, tt set) through addressing, descriptors and configuration, and
 * binds a keyboard or sets up a hub. Returns 0, or -1 after releasing dev. */
int usb_enumerate(struct usb_device *dev);
/* Releases dev and everything behind it (children first): keyboards stop,
 * slots are disabled, memory is freed. */
void usb_detach(struct usb_device *dev);
/* The device on port `port` of hub `parent` (NULL: root port of hc), or NULL. */
struct usb_device *usb_child(struct xhci *hc, struct usb_device *parent, int port);

/* usb_hub.c: sets up a configured hub (its port count, port power, the
 * status-change endpoint described by endpoint/max_packet/interval) and
 * marks every port for a look; 0 or -1. */
int usb_hub_setup(struct usb_device *hub, uint8_t endpoint, int max_packet, int interval);
/* Handles the hub's pending ports: unplugged devices are detached, new ones
 * reset and enumerated. */
void usb_hub_service(struct usb_device *hub);
/* A completed transfer on the hub's status-change endpoint. */
void usb_hub_on_change(struct usb_device *hub, int code, uint32_t residual);

#endif
