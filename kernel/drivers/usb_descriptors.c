/* usb_descriptors.c - USB descriptors as pure functions over bytes
 * (usb_descriptors.h). */
#include "kernel/drivers/usb_descriptors.h"

static void clear(void *p, unsigned long n) {
    for (unsigned char *b = p; n; n--) *b++ = 0;
}

int usb_device_max_packet0(const uint8_t *d, int len, int super_speed) {
    if (len < 8) return 0;
    int reported = d[7];
    if (super_speed) reported = reported < 16 ? 1 << reported : 512;
    return reported;
}

int usb_parse_device(const uint8_t *d, int len, struct usb_device_facts *f) {
    if (len < 18) return -1;
    f->device_class = d[4];
    f->vendor = (uint16_t)(d[8] | (d[9] << 8));
    f->product = (uint16_t)(d[10] | (d[11] << 8));
    return 0;
}

int usb_config_total_length(const uint8_t *p, int len) {
    if (len < 9) return 0;
    int total = p[2] | (p[3] << 8);
    return total > USB_CONFIG_MAX_BYTES ? USB_CONFIG_MAX_BYTES : total;
}

void usb_parse_config(const uint8_t *p, int length, struct usb_config_facts *f) {
    clear(f, sizeof *f);
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

int usb_parse_hub(const uint8_t *p, int len, struct usb_hub_facts *f) {
    if (len < 7) return -1;
    f->ports = p[2] > USB_HUB_MAX_PORTS ? USB_HUB_MAX_PORTS : p[2];
    f->power_on_ms = p[5] * 2;
    f->think_time = (p[3] >> 5) & 3;
    return 0;
}
