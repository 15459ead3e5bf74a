/* test_lib.c - lib/ string functions, qsort, strtol/strtoull/strtof/strtod,
 * the xorshift RNG and UTF-8 helpers. Host versions come from dlsym where
 * ours shadow them. */
#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/rng.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "lib/utf8.h"
#include "tests/host/check.h"

static uint64_t random_state = 88172645463325252ull;
static uint64_t next_random(void) {
    random_state ^= random_state << 13;
    random_state ^= random_state >> 7;
    random_state ^= random_state << 17;
    return random_state;
}

/* ---------------------------------------------------------------- strings */

static void test_memory_functions(void) {
    static unsigned char a[4096 + 64], b[4096 + 64], ref[4096 + 64];
    int ok = 1;
    for (int trial = 0; trial < 3000 && ok; trial++) {
        size_t n = next_random() % 4096, so = next_random() % 32, dof = next_random() % 32;
        for (size_t i = 0; i < sizeof a; i++) a[i] = (unsigned char)next_random();
        for (size_t i = 0; i < sizeof b; i++) b[i] = ref[i] = (unsigned char)next_random();
        memcpy(b + dof, a + so, n);
        for (size_t i = 0; i < n; i++) ref[dof + i] = a[so + i];
        for (size_t i = 0; i < sizeof b; i++) ok &= b[i] == ref[i];
    }
    check(ok, "memcpy random sizes and alignments (3000 copies up to 4 KiB)", "copy differs from byte loop");

    ok = 1;
    for (int trial = 0; trial < 3000 && ok; trial++) {
        size_t n = next_random() % 2048, src = next_random() % 2048, dst = next_random() % 2048;
        for (size_t i = 0; i < 4096; i++) a[i] = ref[i] = (unsigned char)next_random();
        unsigned char tmp[2048];
        for (size_t i = 0; i < n; i++) tmp[i] = ref[src + i];
        for (size_t i = 0; i < n; i++) ref[dst + i] = tmp[i];
        if (memmove(a + dst, a + src, n) != a + dst) ok = 0;
        for (size_t i = 0; i < 4096; i++) ok &= a[i] == ref[i];
    }
    check(ok, "memmove overlapping both directions (3000 random moves)", "result differs from copy via temp");

    ok = 1;
    for (int trial = 0; trial < 1000 && ok; trial++) {
        size_t n = next_random() % 4000, off = next_random() % 32;
        int c = (int)(next_random() & 0x1ff); /* high bits must be ignored */
        for (size_t i = 0; i < sizeof a; i++) a[i] = ref[i] = 0x5a;
        memset(a + off, c, n);
        for (size_t i = 0; i < n; i++) ref[off + i] = (unsigned char)c;
        for (size_t i = 0; i < sizeof a; i++) ok &= a[i] == ref[i];
    }
    check(ok, "memset random sizes, offsets and fill values", "bytes outside or inside range wrong");

    unsigned char x[] = {1, 2, 3, 200}, y[] = {1, 2, 3, 100};
    check(memcmp(x, y, 4) > 0 && memcmp(y, x, 4) < 0 && memcmp(x, y, 3) == 0 && memcmp(x, y, 0) == 0,
          "memcmp compares as unsigned bytes", "wrong sign");
    check(memchr("hello", 'l', 5) == (void *)((const char *)"hello" + 2) ||
              *(char *)memchr("hello", 'l', 5) == 'l',
          "memchr finds first match", "wrong pointer");
    check(memchr("hello", 'z', 5) == NULL && memchr("hello", 'o', 4) == NULL, "memchr respects length",
          "found beyond n");
}

