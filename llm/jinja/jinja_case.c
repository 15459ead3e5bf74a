/* jinja_case.c - full Unicode case mapping over UTF-8 text (jinja_case.h). */
#include "llm/jinja/jinja_case.h"

#include "lib/string.h"
#include "lib/utf8.h"

/* The mapping of cp (1 to 3 code points into to[]); 0 when cp maps to itself. */
static int map_code_point(uint32_t cp, int upper, uint32_t to[3]) {
    const JinjaCaseMapping *multi = upper ? jinja_upper_multi : jinja_lower_multi;
    int lo = 0, hi = (upper ? jinja_upper_multi_count : jinja_lower_multi_count) - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (multi[mid].from == cp) {
            int n = 0;
            while (n < 3 && multi[mid].to[n]) to[n] = multi[mid].to[n], n++;
            return n;
        }
        if (multi[mid].from < cp)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    const JinjaCaseRun *runs = upper ? jinja_upper_runs : jinja_lower_runs;
    lo = 0, hi = (upper ? jinja_upper_run_count : jinja_lower_run_count) - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (cp < runs[mid].first)
            hi = mid - 1;
        else if (cp > runs[mid].last)
            lo = mid + 1;
        else if ((cp - runs[mid].first) % runs[mid].stride)
            return 0;
        else
            return to[0] = (uint32_t)((int32_t)cp + runs[mid].delta), 1;
    }
    return 0;
}

size_t jinja_case_map(const char *s, size_t len, int upper, int first_only, char *out) {
    size_t i = 0, n = 0;
    while (i < len) {
        uint32_t cp;
        int used = utf8_decode(s + i, len - i, &cp);
        uint32_t to[3];
        /* An invalid byte decodes as U+FFFD: it is copied, not mapped. */
        int count = cp == 0xFFFD && used == 1 ? 0 : map_code_point(cp, upper, to);
        if (count) {
            for (int k = 0; k < count; k++) n += (size_t)utf8_encode(to[k], out + n);
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
