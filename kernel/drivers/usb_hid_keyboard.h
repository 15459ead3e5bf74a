/* usb_hid_keyboard.h - decoding of USB HID boot-protocol keyboard reports
 * into console key codes, with key repeat driven by polling time. Knows
 * nothing about the controller: usb.c feeds it reports. */
#ifndef KERNEL_USB_HID_KEYBOARD_H
#define KERNEL_USB_HID_KEYBOARD_H

#include <stdint.h>

#define USB_KEYBOARD_MAX 4

/* A new keyboard: returns its index, or -1 when there are too many. */
int usb_keyboard_add(void);
/* The keyboard was unplugged: its index is free again, nothing repeats. */
void usb_keyboard_remove(int index);
/* One 8-byte boot report (modifiers, reserved, six key usages). */
void usb_keyboard_report(int keyboard, const uint8_t report[8]);
/* Next key from any USB keyboard (queued or repeated), KEY_NONE if none. */
int usb_keyboard_next_key(void);

#endif
