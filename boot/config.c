/* config.c - boot.cfg through config_parse.c, its warnings on the log. */
#include "boot/loader.h"

static void log_warning(enum config_warning what, int line, void *ctx) {
    uint64_t cmdline_max = *(const uint64_t *)ctx;
    switch (what) {
    case CONFIG_WARN_NOT_A_PAIR:
        log_printf("loader: warning: boot.cfg line %d: expected key=value, ignored\n", line);
        break;
    case CONFIG_WARN_RAMDISK_NAME:
        log_printf("loader: warning: boot.cfg line %d: bad ramdisk name, ignored\n", line);
        break;
    case CONFIG_WARN_VIDEO:
        log_printf("loader: warning: boot.cfg line %d: video= wants WIDTHxHEIGHT or max, ignored\n", line);
        break;
    case CONFIG_WARN_NUL:
        log_printf("loader: warning: boot.cfg line %d holds a NUL byte, ignored\n", line);
        break;
    case CONFIG_WARN_TOO_LONG:
        log_printf("loader: warning: boot.cfg longer than %lu bytes, dropped from line %d on\n",
                   cmdline_max - 1, line);
        break;
    }
}

void config_read(const char *text, uint64_t len, struct boot_config *cfg, char *cmdline,
                 uint64_t cmdline_max) {
    config_parse(text, len, cfg, cmdline, cmdline_max, log_warning, &cmdline_max);
}
