/* utf8.h - UTF-8 helpers: decoding, validation, code-point length, cell width. */
#ifndef LIB_UTF8_H
#define LIB_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* Bytes in the sequence that starts with this lead byte (1..4), 0 if it is not a lead byte. */
int utf8_sequence_length(uint8_t lead);
/* Decodes one code point from s (at most len bytes). Returns bytes consumed
 * (>= 1) and stores the code point, or U+FFFD and 1 for an invalid sequence. */
int utf8_decode(const char *s, size_t len, uint32_t *codepoint);
/* Encodes cp into out (room for 4 bytes); returns bytes written, 0 if cp is invalid. */
int utf8_encode(uint32_t cp, char *out);
/* 1 when the whole buffer is valid UTF-8 (no overlongs, surrogates or > U+10FFFF). */
int utf8_valid(const char *s, size_t len);
/* Terminal cells the code point takes: 2 for East Asian Wide and Fullwidth
 * characters (CJK ideographs, kana, Hangul, fullwidth forms...), else 1. */
int unicode_cell_width(uint32_t cp);

#endif
