/* test_lib_format.c - lib/format.c against the host C library's snprintf
 * (looked up with dlsym, since our snprintf shadows it in this binary). */
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "lib/format.h"
#include "tests/host/check.h"

typedef int (*snprintf_fn)(char *, size_t, const char *, ...);
static snprintf_fn host_snprintf;

/* One check line per group of cases; the first mismatches are shown. */
struct group {
    const char *name;
    long cases, bad;
    char first_bad[512];
};

static void group_report(struct group *g) {
    if (g->bad == 0) {
        printf("ok - %s (%ld cases)\n", g->name, g->cases);
    } else {
        printf("FAIL - %s: %ld of %ld differ, e.g. %s\n", g->name, g->bad, g->cases, g->first_bad);
        failures++;
    }
}

static char ours[4096], theirs[4096];

#define COMPARE(g, fmt, ...)                                                                                 \
    do {                                                                                                     \
        int n1 = snprintf(ours, sizeof ours, fmt, __VA_ARGS__);                                              \
        int n2 = host_snprintf(theirs, sizeof theirs, fmt, __VA_ARGS__);                                     \
        (g)->cases++;                                                                                        \
        if (n1 != n2 || strcmp(ours, theirs) != 0) {                                                         \
            if ((g)->bad++ == 0)                                                                             \
                host_snprintf((g)->first_bad, sizeof(g)->first_bad,                                          \
                              "fmt \"%s\": ours [%.150s] (%d), libc "                                        \
                              "[%.150s] (%d)",                                                               \
                              fmt, ours, n1, theirs, n2);                                                    \
        }                                                                                                    \
    } while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static double random_double_any_exponent(void) {
    for (;;) {
        uint64_t bits = next_random();
        union {
            uint64_t u;
            double d;
        } v = {.u = bits};
        if (((bits >> 52) & 0x7ff) != 0x7ff) return v.d;
    }
}

static void test_integers(void) {
    struct group g = {.name = "integer conversions, flags, widths, precisions, lengths"};
    static const long long values[] = {0,
                                       1,
                                       -1,
                                       7,
                                       -7,
                                       42,
                                       255,
                                       256,
                                       -128,
                                       1000000,
                                       -99999,
                                       2147483647,
                                       -2147483647 - 1,
                                       4294967295LL,
                                       9223372036854775807LL,
                                       -9223372036854775807LL - 1,
                                       0x1234abcdLL,
                                       01777};
    static const char *int_formats[] = {"%d",     "%i",     "%5d",     "%-5d|", "%05d",  "%+d",   "% d",
                                        "%.3d",   "%8.3d",  "%-8.3d|", "%+.0d", "%.0d",  "%+08d", "% 08d",
                                        "%-+6d|", "%x",     "%#x",     "%#o",   "%o",    "%X",    "%#X",
                                        "%#10x",  "%#010x", "%-#10o|", "%.5x",  "%#.0o", "%u",    "%10u",
                                        "%hhd",   "%hd",    "%hhu",    "%hu",   "%hhx",  "%#.3o", "%0-5d|"};
    static const char *long_formats[] = {"%ld",  "%lld",  "%20lld", "%-20lld|", "%lx",
                                         "%llX", "%#llo", "%lu",    "%llu",     "%zu",
                                         "%zd",  "%jd",   "%td",    "%+lld",    "%021lld"};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        for (size_t f = 0; f < sizeof int_formats / sizeof int_formats[0]; f++)
            COMPARE(&g, int_formats[f], (int)values[i]);
        for (size_t f = 0; f < sizeof long_formats / sizeof long_formats[0]; f++)
            COMPARE(&g, long_formats[f], values[i]);
    }
    for (int i = 0; i < 20000; i++) {
        /* COMPARE evaluates its arguments twice: draw the random numbers first. */
        long long v = (long long)next_random() >> (next_random() % 64);
        int w1 = (int)(next_random() % 30) - 15, w2 = (int)(next_random() % 30) - 5;
        int w3 = (int)(next_random() % 30), w4 = (int)(next_random() % 30);
        COMPARE(&g, "%lld", v);
        COMPARE(&g, "%llx", v);
        COMPARE(&g, "%d", (int)v);
        COMPARE(&g, "%*d", w1, (int)v);
        COMPARE(&g, "%.*d", w2, (int)v);
        COMPARE(&g, "%-*.*llo|", w3, w4, v);
    }
    group_report(&g);
}

