/* usb.h - USB support: finds xHCI controllers on PCI, starts them and
 * enumerates their devices (through hubs) lazily from the console's input
 * poll, so the prompt never waits for port resets. Boot keyboards found
 * become a console input source. */
#ifndef KERNEL_USB_H
#define KERNEL_USB_H

/* Call after pci_init. Starts the controllers (fast) and registers the
 * USB console input; device enumeration runs later, one port per poll. */
void usb_init(void);

#endif