static void test_string_functions(void) {
    const char *s = "the quick brown fox";
    check(strlen("") == 0 && strlen(s) == 19, "strlen", "wrong length");
    check(strnlen(s, 5) == 5 && strnlen(s, 100) == 19 && strnlen("ab", 0) == 0, "strnlen", "wrong length");
    check(strcmp("abc", "abc") == 0 && strcmp("abc", "abd") < 0 && strcmp("abd", "abc") > 0 &&
              strcmp("ab", "abc") < 0 && strcmp("\xff", "a") > 0,
          "strcmp ordering (unsigned chars, prefixes)", "wrong sign");
    check(strncmp("abcdef", "abcxyz", 3) == 0 && strncmp("abcdef", "abcxyz", 4) < 0 &&
              strncmp("a", "b", 0) == 0,
          "strncmp", "wrong result");
    check(strchr(s, 'q') == s + 4 && strchr(s, 'z') == NULL && strchr(s, '\0') == s + 19, "strchr incl. NUL",
          "wrong pointer");
    check(strrchr(s, 'o') == s + 17 && strrchr(s, 'z') == NULL && strrchr(s, '\0') == s + 19, "strrchr",
          "wrong pointer");
    check(strstr(s, "brown") == s + 10 && strstr(s, "") == s && strstr(s, "foxes") == NULL &&
              strstr("aaab", "aab") != NULL,
          "strstr", "wrong pointer");
    char buf[8];
    size_t n = strlcpy(buf, "hello world", sizeof buf);
    check_plain(n == 11 && strcmp(buf, "hello w") == 0, "strlcpy truncates and returns strlen(src)", buf);
    n = strlcpy(buf, "hi", sizeof buf);
    n = strlcat(buf, " there!", sizeof buf);
    check_plain(n == 9 && strcmp(buf, "hi ther") == 0, "strlcat truncates and returns full length", buf);
    char unterminated[4] = {'a', 'b', 'c', 'd'};
    check(strlcat(unterminated, "xy", sizeof unterminated) == 6 && unterminated[3] == 'd',
          "strlcat on an unterminated buffer does not write", "wrote or wrong length");
}

/* ---------------------------------------------------------------- qsort */

static int cmp_int(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

struct record64 {
    float key;
    int index;
    char pad[56];
};

static int cmp_record_desc(const void *a, const void *b) {
    float x = ((const struct record64 *)a)->key, y = ((const struct record64 *)b)->key;
    return (x < y) - (x > y);
}

static void test_qsort(void) {
    enum { N = 32000 };
    static int v[N];
    static long counts[1000];
    const char *patterns[] = {"random", "sorted", "reversed", "all equal", "few distinct", "organ pipe"};
    for (int p = 0; p < 6; p++) {
        for (int i = 0; i < 1000; i++) counts[i] = 0;
        for (int i = 0; i < N; i++) {
            switch (p) {
            case 0:
                v[i] = (int)(next_random() % 1000);
                break;
            case 1:
                v[i] = i % 1000;
                break;
            case 2:
                v[i] = (N - i) % 1000;
                break;
            case 3:
                v[i] = 7;
                break;
            case 4:
                v[i] = (int)(next_random() % 3);
                break;
            default:
                v[i] = i < N / 2 ? i % 1000 : (N - i) % 1000;
                break;
            }
            if (p == 1) v[i] = i * 1000 / N;
            if (p == 2) v[i] = (N - 1 - i) * 1000 / N;
            counts[v[i]]++;
        }
        qsort(v, N, sizeof v[0], cmp_int);
        int ok = 1;
        for (int i = 1; i < N; i++) ok &= v[i - 1] <= v[i];
        for (int i = 0; i < N; i++) counts[v[i]]--;
        for (int i = 0; i < 1000; i++) ok &= counts[i] == 0;
        char name[80];
        snprintf(name, sizeof name, "qsort 32000 ints, %s", patterns[p]);
        check(ok, name, "not sorted or not a permutation");
    }

    static struct record64 recs[N];
    for (int i = 0; i < N; i++) {
        recs[i].key = (float)(next_random() % 100000) / 1000.0f;
        recs[i].index = i;
        for (int j = 0; j < 56; j++) recs[i].pad[j] = (char)(i + j);
    }
    qsort(recs, N, sizeof recs[0], cmp_record_desc);
    int ok = 1;
    for (int i = 1; i < N; i++) ok &= recs[i - 1].key >= recs[i].key;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < 56; j++) ok &= recs[i].pad[j] == (char)(recs[i].index + j);
    check(ok, "qsort 32000 64-byte records descending, records stay intact", "order or payload broken");

    int small[] = {3, 1, 2};
    qsort(small, 3, sizeof small[0], cmp_int);
    qsort(small, 0, sizeof small[0], cmp_int);
    qsort(small, 1, sizeof small[0], cmp_int);
    check(small[0] == 1 && small[1] == 2 && small[2] == 3, "qsort tiny arrays (0, 1, 3 elements)",
          "wrong order");
}

