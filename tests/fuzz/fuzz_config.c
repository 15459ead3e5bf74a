/* fuzz_config.c - the boot.cfg parser over arbitrary bytes (no terminator).
 * The first byte picks the size of the value buffer for config_get. */
#include <stdint.h>

#include "lib/config.h"
#include "tests/fuzz/fuzz_common.h"

struct walk {
    const char *start, *end;
    int lines;
};

static void on_pair(const char *key, size_t key_len, const char *value, size_t value_len, void *ctx) {
    struct walk *w = ctx;
    FUZZ_ASSERT(key_len > 0, "empty key");
    FUZZ_ASSERT(key >= w->start && key + key_len <= w->end, "key outside the text");
    FUZZ_ASSERT(value >= w->start && value + value_len <= w->end, "value outside the text");
    FUZZ_ASSERT(memchr(key, '\n', key_len) == NULL && memchr(value, '\n', value_len) == NULL,
                "key or value spans lines");
    FUZZ_ASSERT(memchr(key, '=', key_len) == NULL, "key holds '='");
    w->lines++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t value_size = data[0] % 40;
    char *text = malloc(size - 1 ? size - 1 : 1);
    memcpy(text, data + 1, size - 1);
    size_t len = size - 1;

    struct walk w = {text, text + len, 0};
    int first_bad = -1;
    int bad = config_each(text, len, on_pair, &w, &first_bad);
    FUZZ_ASSERT(bad >= 0, "negative bad-line count");
    FUZZ_ASSERT((bad == 0) == (first_bad == 0), "first_bad_line disagrees with the count");
    config_each(text, len, on_pair, &w, NULL);

    static const char *keys[] = {"model", "tokenizer", "ramdisk", "", "a b", "=", "#"};
    char value[40 + 8];
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        memset(value, 0x55, sizeof value);
        int rc = config_get(text, len, keys[k], value_size ? value : NULL, value_size);
        FUZZ_ASSERT(rc == CONFIG_FOUND || rc == CONFIG_ABSENT || rc == CONFIG_TRUNCATED, "unknown status");
        if (value_size) {
            FUZZ_ASSERT(memchr(value, '\0', value_size) != NULL, "value not terminated");
            FUZZ_ASSERT((unsigned char)value[value_size] == 0x55, "value written past its size");
        }
    }
    free(text);
    return 0;
}
