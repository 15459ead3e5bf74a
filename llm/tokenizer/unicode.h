/* unicode.h - the code-point classes the BPE pre-tokenisers need.
 *
 * llama.cpp's regex splitting sees code points in one of two ways, and the
 * pre-tokenisers must reproduce whichever one a given pattern uses:
 *  - exact: the Unicode general category (L, N, P, other) plus the
 *    White_Space property (used by its hand-written gpt2 / llama3 splitters);
 *  - collapsed: the std::regex path, where every non-ASCII code point that is
 *    not whitespace, N or P counts as a letter (so emoji and marks match \p{L}). */
#ifndef LLM_UNICODE_H
#define LLM_UNICODE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    UNICODE_OTHER = 0,
    UNICODE_LETTER = 1,
    UNICODE_NUMBER = 2,
    UNICODE_PUNCTUATION = 3,
    UNICODE_WHITESPACE = 4,
} UnicodeClass;

typedef struct {
    uint32_t first, last;
    uint8_t cls;
} UnicodeRange;

extern const UnicodeRange unicode_category_ranges[];
extern const int unicode_category_range_count;

/* Exact class (whitespace wins over the general category). */
UnicodeClass unicode_class(uint32_t cp);
/* The class llama.cpp's collapsed std::regex path sees. */
UnicodeClass unicode_class_collapsed(uint32_t cp);

/* Decodes one code point of UTF-8 at s (len bytes left, len > 0). Malformed
 * or truncated sequences give U+FFFD and consume one byte. Returns the number
 * of bytes used. */
size_t unicode_decode_utf8(const unsigned char *s, size_t len, uint32_t *cp);
/* Writes cp as UTF-8 into out (4 bytes of room); returns its length. */
size_t unicode_encode_utf8(uint32_t cp, char *out);

#endif
