/* jinja_case.c - full Unicode case mapping over UTF-8 text (jinja_case.h). */
#include "llm/jinja/jinja_case.h"

#include "lib/string.h"
#include "lib/utf8.h"

/* The mapping of cp in a table sorted by `from`, or NULL when cp maps to itself. */
static const JinjaCaseMapping *find(const JinjaCaseMapping *table, int count, uint32_t cp) {
    int lo = 0, hi = count - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (table[mid].from == cp) return &table[mid];
        if (table[mid].from < cp)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

size_t jinja_case_map(const char *s, size_t len, int upper, int first_only, char *out) {
    const JinjaCaseMapping *table = upper ? jinja_upper_mappings : jinja_lower_mappings;
    int count = upper ? jinja_upper_mappings_count : jinja_lower_mappings_count;
    size_t i = 0, n = 0;
    while (i < len) {
        uint32_t cp;
        int used = utf8_decode(s + i, len - i, &cp);
        const JinjaCaseMapping *m = NULL;
        /* An invalid byte decodes as U+FFFD: it is copied, not mapped. */
        if (!(cp == 0xFFFD && used == 1)) m = find(table, count, cp);
        if (m) {
            for (int k = 0; k < 3 && m->to[k]; k++) n += (size_t)utf8_encode(m->to[k], out + n);
        } else {
            memcpy(out + n, s + i, (size_t)used);
            n += (size_t)used;
        }
        i += (size_t)used;
        if (first_only) {
            memcpy(out + n, s + i, len - i);
            return n + (len - i);
        }
    }
    return n;
}
