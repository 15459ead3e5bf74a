/* test_workers_choice.c - the worker count kept from measured wall times
 * (kernel/arch/workers_choice.h), on timings shaped like the machines it
 * meets: real cores that scale, vCPUs oversubscribing 2 host cores, and a
 * first worker that is only a little faster. */
#include "kernel/arch/workers_choice.h"
#include "tests/host/check.h"

static const int counts[] = {1, 2, 3, 4, 8, 16};
enum { K = 6 };

static void expect(int got, int want, const char *name) {
    check(got == want, name, "chose %d workers, want %d", got, want);
}

int main(void) {
    /* 16 real cores: each count does n times the work in the same time. */
    uint64_t real[K] = {1000, 1010, 1020, 1030, 1060, 1100};
    expect(workers_choose(counts, real, K, 115), 16, "16 real cores: all kept");

    /* 16 vCPUs on 2 host cores: n workers take ceil(n / 2) time slices. */
    uint64_t two_cores[K] = {1000, 1050, 2100, 2100, 4300, 8800};
    expect(workers_choose(counts, two_cores, K, 115), 2, "16 vCPUs on 2 host cores: 2 kept");

    /* 4 vCPUs on 2 cores where 4 measured 5% better than 2: not worth it. */
    static const int four[] = {1, 2, 3, 4};
    uint64_t near[4] = {1000, 1040, 1560, 1980};
    expect(workers_choose(four, near, 4, 115), 2, "4 vCPUs, 5% over 2: 2 kept");

    /* A loaded host: two workers no faster than one. */
    uint64_t loaded[K] = {1000, 2000, 3100, 4000, 8000, 16000};
    expect(workers_choose(counts, loaded, K, 115), 1, "loaded host: 1 kept");

    /* Gains compound against the best count so far, not the previous one:
     * 3 is not kept (10% over 2), 4 is (2x over 2). */
    uint64_t steps[4] = {1000, 1000, 1360, 1000};
    expect(workers_choose(four, steps, 4, 115), 4, "gain over the best so far: 4 kept, 3 not");

    /* Degenerate input. */
    expect(workers_choose(counts, real, 0, 115), 1, "no candidates: 1");
    uint64_t zero[2] = {1000, 0};
    expect(workers_choose(counts, zero, 2, 115), 1, "a zero time is ignored");
    return failures ? 1 : 0;
}
