/* jinja_case.h - full Unicode case mapping, as the reference engine's
 * JavaScript toUpperCase/toLowerCase does it ('ß' upper is "SS", 'İ' lower
 * is "i̇"), code point by code point: the Final_Sigma context of lower()
 * is not applied. The tables are generated (tools/gen_case_tables.py). */
#ifndef LLM_JINJA_CASE_H
#define LLM_JINJA_CASE_H

#include <stddef.h>
#include <stdint.h>

/* first, first + stride, ... last each map to itself + delta (runs sorted, disjoint). */
typedef struct {
    uint32_t first, last;
    uint32_t stride; /* 1 or 2 */
    int32_t delta;
} JinjaCaseRun;

/* The mappings to 2 or 3 code points (sorted by `from`); they win over the runs. */
typedef struct {
    uint32_t from;
    uint32_t to[3]; /* 0-padded */
} JinjaCaseMapping;

extern const JinjaCaseRun jinja_upper_runs[], jinja_lower_runs[];
extern const int jinja_upper_run_count, jinja_lower_run_count;
extern const JinjaCaseMapping jinja_upper_multi[], jinja_lower_multi[];
extern const int jinja_upper_multi_count, jinja_lower_multi_count;

/* Writes the upper (or lower) case of the UTF-8 text s[0..len) to out, which
 * has room for 3 * len bytes (no mapping grows a code point's UTF-8 more than
 * threefold); returns the bytes written. Bytes that are not valid UTF-8 are
 * copied as they are. Only the first code point when `first_only`. */
size_t jinja_case_map(const char *s, size_t len, int upper, int first_only, char *out);

#endif
