/* config_parse.h - boot.cfg parsed as a pure function over its bytes: no
 * UEFI calls, so the same file builds into the fuzz harness
 * tests/fuzz/fuzz_boot_config.c. Warnings go to a callback (config.c logs
 * them). */
#ifndef BOOT_CONFIG_PARSE_H
#define BOOT_CONFIG_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#define BOOT_CFG_NAME_MAX 128
struct boot_config {
    char ramdisk[BOOT_CFG_NAME_MAX]; /* file name on the volume */
    bool ramdisk_explicit;           /* named in boot.cfg: missing means error */
    /* video=WxH: that GOP mode; video=max: the largest (both at most
     * 3840x2160); absent: the firmware's current mode when usable. */
    uint32_t video_width, video_height;
    bool video_max;
};

enum config_warning {
    CONFIG_WARN_NOT_A_PAIR,   /* a line that is not key=value: ignored */
    CONFIG_WARN_RAMDISK_NAME, /* ramdisk= not a plain relative path: ignored */
    CONFIG_WARN_VIDEO,        /* video= neither WIDTHxHEIGHT nor max: ignored */
    CONFIG_WARN_TOO_LONG,     /* cmdline full: this line and the rest dropped (once) */
    CONFIG_WARN_NUL,          /* a line holding a NUL byte: ignored */
};
typedef void config_warn_fn(enum config_warning what, int line, void *ctx);

void config_defaults(struct boot_config *cfg);
/* Parses key=value lines of text[0, len); `ramdisk` and `video` are
 * consumed, every other pair goes to cmdline as "key=value\n" (whole lines
 * only, NUL-terminated within cmdline_max >= 1 bytes). */
void config_parse(const char *text, uint64_t len, struct boot_config *cfg, char *cmdline,
                  uint64_t cmdline_max, config_warn_fn *warn, void *ctx);

#endif