/* ---------------------------------------------------------------- number parsing */

typedef long (*strtol_fn)(const char *, char **, int);
typedef unsigned long long (*strtoull_fn)(const char *, char **, int);
typedef double (*strtod_fn)(const char *, char **);
typedef float (*strtof_fn)(const char *, char **);
typedef int (*snprintf_fn)(char *, size_t, const char *, ...);

static void test_integer_parsing(strtol_fn host_strtol, strtoull_fn host_strtoull) {
    static const char *inputs[] = {"0",
                                   "42",
                                   "-42",
                                   "+17",
                                   "  \t 99xyz",
                                   "0x1f",
                                   "0X1F",
                                   "017",
                                   "08",
                                   "0x",
                                   "0xg",
                                   "-0x10",
                                   "9223372036854775807",
                                   "9223372036854775808",
                                   "-9223372036854775808",
                                   "-9223372036854775809",
                                   "18446744073709551615",
                                   "18446744073709551616",
                                   "99999999999999999999999",
                                   "",
                                   "   ",
                                   "-",
                                   "+-1",
                                   "z",
                                   "Zz",
                                   "1234567890123",
                                   "-1",
                                   "0b101",
                                   "777777",
                                   "  +0x7fffffff"};
    static const int bases[] = {0, 10, 16, 8, 2, 36};
    int ok = 1;
    char why[256] = "";
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++) {
            char *e1, *e2;
            long v1 = strtol(inputs[i], &e1, bases[b]);
            long v2 = host_strtol(inputs[i], &e2, bases[b]);
            unsigned long long u1 = strtoull(inputs[i], &e1, bases[b]);
            char *e3;
            unsigned long long u2 = host_strtoull(inputs[i], &e3, bases[b]);
            if (v1 != v2 || u1 != u2 || e1 != e3) {
                if (ok)
                    snprintf(why, sizeof why, "\"%s\" base %d: ours %ld/%llu, libc %ld/%llu", inputs[i],
                             bases[b], v1, u1, v2, u2);
                ok = 0;
            }
            (void)e2;
        }
    }
    check_plain(ok, "strtol/strtoull match libc on edge cases (bases 0 2 8 10 16 36, overflow, prefixes)",
                why);
}

