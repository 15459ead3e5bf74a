/* json_write.h - building JSON text (API responses) into a growing buffer,
 * with every string escaped: quotes, backslashes and control bytes as
 * escapes, bytes that are not valid UTF-8 as U+FFFD, so the output is always
 * valid JSON whatever text the model produces. Text that arrives in pieces
 * (one token at a time, a character's bytes split over two tokens) goes
 * through a json_utf8_joiner first, which passes on whole characters only. */
#ifndef LIB_JSON_WRITE_H
#define LIB_JSON_WRITE_H

#include <stddef.h>
#include <stdint.h>

struct json_buf {
    char *data; /* malloc'd, NUL-terminated; NULL until the first byte */
    size_t len, cap;
    int failed; /* out of memory (or over max): the text is incomplete, do not send it */
    size_t max; /* 0: no limit */
};

void json_buf_free(struct json_buf *b);
void json_buf_reset(struct json_buf *b); /* empty, keeps the memory */
void json_raw(struct json_buf *b, const char *s, size_t n);
void json_rawz(struct json_buf *b, const char *s);
/* A JSON string literal of n bytes of text (quotes included). */
void json_string(struct json_buf *b, const char *s, size_t n);
void json_stringz(struct json_buf *b, const char *s);
/* The text of a string without its quotes (for a string written in parts). */
void json_string_body(struct json_buf *b, const char *s, size_t n);
void json_int(struct json_buf *b, long long v);
/* A number with up to `decimals` digits after the point (non-finite: 0). */
void json_double(struct json_buf *b, double v, int decimals);
/* "key": (with a comma before it unless it opens the object: first != 0). */
void json_key(struct json_buf *b, const char *key, int first);

/* Holds a character whose bytes are split across pieces. */
struct json_utf8_joiner {
    char held[4];
    int held_len;
};
/* Passes the whole characters of held + s on to out (at most n + 4 bytes;
 * returns the count) and keeps an unfinished trailing sequence. Invalid
 * bytes pass through (json_string turns them into U+FFFD). */
size_t json_utf8_join(struct json_utf8_joiner *j, const char *s, size_t n, char *out);
/* What is still held at the end of the text (an unfinished character). */
size_t json_utf8_flush(struct json_utf8_joiner *j, char *out);

#endif
