/* fuzz_common.h - shared checks for the libFuzzer harnesses: a failed
 * invariant aborts, so libFuzzer saves the input as a crash. */
#ifndef TESTS_FUZZ_COMMON_H
#define TESTS_FUZZ_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_ASSERT(cond, what)                                                                              \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "fuzz invariant broken: %s (%s:%d)\n", what, __FILE__, __LINE__);                \
            abort();                                                                                         \
        }                                                                                                    \
    } while (0)

/* A failure must come with a one-line, non-empty, terminated reason. */
static inline void fuzz_check_reason(const char *err, size_t err_size) {
    FUZZ_ASSERT(memchr(err, '\0', err_size) != NULL, "error message not NUL-terminated");
    FUZZ_ASSERT(err[0] != '\0', "failure without a reason");
    FUZZ_ASSERT(strchr(err, '\n') == NULL, "reason spans several lines");
}

#endif