static void test_float_parsing(strtod_fn host_strtod, strtof_fn host_strtof, snprintf_fn host_snprintf) {
    /* Round trip random doubles through libc's %.17g and other precisions. */
    int ok = 1;
    char why[256] = "", text[64];
    long cases = 0;
    for (int i = 0; i < 200000; i++) {
        uint64_t bits = next_random();
        double d;
        memcpy(&d, &bits, sizeof d);
        if (d != d) continue;
        static const char *fmts[] = {"%.17g", "%.6g", "%.20e", "%.3g", "%.25g"};
        host_snprintf(text, sizeof text, fmts[i % 5], d);
        char *e1, *e2;
        double ours = strtod(text, &e1), theirs = host_strtod(text, &e2);
        cases++;
        if (memcmp(&ours, &theirs, sizeof ours) != 0 || e1 != e2) {
            if (ok) snprintf(why, sizeof why, "\"%s\": ours %a, libc %a", text, ours, theirs);
            ok = 0;
        }
        float fo = strtof(text, &e1), ft = host_strtof(text, &e2);
        if (memcmp(&fo, &ft, sizeof fo) != 0 || e1 != e2) {
            if (ok)
                snprintf(why, sizeof why, "strtof \"%s\": ours %a, libc %a", text, (double)fo, (double)ft);
            ok = 0;
        }
    }
    char name[128];
    snprintf(name, sizeof name, "strtod/strtof bit-identical to libc on %ld random round trips", cases);
    check_plain(ok, name, why);

    static const char *inputs[] = {
        "0.9",
        "1e-5",
        "-3.25",
        "0",
        "-0",
        "+.5",
        "5.",
        ".",
        "e5",
        "1e",
        "1e+",
        "1.5e-3x",
        "  42",
        "inf",
        "-Infinity",
        "nan",
        "NaN(123)",
        "nanx",
        "1e400",
        "-1e400",
        "1e-400",
        "2.4703282292062327e-324",
        "2.4703282292062328e-324",
        "4.9406564584124654e-324",
        "2.2250738585072011e-308",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "0.000000000000000000000000000000000000001",
        "3.4028235e38",
        "3.4028236e38",
        "1.4e-45",
        "7e-46",
        "7.1e-46",
        "1.00000005960464477539062500000000000000000000000000000000000000000000001",
        "1.000000059604644775390625",
        "0.1000000000000000055511151231257827021181583404541015625",
        "123456789012345678901234567890",
        "9007199254740993",
        "9007199254740992.5",
        "00000000000000000000000000000012.5e-1",
        "1e-7",
        "17.02352",
        "1e22",
        "1e23"};
    ok = 1;
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        char *e1, *e2;
        double ours = strtod(inputs[i], &e1), theirs = host_strtod(inputs[i], &e2);
        int nan_both = ours != ours && theirs != theirs;
        if ((!nan_both && memcmp(&ours, &theirs, sizeof ours) != 0) || e1 != e2) {
            if (ok)
                snprintf(why, sizeof why, "strtod \"%s\": ours %a (end +%td), libc %a (end +%td)", inputs[i],
                         ours, e1 - inputs[i], theirs, e2 - inputs[i]);
            ok = 0;
        }
        float fo = strtof(inputs[i], &e1), ft = host_strtof(inputs[i], &e2);
        nan_both = fo != fo && ft != ft;
        if ((!nan_both && memcmp(&fo, &ft, sizeof fo) != 0) || e1 != e2) {
            if (ok)
                snprintf(why, sizeof why, "strtof \"%s\": ours %a, libc %a", inputs[i], (double)fo,
                         (double)ft);
            ok = 0;
        }
    }
    check_plain(ok, "strtod/strtof on hard cases (halfway, subnormal, overflow, inf/nan, partial input)",
                why);
    check(strtof("0.9", NULL) == 0.9f && strtod("1e-5", NULL) == 1e-5 && strtod("-3.25", NULL) == -3.25,
          "strtof(\"0.9\") == 0.9f, strtod(\"1e-5\"), strtod(\"-3.25\")", "wrong value");
}

static void test_abs(void) {
    check(abs(-5) == 5 && abs(5) == 5 && abs(0) == 0 && abs(-INT_MAX) == INT_MAX, "abs", "wrong");
}

/* ---------------------------------------------------------------- rng */

static void test_rng(void) {
    uint64_t state = 42, model = 42;
    int ok = 1;
    for (int i = 0; i < 1000; i++) {
        model ^= model >> 12;
        model ^= model << 25;
        model ^= model >> 27;
        uint32_t expect = (uint32_t)((model * 0x2545F4914F6CDD1Dull) >> 32);
        ok &= rng_u32(&state) == expect;
    }
    check(ok && state == model, "rng_u32 follows the xorshift64* formula for 1000 steps (seed 42)",
          "differs");

    /* Computed independently in Python. */
    static const uint32_t expected[5] = {1456360119u, 3359763283u, 3393612768u, 4054632243u, 3283045847u};
    state = 42;
    ok = 1;
    for (int i = 0; i < 5; i++) ok &= rng_u32(&state) == expected[i];
    check(ok, "rng_u32 seed 42: 1456360119 3359763283 3393612768 4054632243 3283045847", "differs");
    state = 42;
    float f0 = rng_f32(&state), f1 = rng_f32(&state);
    check(f0 == 0.3390852212905884f && f1 == 0.7822558283805847f, "rng_f32 seed 42: 0.33908522 0.78225583",
          "differs");
    state = 1;
    ok = 1;
    for (int i = 0; i < 100000; i++) {
        float f = rng_f32(&state);
        ok &= f >= 0.0f && f < 1.0f;
    }
    check(ok, "rng_f32 stays in [0, 1)", "out of range");
}

/* ---------------------------------------------------------------- utf8 */

