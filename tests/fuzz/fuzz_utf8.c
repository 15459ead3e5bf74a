/* fuzz_utf8.c - lib/utf8 against a straightforward reference decoder
 * written from RFC 3629's table of well-formed byte sequences. */
#include <stdint.h>

#include "lib/utf8.h"
#include "tests/fuzz/fuzz_common.h"

/* Length of the well-formed sequence at s (RFC 3629 section 4), 0 if none. */
static int reference_length(const uint8_t *s, size_t len, uint32_t *cp) {
    uint8_t b0 = s[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    int n;
    uint8_t lo = 0x80, hi = 0xbf;
    if (b0 >= 0xc2 && b0 <= 0xdf)
        n = 2;
    else if (b0 == 0xe0)
        n = 3, lo = 0xa0;
    else if (b0 == 0xed)
        n = 3, hi = 0x9f;
    else if (b0 >= 0xe1 && b0 <= 0xef)
        n = 3;
    else if (b0 == 0xf0)
        n = 4, lo = 0x90;
    else if (b0 == 0xf4)
        n = 4, hi = 0x8f;
    else if (b0 >= 0xf1 && b0 <= 0xf3)
        n = 4;
    else
        return 0;
    if ((size_t)n > len || s[1] < lo || s[1] > hi) return 0;
    for (int i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf) return 0;
    uint32_t v = b0 & (0x7f >> n);
    for (int i = 1; i < n; i++) v = v << 6 | (s[i] & 0x3f);
    *cp = v;
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char *buf = malloc(size ? size : 1);
    memcpy(buf, data, size);
    int all_valid = 1;
    for (size_t i = 0; i < size;) {
        uint32_t cp, ref_cp = 0;
        int n = utf8_decode(buf + i, size - i, &cp);
        int ref = reference_length(data + i, size - i, &ref_cp);
        FUZZ_ASSERT(n >= 1 && (size_t)n <= size - i, "decode length out of range");
        if (ref) {
            FUZZ_ASSERT(n == ref && cp == ref_cp, "decode disagrees with the reference");
            char out[4];
            FUZZ_ASSERT(utf8_encode(cp, out) == n && memcmp(out, data + i, (size_t)n) == 0,
                        "encode does not round-trip");
            FUZZ_ASSERT(utf8_sequence_length(data[i]) == n, "sequence length disagrees");
        } else {
            FUZZ_ASSERT(n == 1 && cp == 0xfffd, "invalid sequence not replaced");
            all_valid = 0;
        }
        i += (size_t)n;
    }
    FUZZ_ASSERT(utf8_valid(buf, size) == all_valid, "utf8_valid disagrees with the reference");
    utf8_decode(buf, 0, &(uint32_t){0});
    /* Code points from the input bytes: encode then decode round-trips. */
    for (size_t i = 0; i + 4 <= size; i += 4) {
        uint32_t cp;
        memcpy(&cp, data + i, 4);
        cp %= 0x110100;
        char out[4];
        int n = utf8_encode(cp, out);
        int valid = !(cp >= 0xd800 && cp <= 0xdfff) && cp <= 0x10ffff;
        FUZZ_ASSERT((n > 0) == valid, "encode accepts the wrong code points");
        if (n) {
            uint32_t back;
            FUZZ_ASSERT(utf8_decode(out, (size_t)n, &back) == n && back == cp, "encode/decode round-trip");
        }
    }
    free(buf);
    return 0;
}
