/* fuzz_boot_config.c - the loader's boot.cfg parser (boot/config_parse.c)
 * over arbitrary bytes (no terminator). The first byte picks the size of the
 * kernel command line it fills (1-256; the loader's is BOOT_CMDLINE_MAX). */
#include <stdint.h>

#include "boot/config_parse.h"
#include "tests/fuzz/fuzz_common.h"

struct warnings {
    int count, too_long, last_line;
};

static void on_warning(enum config_warning what, int line, void *ctx) {
    struct warnings *w = ctx;
    FUZZ_ASSERT(what >= CONFIG_WARN_NOT_A_PAIR && what <= CONFIG_WARN_NUL, "unknown warning");
    FUZZ_ASSERT(line > 0 && line >= w->last_line, "warning lines out of order");
    if (what == CONFIG_WARN_TOO_LONG) FUZZ_ASSERT(++w->too_long == 1, "too-long warned twice");
    w->last_line = line;
    w->count++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t cmdline_max = (size_t)data[0] + 1;
    size_t len = size - 1;
    char *text = malloc(len ? len : 1);
    memcpy(text, data + 1, len);
    char *cmdline = malloc(cmdline_max);
    memset(cmdline, 0x55, cmdline_max);

    struct boot_config cfg;
    config_defaults(&cfg);
    struct warnings w = {0};
    config_parse(text, len, &cfg, cmdline, cmdline_max, on_warning, &w);

    const char *nul = memchr(cmdline, '\0', cmdline_max);
    FUZZ_ASSERT(nul != NULL, "cmdline not terminated");
    /* Whole "key=value\n" lines, keys never empty, never the loader's own. */
    for (const char *line = cmdline; line < nul;) {
        const char *eol = memchr(line, '\n', (size_t)(nul - line));
        FUZZ_ASSERT(eol != NULL, "cmdline ends inside a line");
        const char *eq = memchr(line, '=', (size_t)(eol - line));
        FUZZ_ASSERT(eq != NULL && eq > line, "cmdline line without key=");
        FUZZ_ASSERT(!(eq - line == 7 && !memcmp(line, "ramdisk", 7)), "ramdisk= passed to the kernel");
        line = eol + 1;
    }
    const char *name_end = memchr(cfg.ramdisk, '\0', sizeof cfg.ramdisk);
    FUZZ_ASSERT(name_end != NULL && name_end > cfg.ramdisk, "ramdisk name empty or not terminated");
    for (const char *p = cfg.ramdisk; p < name_end; p++) {
        FUZZ_ASSERT(*p > ' ' && *p < 0x7f, "ramdisk name holds a space or control byte");
        FUZZ_ASSERT(!(p[0] == '.' && p[1] == '.'), "ramdisk name climbs out with ..");
    }
    FUZZ_ASSERT(cfg.video_width <= 99999 && cfg.video_height <= 99999, "video size past 5 digits");
    FUZZ_ASSERT((cfg.video_width == 0) == (cfg.video_height == 0), "video with one side only");
    free(cmdline);
    free(text);
    return 0;
}