static void test_utf8(void) {
    check(utf8_sequence_length('a') == 1 && utf8_sequence_length(0xc3) == 2 &&
              utf8_sequence_length(0xe2) == 3 && utf8_sequence_length(0xf0) == 4 &&
              utf8_sequence_length(0x80) == 0 && utf8_sequence_length(0xc0) == 0 &&
              utf8_sequence_length(0xf5) == 0 && utf8_sequence_length(0xff) == 0,
          "utf8_sequence_length of lead bytes", "wrong length");
    uint32_t cp;
    int ok = utf8_decode("\xc3\xa9", 2, &cp) == 2 && cp == 0xe9;
    ok &= utf8_decode("\xe2\x82\xac", 3, &cp) == 3 && cp == 0x20ac;
    ok &= utf8_decode("\xf0\x9f\x98\x80", 4, &cp) == 4 && cp == 0x1f600;
    ok &= utf8_decode("A", 1, &cp) == 1 && cp == 'A';
    check(ok, "utf8_decode 1-4 byte sequences", "wrong code point");
    ok = utf8_decode("\xc3", 1, &cp) == 1 && cp == 0xfffd;              /* truncated */
    ok &= utf8_decode("\xc0\xaf", 2, &cp) == 1 && cp == 0xfffd;         /* overlong */
    ok &= utf8_decode("\xe0\x80\xaf", 3, &cp) == 1 && cp == 0xfffd;     /* overlong */
    ok &= utf8_decode("\xed\xa0\x80", 3, &cp) == 1 && cp == 0xfffd;     /* surrogate */
    ok &= utf8_decode("\xf4\x90\x80\x80", 4, &cp) == 1 && cp == 0xfffd; /* > U+10FFFF */
    ok &= utf8_decode("\x80", 1, &cp) == 1 && cp == 0xfffd;             /* stray continuation */
    ok &= utf8_decode("\xe2\x28\xa1", 3, &cp) == 1 && cp == 0xfffd;     /* bad continuation */
    ok &= utf8_decode("", 0, &cp) == 1 && cp == 0xfffd;
    check(ok, "utf8_decode rejects truncated, overlong, surrogate, out-of-range, stray bytes", "accepted");

    char out[4];
    ok = 1;
    for (uint32_t c = 0; c <= 0x10ffff && ok; c++) {
        int n = utf8_encode(c, out);
        if (c >= 0xd800 && c <= 0xdfff) {
            ok &= n == 0;
            continue;
        }
        uint32_t back;
        ok &= n >= 1 && n <= 4 && utf8_decode(out, (size_t)n, &back) == n && back == c &&
              utf8_valid(out, (size_t)n);
    }
    ok &= utf8_encode(0x110000, out) == 0;
    check(ok, "utf8_encode/utf8_decode round trip of every code point", "mismatch");
    check(utf8_valid("h\xc3\xa9llo \xe2\x82\xac", 10) && !utf8_valid("ab\xff", 3) &&
              !utf8_valid("\xe2\x82", 2) && utf8_valid("", 0) && utf8_valid("\xef\xbf\xbd", 3) &&
              !utf8_valid("\xc0\x80", 2),
          "utf8_valid", "wrong verdict");
}

int main(void) {
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    strtol_fn host_strtol = libc ? (strtol_fn)dlsym(libc, "strtol") : NULL;
    strtoull_fn host_strtoull = libc ? (strtoull_fn)dlsym(libc, "strtoull") : NULL;
    strtod_fn host_strtod = libc ? (strtod_fn)dlsym(libc, "strtod") : NULL;
    strtof_fn host_strtof = libc ? (strtof_fn)dlsym(libc, "strtof") : NULL;
    snprintf_fn host_snprintf = libc ? (snprintf_fn)dlsym(libc, "snprintf") : NULL;
    if (!host_strtol || !host_strtoull || !host_strtod || !host_strtof || !host_snprintf ||
        host_strtod == strtod) {
        printf("FAIL - cannot look up libc's own functions\n");
        return 1;
    }
    test_memory_functions();
    test_string_functions();
    test_qsort();
    test_integer_parsing(host_strtol, host_strtoull);
    test_float_parsing(host_strtod, host_strtof, host_snprintf);
    test_abs();
    test_rng();
    test_utf8();
    return failures ? 1 : 0;
}
