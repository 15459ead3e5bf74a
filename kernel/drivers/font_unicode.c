/* font_unicode.c - finds a code point's glyph in the generated Unifont table. */
#include "kernel/drivers/font_unicode.h"

#include <stddef.h>

const uint8_t *unicode_glyph(uint32_t cp, int *wide) {
    unsigned lo = 0, hi = unifont_run_count;
    while (lo < hi) { /* the first run that ends after cp */
        unsigned mid = lo + (hi - lo) / 2;
        if (unifont_runs[mid].first + unifont_runs[mid].count <= cp)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == unifont_run_count || cp < unifont_runs[lo].first) return NULL;
    const struct glyph_run *run = &unifont_runs[lo];
    *wide = run->wide;
    return unifont_bitmaps + run->offset + (size_t)(cp - run->first) * (run->wide ? 32 : 16);
}
