/* config.c - boot.cfg parsing (see config.h). */
#include "lib/config.h"
#include "lib/string.h"

static int is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void trim(const char **s, size_t *n) {
    while (*n > 0 && is_blank(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && is_blank((*s)[*n - 1])) (*n)--;
}

int config_each(const char *text, size_t len,
                void (*fn)(const char *key, size_t key_len, const char *value, size_t value_len, void *ctx),
                void *ctx, int *first_bad_line) {
    int bad = 0, line_no = 0;
    if (first_bad_line) *first_bad_line = 0;
    size_t pos = 0;
    while (pos < len) {
        line_no++;
        const char *line = text + pos;
        const char *nl = memchr(line, '\n', len - pos);
        size_t line_len = nl ? (size_t)(nl - line) : len - pos;
        pos += line_len + (nl ? 1 : 0);

        trim(&line, &line_len);
        if (line_len == 0 || line[0] == '#') continue;
        const char *eq = memchr(line, '=', line_len);
        if (!eq || eq == line) {
            if (bad++ == 0 && first_bad_line) *first_bad_line = line_no;
            continue;
        }
        const char *key = line, *value = eq + 1;
        size_t key_len = (size_t)(eq - line), value_len = line_len - key_len - 1;
        trim(&key, &key_len);
        trim(&value, &value_len);
        if (key_len == 0) {
            if (bad++ == 0 && first_bad_line) *first_bad_line = line_no;
            continue;
        }
        fn(key, key_len, value, value_len, ctx);
    }
    return bad;
}

struct lookup {
    const char *key;
    size_t key_len;
    const char *value;
    size_t value_len;
    int found;
};

static void match_key(const char *key, size_t key_len, const char *value, size_t value_len, void *ctx) {
    struct lookup *l = ctx;
    if (key_len == l->key_len && memcmp(key, l->key, key_len) == 0) {
        l->value = value;
        l->value_len = value_len;
        l->found = 1;
    }
}

int config_get(const char *text, size_t len, const char *key, char *value, size_t value_size) {
    struct lookup l = {key, strlen(key), NULL, 0, 0};
    if (value && value_size) value[0] = '\0';
    if (text) config_each(text, len, match_key, &l, NULL);
    if (!l.found) return CONFIG_ABSENT;
    if (!value || value_size == 0) return l.value_len == 0 ? CONFIG_FOUND : CONFIG_TRUNCATED;
    size_t n = l.value_len < value_size - 1 ? l.value_len : value_size - 1;
    memcpy(value, l.value, n);
    value[n] = '\0';
    return n == l.value_len ? CONFIG_FOUND : CONFIG_TRUNCATED;
}