static void test_text(void) {
    struct group g = {.name = "%s %c %p %% and plain text"};
    COMPARE(&g, "%s", "hello");
    COMPARE(&g, "%10s|", "hello");
    COMPARE(&g, "%-10s|", "hello");
    COMPARE(&g, "%.3s|", "hello");
    COMPARE(&g, "%.*s|", 2, "hello");
    COMPARE(&g, "%*s|", -8, "ab");
    COMPARE(&g, "%s|%s", "", "x");
    COMPARE(&g, "%c%c%c", 'a', 'b', 'c');
    COMPARE(&g, "%5c|%-5c|", 'x', 'y');
    COMPARE(&g, "100%% done %d%%", 5);
    COMPARE(&g, "%p", (void *)0x1234);
    COMPARE(&g, "%20p|", (void *)0xdeadbeefcafeULL);
    COMPARE(&g, "%-20p|", (void *)&g);
    COMPARE(&g, "%p", (void *)0);
    COMPARE(&g, "%s", "tab\tnewline\n");
    COMPARE(&g, "a%sb%dc%.2fd", "X", 3, 1.5);
    const char *volatile null_string = NULL;
    COMPARE(&g, "%s", null_string);
    group_report(&g);
}

static void test_double_values(struct group *g, double v) {
    static const char *formats[] = {"%f", "%e", "%g", "%E", "%G", "%F", "%a"};
    char fmt[32];
    for (int conv = 0; conv < 6; conv++) {
        for (int prec = 0; prec <= 17; prec++) {
            host_snprintf(fmt, sizeof fmt, "%%.%d%c", prec, formats[conv][1]);
            COMPARE(g, fmt, v);
        }
        COMPARE(g, formats[conv], v);
    }
    COMPARE(g, "%#.0f", v);
    COMPARE(g, "%#.0e", v);
    if (v != 999999.5) COMPARE(g, "%#g", v); /* glibc 2.36 prints "1.e+06" there, see test_known_answers */
    COMPARE(g, "%#.3g", v);
    COMPARE(g, "%+.3f", v);
    COMPARE(g, "% .3e", v);
    COMPARE(g, "%012.4f", v);
    COMPARE(g, "%-12.2e|", v);
    COMPARE(g, "%+015.6g", v);
    COMPARE(g, "%20.10g|", v);
    COMPARE(g, "%.25e", v);
    COMPARE(g, "%.40g", v);
}

static void test_doubles(void) {
    struct group special = {.name = "%f %e %g on chosen values (logits, tok/s, tiny, huge, inf, nan, -0)"};
    static const double chosen[] = {0.0,
                                    -0.0,
                                    1.0,
                                    -1.0,
                                    0.5,
                                    1.5,
                                    2.5,
                                    -2.5,
                                    0.125,
                                    0.1,
                                    0.2,
                                    0.3,
                                    17.02352,
                                    -3.14159265358979,
                                    1e-5,
                                    1e-7,
                                    123.456,
                                    9.9999999,
                                    0.00099999,
                                    99.95,
                                    0.05,
                                    0.15,
                                    0.25,
                                    0.35,
                                    1e15,
                                    1e16,
                                    1e17,
                                    1e21,
                                    1e22,
                                    1e23,
                                    1e100,
                                    1e300,
                                    1.7976931348623157e308,
                                    2.2250738585072014e-308,
                                    4.9406564584124654e-324,
                                    1e-300,
                                    123456789.0,
                                    0.000123456,
                                    5e-5,
                                    999999.5,
                                    999999.4,
                                    9999995.0,
                                    9.5,
                                    0.95,
                                    3.0e-10,
                                    42.0,
                                    1234.5678,
                                    INFINITY,
                                    -INFINITY,
                                    NAN,
                                    -NAN};
    for (size_t i = 0; i < sizeof chosen / sizeof chosen[0]; i++) test_double_values(&special, chosen[i]);
    COMPARE(&special, "%.60f", 1e-50);
    COMPARE(&special, "%.1074f", 4.9406564584124654e-324);
    COMPARE(&special, "%.1100e", 4.9406564584124654e-324);
    COMPARE(&special, "%.800g", 0.1);
    COMPARE(&special, "%10f|%-10e|%010g", INFINITY, -INFINITY, NAN);
    COMPARE(&special, "%.3f tok/s", 123.4567f * 1.0);
    group_report(&special);

    struct group random = {.name = "%f %e %g random doubles across all exponents, precisions 0..17"};
    for (int i = 0; i < 1500; i++) test_double_values(&random, random_double_any_exponent());
    group_report(&random);

    struct group ordinary = {.name = "%f %e %g random doubles of ordinary size"};
    for (int i = 0; i < 5000; i++) {
        double v = (double)(int64_t)next_random() / (double)(1ull << (next_random() % 63));
        COMPARE(&ordinary, "%f", v);
        COMPARE(&ordinary, "%.2f", v);
        COMPARE(&ordinary, "%.5f", v);
        COMPARE(&ordinary, "%e", v);
        COMPARE(&ordinary, "%.3e", v);
        COMPARE(&ordinary, "%g", v);
        COMPARE(&ordinary, "%.17g", v);
        float f = (float)v;
        COMPARE(&ordinary, "%.9g", (double)f);
        COMPARE(&ordinary, "%8.4f", (double)f);
    }
    group_report(&ordinary);
}

