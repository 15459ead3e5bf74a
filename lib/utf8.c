/* utf8.c - strict UTF-8 decoding and encoding (RFC 3629). */
#include "lib/utf8.h"

int utf8_sequence_length(uint8_t lead) {
    if (lead < 0x80) return 1;
    if (lead >= 0xc2 && lead <= 0xdf) return 2;
    if (lead >= 0xe0 && lead <= 0xef) return 3;
    if (lead >= 0xf0 && lead <= 0xf4) return 4;
    return 0; /* continuation byte, overlong lead (c0, c1) or beyond U+10FFFF */
}

int utf8_decode(const char *s, size_t len, uint32_t *codepoint) {
    const uint8_t *p = (const uint8_t *)s;
    *codepoint = 0xfffd;
    if (len == 0) return 1;
    int n = utf8_sequence_length(p[0]);
    if (n == 0 || (size_t)n > len) return 1;
    if (n == 1) {
        *codepoint = p[0];
        return 1;
    }
    uint32_t cp = p[0] & (0x7f >> n);
    for (int i = 1; i < n; i++) {
        if ((p[i] & 0xc0) != 0x80) return 1;
        cp = (cp << 6) | (p[i] & 0x3f);
    }
    static const uint32_t min_for_length[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < min_for_length[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 1;
    *codepoint = cp;
    return n;
}

int utf8_encode(uint32_t cp, char *out) {
    uint8_t *o = (uint8_t *)out;
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xc0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp >= 0xd800 && cp <= 0xdfff) return 0;
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xe0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (uint8_t)(0x80 | (cp & 0x3f));
        return 3;
    }
    if (cp <= 0x10ffff) {
        o[0] = (uint8_t)(0xf0 | (cp >> 18));
        o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3f));
        o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3f));
        o[3] = (uint8_t)(0x80 | (cp & 0x3f));
        return 4;
    }
    return 0;
}

int utf8_valid(const char *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        uint32_t cp;
        int n = utf8_decode(s + i, len - i, &cp);
        /* A decoded U+FFFD of length 1 from a non-ASCII byte means invalid input
         * (the real U+FFFD is three bytes). */
        if (n == 1 && (uint8_t)s[i] >= 0x80) return 0;
        i += (size_t)n;
    }
    return 1;
}

/* East Asian Width W and F ranges (Unicode's EastAsianWidth.txt), coarsened
 * to whole blocks where a block is (nearly) all wide. */
static const uint32_t wide_ranges[][2] = {
    {0x1100, 0x115F}, {0x231A, 0x231B},   {0x2329, 0x232A},   {0x23E9, 0x23EC},   {0x2E80, 0x303E},
    {0x3041, 0x33FF}, {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},   {0xA960, 0xA97F},
    {0xAC00, 0xD7A3}, {0xF900, 0xFAFF},   {0xFE10, 0xFE19},   {0xFE30, 0xFE6F},   {0xFF00, 0xFF60},
    {0xFFE0, 0xFFE6}, {0x1F300, 0x1F64F}, {0x1F900, 0x1F9FF}, {0x20000, 0x2FFFD}, {0x30000, 0x3FFFD},
};

int unicode_cell_width(uint32_t cp) {
    if (cp < 0x1100) return 1;
    for (size_t i = 0; i < sizeof wide_ranges / sizeof wide_ranges[0]; i++)
        if (cp >= wide_ranges[i][0] && cp <= wide_ranges[i][1]) return 2;
    return 1;
}
