/* fuzz_usb_descriptors.c - the USB descriptor parsers
 * (kernel/drivers/usb_descriptors.c) over what a device could send: the
 * input is copied into a buffer of exactly its size, so ASan sees any read a
 * device's lengths could cause past the bytes it sent. */
#include <stdint.h>

#include "kernel/drivers/usb_descriptors.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > USB_CONFIG_MAX_BYTES) return 0; /* the kernel never fetches more */
    uint8_t *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    int len = (int)size;

    for (int super = 0; super < 2; super++) {
        int mps = usb_device_max_packet0(buf, len, super);
        FUZZ_ASSERT(mps >= 0 && mps <= 32768, "max packet size out of range");
    }
    struct usb_device_facts dev;
    FUZZ_ASSERT((usb_parse_device(buf, len, &dev) == 0) == (len >= 18), "device descriptor length check");

    int total = usb_config_total_length(buf, len);
    FUZZ_ASSERT(total >= 0 && total <= USB_CONFIG_MAX_BYTES, "configuration length out of range");

    struct usb_config_facts cfg;
    usb_parse_config(buf, len, &cfg);
    FUZZ_ASSERT(cfg.keyboard_interface >= -1 && cfg.keyboard_interface <= 255,
                "interface number out of range");
    FUZZ_ASSERT(cfg.endpoint == 0 || (cfg.endpoint & 0x80), "endpoint chosen that is not IN");
    FUZZ_ASSERT(cfg.max_packet >= 0 && cfg.max_packet <= 0x7ff, "endpoint max packet out of range");
    FUZZ_ASSERT(cfg.keyboard_interface < 0 || cfg.endpoint, "keyboard without its endpoint");

    struct usb_hub_facts hub;
    if (usb_parse_hub(buf, len, &hub) == 0) {
        FUZZ_ASSERT(hub.ports >= 0 && hub.ports <= USB_HUB_MAX_PORTS, "hub port count out of range");
        FUZZ_ASSERT(hub.think_time >= 0 && hub.think_time <= 3, "think time out of range");
    }
    free(buf);
    return 0;
}
