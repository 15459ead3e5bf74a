/* test_config.c - lib/config.c: boot.cfg parsing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lib/config.h"
#include "lib/string.h"
#include "tests/host/check.h"

static int get(const char *text, const char *key, char *value, size_t size) {
    return config_get(text, strlen(text), key, value, size);
}

struct collected {
    int count;
    char keys[8][32];
};

static void collect(const char *key, size_t key_len, const char *value, size_t value_len, void *ctx) {
    struct collected *c = ctx;
    if (c->count < 8 && key_len < 32) {
        memcpy(c->keys[c->count], key, key_len);
        c->keys[c->count][key_len] = '\0';
    }
    c->count++;
}

int main(void) {
    char v[64];
    const char *cfg = "# boot configuration\n"
                      "ramdisk=ramdisk.tar\n"
                      "\n"
                      "  model =  stories260K.bin  \r\n"
                      "\ttokenizer\t=\ttok512.bin\r\n"
                      "   # indented comment\n"
                      "temperature=0.8\n"
                      "prompt = Once upon a time = long ago\n"
                      "empty=\n"
                      "seed=1\n"
                      "seed=42";
    check_plain(get(cfg, "ramdisk", v, sizeof v) == CONFIG_FOUND && strcmp(v, "ramdisk.tar") == 0,
                "simple key=value", v);
    check_plain(get(cfg, "model", v, sizeof v) == CONFIG_FOUND && strcmp(v, "stories260K.bin") == 0,
                "spaces around key and value, CRLF", v);
    check_plain(get(cfg, "tokenizer", v, sizeof v) == CONFIG_FOUND && strcmp(v, "tok512.bin") == 0,
                "tabs and CRLF", v);
    check_plain(get(cfg, "prompt", v, sizeof v) == CONFIG_FOUND &&
                    strcmp(v, "Once upon a time = long ago") == 0,
                "value keeps inner spaces and later '='", v);
    check_plain(get(cfg, "empty", v, sizeof v) == CONFIG_FOUND && v[0] == '\0',
                "empty value is found and empty", v);
    check_plain(get(cfg, "seed", v, sizeof v) == CONFIG_FOUND && strcmp(v, "42") == 0,
                "last occurrence wins (no final newline)", v);
    check_plain(get(cfg, "missing", v, sizeof v) == CONFIG_ABSENT && v[0] == '\0', "absent key", v);
    check_plain(get(cfg, "# boot configuration", v, sizeof v) == CONFIG_ABSENT, "comments are not keys", v);
    check_plain(get(cfg, "mode", v, sizeof v) == CONFIG_ABSENT, "no prefix matching of keys", v);

    char small[5];
    int rc = get(cfg, "ramdisk", small, sizeof small);
    check_plain(rc == CONFIG_TRUNCATED && strcmp(small, "ramd") == 0,
                "over-long value truncated and reported", small);
    check_plain(get(cfg, "ramdisk", NULL, 0) == CONFIG_TRUNCATED, "no buffer: found but reported truncated",
                "");

    /* Length bound: the key after len must not be seen. */
    const char *two = "a=1\nb=2\n";
    check_plain(config_get(two, 4, "b", v, sizeof v) == CONFIG_ABSENT &&
                    config_get(two, 4, "a", v, sizeof v) == 1,
                "parsing stops at len", v);
    check_plain(config_get(two, 3, "a", v, sizeof v) == CONFIG_FOUND && strcmp(v, "1") == 0,
                "last line without newline", v);

    struct collected c = {0};
    int bad_line = 0;
    const char *messy = "x=1\nnot a setting\n=novalue\ny = 2\n";
    int bad = config_each(messy, strlen(messy), collect, &c, &bad_line);
    check(bad == 2 && bad_line == 2 && c.count == 2 && strcmp(c.keys[0], "x") == 0 &&
              strcmp(c.keys[1], "y") == 0,
          "config_each reports malformed lines with the first line number", "wrong counts");

    /* Arbitrary bytes, including NULs, on an exact-size heap copy (ASan). */
    srand(7);
    int ok = 1;
    for (int trial = 0; trial < 20000; trial++) {
        size_t n = (size_t)(rand() % 200);
        char *buf = malloc(n ? n : 1);
        for (size_t i = 0; i < n; i++) {
            int r = rand() % 8;
            buf[i] = r == 0 ? '=' : r == 1 ? '\n' : r == 2 ? 'k' : r == 3 ? '#' : (char)rand();
        }
        char out[8];
        rc = config_get(buf, n, "k", out, sizeof out);
        ok &= rc >= -1 && rc <= 1 && strlen(out) < sizeof out;
        free(buf);
    }
    check(ok, "20000 random byte buffers: no crash, sane results", "bad return");
    return failures ? 1 : 0;
}
