/* check.h - the one way a host test reports a check, one line each:
 *   ok - NAME                 the check ran and passed
 *   FAIL - NAME: WHY          the check ran and failed (the test then fails)
 *   skip - NAME: WHY          the check could not run here (e.g. a CPU
 *                             without AVX2): never reported as ok
 * tests/run_host_tests.py counts these lines. */
#ifndef TESTS_HOST_CHECK_H
#define TESTS_HOST_CHECK_H

#include <stdarg.h>
#include <stdio.h>

static int failures;

static void check(int ok, const char *name, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static __attribute__((unused)) void check(int ok, const char *name, const char *fmt, ...) {
    if (ok) {
        printf("ok - %s\n", name);
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    printf("FAIL - %s: ", name);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    failures++;
}

/* A check whose reason is plain text that may hold '%'. */
static __attribute__((unused)) void check_plain(int ok, const char *name, const char *why) {
    check(ok, name, "%s", why);
}

/* A check that cannot run here. */
static __attribute__((unused)) void check_skipped(const char *name, const char *why) {
    printf("skip - %s: %s\n", name, why);
}

#endif
