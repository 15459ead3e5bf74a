/* unicode.c - code-point classes and UTF-8 helpers for the tokenizers. */
#include "llm/tokenizer/unicode.h"

/* The White_Space property, as llama.cpp lists it. */
static int is_whitespace(uint32_t cp) {
    if (cp >= 0x09 && cp <= 0x0D) return 1;
    switch (cp) {
    case 0x20:
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
        return 1;
    default:
        return cp >= 0x2000 && cp <= 0x200A;
    }
}

static UnicodeClass category_class(uint32_t cp) {
    int lo = 0, hi = unicode_category_range_count - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        const UnicodeRange *r = &unicode_category_ranges[mid];
        if (cp < r->first)
            hi = mid - 1;
        else if (cp > r->last)
            lo = mid + 1;
        else
            return (UnicodeClass)r->cls;
    }
    return UNICODE_OTHER;
}

UnicodeClass unicode_class(uint32_t cp) {
    if (is_whitespace(cp)) return UNICODE_WHITESPACE;
    return category_class(cp);
}

UnicodeClass unicode_class_collapsed(uint32_t cp) {
    if (cp < 128) return unicode_class(cp);
    UnicodeClass c = unicode_class(cp);
    /* llama.cpp maps everything but N, P and whitespace to its letter byte. */
    return c == UNICODE_OTHER ? UNICODE_LETTER : c;
}

size_t unicode_decode_utf8(const unsigned char *s, size_t len, uint32_t *cp) {
    unsigned char b = s[0];
    size_t need;
    uint32_t value, min;
    if (b < 0x80) {
        *cp = b;
        return 1;
    } else if ((b & 0xE0) == 0xC0) {
        need = 2, value = b & 0x1F, min = 0x80;
    } else if ((b & 0xF0) == 0xE0) {
        need = 3, value = b & 0x0F, min = 0x800;
    } else if ((b & 0xF8) == 0xF0) {
        need = 4, value = b & 0x07, min = 0x10000;
    } else {
        *cp = 0xFFFD;
        return 1;
    }
    if (len < need) {
        *cp = 0xFFFD;
        return 1;
    }
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80) {
            *cp = 0xFFFD;
            return 1;
        }
        value = value << 6 | (s[i] & 0x3F);
    }
    /* Like llama.cpp: overlong forms and surrogates pass, only the range is checked. */
    (void)min;
    if (value > 0x10FFFF) {
        *cp = 0xFFFD;
        return 1;
    }
    *cp = value;
    return need;
}

size_t unicode_encode_utf8(uint32_t cp, char *out) {
    if (cp < 0x80) {
        out[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (char)(0xC0 | cp >> 6);
        out[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xE0 | cp >> 12);
        out[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        out[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | cp >> 18);
    out[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    out[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    out[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}
