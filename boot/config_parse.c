/* config_parse.c - boot.cfg: key=value lines, '#' comments, as a pure
 * function over the file's bytes (boot/config_parse.h).
 *
 * The loader consumes `ramdisk` and `video`; every other pair is for the kernel
 * and is passed through in boot_info.cmdline as "key=value\n".
 */
#include "boot/config_parse.h"

static const char DEFAULT_RAMDISK[] = "ramdisk.tar";

static bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\r';
}

static void trim(const char **start, const char **end) {
    while (*start < *end && is_space(**start)) (*start)++;
    while (*end > *start && is_space((*end)[-1])) (*end)--;
}

static void copy_bytes(char *dst, const char *src, uint64_t n) {
    while (n--) *dst++ = *src++;
}

static bool span_equals(const char *start, const char *end, const char *word) {
    for (; start < end; start++, word++) {
        if (*word == 0 || *start != *word) return false;
    }
    return *word == 0;
}

void config_defaults(struct boot_config *cfg) {
    copy_bytes(cfg->ramdisk, DEFAULT_RAMDISK, sizeof(DEFAULT_RAMDISK));
    cfg->ramdisk_explicit = false;
    cfg->video_width = cfg->video_height = 0;
    cfg->video_max = false;
}

/* A decimal number of 1-5 digits spanning [*p, end) up to `stop`. */
static bool parse_u32(const char **p, const char *end, char stop, uint32_t *out) {
    uint32_t v = 0;
    int digits = 0;
    for (; *p < end && **p != stop; (*p)++, digits++) {
        if (**p < '0' || **p > '9' || digits == 5) return false;
        v = v * 10 + (uint32_t)(**p - '0');
    }
    *out = v;
    return digits > 0 && v > 0;
}

/* "max" or WIDTHxHEIGHT. */
static bool parse_video(const char *start, const char *end, struct boot_config *cfg) {
    if (span_equals(start, end, "max")) {
        cfg->video_max = true;
        return true;
    }
    uint32_t w, h;
    const char *p = start;
    if (!parse_u32(&p, end, 'x', &w) || p == end) return false;
    p++;
    if (!parse_u32(&p, end, 0, &h)) return false;
    cfg->video_width = w;
    cfg->video_height = h;
    return true;
}

/* A ramdisk name must be a plain relative path on the volume. */
static bool ramdisk_name_ok(const char *start, const char *end) {
    if (end == start || end - start >= BOOT_CFG_NAME_MAX) return false;
    for (const char *p = start; p < end; p++) {
        if ((unsigned char)*p < 0x21 || (unsigned char)*p > 0x7e) return false;
        if (p[0] == '.' && p + 1 < end && p[1] == '.') return false;
    }
    return true;
}

void config_parse(const char *text, uint64_t len, struct boot_config *cfg, char *cmdline,
                  uint64_t cmdline_max, config_warn_fn *warn, void *ctx) {
    uint64_t used = 0;
    bool truncated = false;
    const char *end_of_text = text + len;
    int line_number = 0;
    cmdline[0] = 0;

    for (const char *line = text; line < end_of_text;) {
        const char *eol = line;
        while (eol < end_of_text && *eol != '\n') eol++;
        const char *next = eol < end_of_text ? eol + 1 : eol;
        line_number++;

        const char *start = line, *end = eol;
        trim(&start, &end);
        line = next;
        if (start == end || *start == '#') continue;

        /* The kernel reads cmdline as a C string: a NUL would hide every later pair. */
        bool has_nul = false;
        for (const char *p = start; p < end && !has_nul; p++) has_nul = *p == 0;
        if (has_nul) {
            warn(CONFIG_WARN_NUL, line_number, ctx);
            continue;
        }

        const char *eq = start;
        while (eq < end && *eq != '=') eq++;
        const char *key_end = eq;
        const char *value = eq + 1;
        trim(&start, &key_end);
        if (eq == end || key_end == start) {
            warn(CONFIG_WARN_NOT_A_PAIR, line_number, ctx);
            continue;
        }
        const char *value_end = end;
        if (value > value_end) value = value_end;
        trim(&value, &value_end);

        if (span_equals(start, key_end, "ramdisk")) {
            if (!ramdisk_name_ok(value, value_end)) {
                warn(CONFIG_WARN_RAMDISK_NAME, line_number, ctx);
                continue;
            }
            uint64_t n = (uint64_t)(value_end - value);
            copy_bytes(cfg->ramdisk, value, n);
            cfg->ramdisk[n] = 0;
            cfg->ramdisk_explicit = true;
            continue;
        }

        if (span_equals(start, key_end, "video")) {
            if (!parse_video(value, value_end, cfg)) warn(CONFIG_WARN_VIDEO, line_number, ctx);
            continue;
        }

        /* Whole lines only: a cut-off pair would mislead the kernel. */
        uint64_t key_len = (uint64_t)(key_end - start);
        uint64_t value_len = (uint64_t)(value_end - value);
        uint64_t need = key_len + 1 + value_len + 1;
        if (truncated || used + need + 1 > cmdline_max) {
            if (!truncated) warn(CONFIG_WARN_TOO_LONG, line_number, ctx);
            truncated = true;
            continue;
        }
        copy_bytes(cmdline + used, start, key_len);
        used += key_len;
        cmdline[used++] = '=';
        copy_bytes(cmdline + used, value, value_len);
        used += value_len;
        cmdline[used++] = '\n';
        cmdline[used] = 0;
    }
}
