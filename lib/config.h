/* config.h - boot.cfg parser: "key=value" lines, '#' comments, blank lines;
 * whitespace around keys and values is ignored, CRLF line ends are fine.
 * Works on arbitrary bytes (no NUL terminator needed). */
#ifndef LIB_CONFIG_H
#define LIB_CONFIG_H

#include <stddef.h>

#define CONFIG_FOUND 1
#define CONFIG_ABSENT 0
#define CONFIG_TRUNCATED (-1) /* found, but the value did not fit: value holds a truncated copy */

/* Looks key up (the last occurrence wins) and copies its value into value
 * (always terminated when value_size > 0). */
int config_get(const char *text, size_t len, const char *key, char *value, size_t value_size);

/* Calls fn(key, key_len, value, value_len, ctx) for each key=value line in order;
 * returns the number of lines that are neither blank, comments nor key=value
 * (with the 1-based number of the first in *first_bad_line, when non-NULL). */
int config_each(const char *text, size_t len,
                void (*fn)(const char *key, size_t key_len, const char *value, size_t value_len, void *ctx),
                void *ctx, int *first_bad_line);

#endif
