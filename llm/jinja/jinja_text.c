/* jinja_text.c - text with JavaScript's rules, on UTF-8: what \s and
 * trim() take for white space, what .length counts (UTF-16 code units), how
 * String(number) writes a number. */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "lib/utf8.h"
#include "llm/jinja/jinja_internal.h"

static int js_space_cp(uint32_t cp) {
    switch (cp) {
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c:
    case 0x0d:
    case 0x20:
    case 0xa0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202f:
    case 0x205f:
    case 0x3000:
    case 0xfeff:
        return 1;
    default:
        return cp >= 0x2000 && cp <= 0x200a;
    }
}

size_t js_space_at(const char *s, size_t len) {
    if (len == 0) return 0;
    unsigned char c = (unsigned char)s[0];
    if (c < 0x80) return js_space_cp(c);
    uint32_t cp;
    int n = utf8_decode(s, len, &cp);
    return n > 0 && js_space_cp(cp) ? (size_t)n : 0;
}

size_t js_space_before(const char *s, size_t len) {
    for (size_t n = 1; n <= 3 && n <= len; n++) {
        unsigned char c = (unsigned char)s[len - n];
        if (n == 1 && c < 0x80) return js_space_cp(c);
        if ((c & 0xc0) != 0x80) return js_space_at(s + len - n, n) == n ? n : 0;
    }
    return 0;
}

size_t js_trim_start(const char *s, size_t len) {
    size_t i = 0, n;
    while (i < len && (n = js_space_at(s + i, len - i)) > 0) i += n;
    return i;
}

size_t js_trim_end(const char *s, size_t len) {
    size_t n;
    while (len > 0 && (n = js_space_before(s, len)) > 0) len -= n;
    return len;
}

size_t utf16_length(const char *s, size_t len) {
    size_t units = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if ((c & 0xc0) == 0x80) continue; /* continuation */
        units += c >= 0xf0 ? 2 : 1;       /* astral planes take a surrogate pair */
    }
    return units;
}

/* Shortest digits that read back as v (JavaScript's Number::toString). */
void js_number(double v, char *out, size_t size) {
    if (v != v) {
        strlcpy(out, "NaN", size);
        return;
    }
    if (v == 1.0 / 0.0 || v == -1.0 / 0.0) {
        strlcpy(out, v < 0 ? "-Infinity" : "Infinity", size);
        return;
    }
    if (v == 0) {
        strlcpy(out, "0", size);
        return;
    }
    char e[40];
    int p;
    for (p = 1; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, v);
        if (strtod(e, NULL) == v) break;
    }
    /* e is [-]d[.ddd]e[+-]X: digits and the decimal exponent */
    const char *q = e;
    int neg = *q == '-';
    if (neg) q++;
    char digits[20];
    int k = 0;
    for (; *q && *q != 'e'; q++)
        if (*q != '.') digits[k++] = *q;
    while (k > 1 && digits[k - 1] == '0') k--;
    int n = (int)strtol(q + 1, NULL, 10) + 1; /* digits * 10^(n-k) */
    char tmp[64];
    size_t o = 0;
    if (neg) tmp[o++] = '-';
    if (k <= n && n <= 21) {
        for (int i = 0; i < k; i++) tmp[o++] = digits[i];
        for (int i = k; i < n; i++) tmp[o++] = '0';
    } else if (0 < n && n <= 21) {
        for (int i = 0; i < n; i++) tmp[o++] = digits[i];
        tmp[o++] = '.';
        for (int i = n; i < k; i++) tmp[o++] = digits[i];
    } else if (-6 < n && n <= 0) {
        tmp[o++] = '0';
        tmp[o++] = '.';
        for (int i = 0; i < -n; i++) tmp[o++] = '0';
        for (int i = 0; i < k; i++) tmp[o++] = digits[i];
    } else {
        tmp[o++] = digits[0];
        if (k > 1) {
            tmp[o++] = '.';
            for (int i = 1; i < k; i++) tmp[o++] = digits[i];
        }
        o += (size_t)snprintf(tmp + o, sizeof tmp - o, "e%c%d", n - 1 < 0 ? '-' : '+',
                              n - 1 < 0 ? 1 - n : n - 1);
    }
    tmp[o] = '\0';
    strlcpy(out, tmp, size);
}

void js_float(double v, char *out, size_t size) {
    if (v == 0 && 1.0 / v < 0) {
        strlcpy(out, "-0.0", size);
        return;
    }
    js_number(v, out, size);
    /* an integral value keeps one decimal, as Python prints a float */
    if (!strchr(out, '.') && !strchr(out, 'e') && !strchr(out, 'N') && !strchr(out, 'I')) {
        char tmp[64];
        snprintf(tmp, sizeof tmp, "%s.0", out);
        strlcpy(out, tmp, size);
    }
}