/* Cases checked against the C standard rather than libc. */
static void test_known_answers(void) {
    static const struct {
        const char *fmt;
        double v;
        const char *want;
    } cases[] = {
        {"%#g", 999999.5, "1.00000e+06"}, /* rounds up into e-style: '#' keeps all 6 digits */
        {"%.2f", 17.02352, "17.02"},
        {"%.0f", 0.5, "0"},
        {"%.0f", 1.5, "2"},
        {"%.0f", 2.5, "2"},
        {"%.1f", 0.25, "0.2"},
        {"%.1f", 0.35, "0.3"}, /* 0.35 is really 0.34999999999999997780 */
        {"%e", 1e-5, "1.000000e-05"},
        {"%g", 1e-5, "1e-05"},
        {"%g", 100000.0, "100000"},
        {"%g", 1000000.0, "1e+06"},
        {"%.3e", -0.0, "-0.000e+00"},
        {"%f", 1e300 * 1e10, "inf"},
        {"%.20f", 0.1, "0.10000000000000000555"},
        {"%.17g", 0.1, "0.10000000000000001"},
        {"%.0e", 9.5, "1e+01"},
        {"%5.1f|", -0.04, " -0.0|"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[64];
        snprintf(buf, sizeof buf, cases[i].fmt, cases[i].v);
        if (strcmp(buf, cases[i].want) == 0) {
            printf("ok - known answer \"%s\" of %.17g = %s\n", cases[i].fmt, cases[i].v, buf);
        } else {
            printf("FAIL - known answer \"%s\" of %.17g: got \"%s\", want \"%s\"\n", cases[i].fmt, cases[i].v,
                   buf, cases[i].want);
            failures++;
        }
    }
}

static void test_truncation(void) {
    struct group g = {.name = "truncation: return value and terminated prefix"};
    for (size_t size = 0; size < 24; size++) {
        char a[32], b[32];
        memset(a, 'Z', sizeof a);
        memset(b, 'Z', sizeof b);
        int n1 = snprintf(a, size, "%s-%d-%.3f", "abcdef", -12345, 3.14159);
        int n2 = host_snprintf(b, size, "%s-%d-%.3f", "abcdef", -12345, 3.14159);
        g.cases++;
        if (n1 != n2 || memcmp(a, b, sizeof a) != 0) {
            if (g.bad++ == 0)
                host_snprintf(g.first_bad, sizeof g.first_bad, "size %zu: ours [%.32s] %d, libc [%.32s] %d",
                              size, a, n1, b, n2);
        }
    }
    g.cases++;
    if (snprintf(NULL, 0, "%d", 123456) != 6) {
        g.bad++;
        strcpy(g.first_bad, "snprintf(NULL, 0, ...) did not return the full length");
    }
    group_report(&g);
}

int main(void) {
    void *libc = dlopen("libc.so.6", RTLD_NOW);
    host_snprintf = libc ? (snprintf_fn)dlsym(libc, "snprintf") : NULL;
    if (!host_snprintf || host_snprintf == snprintf) {
        printf("FAIL - host snprintf: cannot look up libc's snprintf (%s)\n", dlerror());
        return 1;
    }
    test_integers();
    test_text();
    test_doubles();
    test_known_answers();
    test_truncation();
    return failures ? 1 : 0;
}
