/* usb_descriptors.h - USB descriptors (device, configuration with its
 * interfaces and endpoints, hub) read as pure functions over the bytes a
 * device sent: no controller access, so the same file builds into the fuzz
 * harness tests/fuzz/fuzz_usb_descriptors.c. Every length is checked against
 * the buffer; a device's claims never send a read past what it sent. */
#ifndef KERNEL_USB_DESCRIPTORS_H
#define KERNEL_USB_DESCRIPTORS_H

#include <stdint.h>

#define USB_CONFIG_MAX_BYTES 1024 /* the most of a configuration descriptor we fetch */
#define USB_HUB_MAX_PORTS 15

/* The first 8 bytes of the device descriptor: EP0's max packet size for a
 * device of this speed (super: 2^bMaxPacketSize0), 0 when it names none. */
int usb_device_max_packet0(const uint8_t *d, int len, int super_speed);

/* The whole device descriptor (18 bytes). */
struct usb_device_facts {
    uint8_t device_class;
    uint16_t vendor, product;
};
/* 0, or -1 when len < 18. */
int usb_parse_device(const uint8_t *d, int len, struct usb_device_facts *f);

/* The bytes to fetch for the whole configuration descriptor (wTotalLength,
 * at most USB_CONFIG_MAX_BYTES), from its first 9; 0 when len < 9. */
int usb_config_total_length(const uint8_t *p, int len);

/* What the configuration descriptor says. */
struct usb_config_facts {
    uint8_t value;
    int is_hub;
    int keyboard_interface; /* -1: none */
    /* The interrupt IN endpoint to drive: the keyboard's, or the hub's. */
    uint8_t endpoint;
    int max_packet, interval;
};
/* Walks the descriptors in p[0, length): the first HID boot keyboard
 * interface or hub interface with an interrupt IN endpoint. A descriptor
 * shorter than 2 bytes or running past length ends the walk. */
void usb_parse_config(const uint8_t *p, int length, struct usb_config_facts *f);

/* A hub descriptor (USB 2 0x29 or USB 3 0x2a, same leading fields). */
struct usb_hub_facts {
    int ports;       /* at most USB_HUB_MAX_PORTS */
    int power_on_ms; /* bPwrOn2PwrGood * 2 */
    int think_time;  /* TT think time field, 0-3 */
};
/* 0, or -1 when len < 7. */
int usb_parse_hub(const uint8_t *p, int len, struct usb_hub_facts *f);

#endif
