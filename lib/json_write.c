/* json_write.c - JSON output with escaping (see json_write.h). */
#include "lib/json_write.h"

#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "lib/utf8.h"

void json_buf_free(struct json_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    b->failed = 0;
}

void json_buf_reset(struct json_buf *b) {
    b->len = 0;
    b->failed = 0;
    if (b->data) b->data[0] = '\0';
}

static int reserve(struct json_buf *b, size_t more) {
    if (b->failed) return -1;
    if (more > (size_t)-1 / 4 - b->len || (b->max && b->len + more > b->max)) {
        b->failed = 1;
        return -1;
    }
    if (b->len + more + 1 <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + more + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) {
        b->failed = 1;
        return -1;
    }
    b->data = p;
    b->cap = cap;
    return 0;
}

void json_raw(struct json_buf *b, const char *s, size_t n) {
    if (reserve(b, n) != 0) return;
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void json_rawz(struct json_buf *b, const char *s) {
    json_raw(b, s, strlen(s));
}

void json_string_body(struct json_buf *b, const char *s, size_t n) {
    static const char hex[] = "0123456789abcdef";
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) {
            uint32_t cp;
            int used = utf8_decode(s + i, n - i, &cp);
            if (cp == 0xFFFD && used == 1)
                json_raw(b, "\\ufffd", 6); /* an invalid byte (a real U+FFFD is 3 bytes) */
            else
                json_raw(b, s + i, (size_t)used);
            i += (size_t)used;
            continue;
        }
        char esc[6] = {'\\', 0};
        size_t len = 2;
        switch (c) {
        case '"':
        case '\\':
            esc[1] = (char)c;
            break;
        case '\n':
            esc[1] = 'n';
            break;
        case '\r':
            esc[1] = 'r';
            break;
        case '\t':
            esc[1] = 't';
            break;
        case '\b':
            esc[1] = 'b';
            break;
        case '\f':
            esc[1] = 'f';
            break;
        default:
            if (c >= 0x20 && c != 0x7f) {
                json_raw(b, (const char *)&s[i], 1);
                i++;
                continue;
            }
            memcpy(esc, "\\u00", 4);
            esc[4] = hex[c >> 4];
            esc[5] = hex[c & 15];
            len = 6;
        }
        json_raw(b, esc, len);
        i++;
    }
}

void json_string(struct json_buf *b, const char *s, size_t n) {
    json_raw(b, "\"", 1);
    json_string_body(b, s, n);
    json_raw(b, "\"", 1);
}

void json_stringz(struct json_buf *b, const char *s) {
    json_string(b, s, strlen(s));
}

void json_int(struct json_buf *b, long long v) {
    char text[24];
    int n = snprintf(text, sizeof text, "%lld", v);
    json_raw(b, text, (size_t)n);
}

void json_double(struct json_buf *b, double v, int decimals) {
    if (!(v == v) || v > 1e300 || v < -1e300) v = 0;
    char text[64];
    int n = snprintf(text, sizeof text, "%.*f", decimals, v);
    if (n < 0 || (size_t)n >= sizeof text) n = snprintf(text, sizeof text, "0");
    json_raw(b, text, (size_t)n);
}

void json_key(struct json_buf *b, const char *key, int first) {
    if (!first) json_raw(b, ",", 1);
    json_stringz(b, key);
    json_raw(b, ":", 1);
}

/* Bytes a sequence starting with lead still needs to be whole, given `have`
 * of them; 0 when it is whole or invalid (then it is passed on as is). */
static int missing_bytes(const char *seq, int have) {
    int want = utf8_sequence_length((uint8_t)seq[0]);
    if (want <= 1 || have >= want) return 0;
    for (int i = 1; i < have; i++)
        if (((uint8_t)seq[i] & 0xC0) != 0x80) return 0;
    return want - have;
}

size_t json_utf8_join(struct json_utf8_joiner *j, const char *s, size_t n, char *out) {
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (j->held_len) {
            if (((uint8_t)s[i] & 0xC0) == 0x80) {
                j->held[j->held_len++] = s[i];
                if (missing_bytes(j->held, j->held_len) == 0) {
                    memcpy(out + len, j->held, (size_t)j->held_len);
                    len += (size_t)j->held_len;
                    j->held_len = 0;
                }
                continue;
            }
            memcpy(out + len, j->held, (size_t)j->held_len); /* cut short: invalid */
            len += (size_t)j->held_len;
            j->held_len = 0;
        }
        int want = utf8_sequence_length((uint8_t)s[i]);
        if (want > 1 && (size_t)want > n - i && missing_bytes(s + i, (int)(n - i)) > 0) {
            /* The piece ends inside this character: hold its bytes. */
            memcpy(j->held, s + i, n - i);
            j->held_len = (int)(n - i);
            break;
        }
        out[len++] = s[i];
    }
    return len;
}

size_t json_utf8_flush(struct json_utf8_joiner *j, char *out) {
    size_t n = (size_t)j->held_len;
    memcpy(out, j->held, n);
    j->held_len = 0;
    return n;
}
