/* workers_choice.h - how many workers pay off, from measured wall times (a
 * pure function, unit-tested on the host in tests/host/test_workers_choice.c).
 *
 * wall_ns[i] is the best time of counts[i] workers each doing the same fixed
 * work, so the throughput of counts[i] is counts[i] / wall_ns[i]. counts are
 * increasing and counts[0] is 1. A count is kept only when its throughput
 * beats the best smaller count's by gain_percent: extra workers cost wake-ups,
 * and host time slices when the vCPUs outnumber the host's cores. */
#ifndef KERNEL_WORKERS_CHOICE_H
#define KERNEL_WORKERS_CHOICE_H

#include <stdint.h>

static inline int workers_choose(const int *counts, const uint64_t *wall_ns, int candidates,
                                 int gain_percent) {
    if (candidates < 1) return 1;
    int best = 0;
    for (int i = 1; i < candidates; i++) {
        /* counts[i] / wall[i] >= gain * counts[best] / wall[best], without division */
        unsigned __int128 lhs = (unsigned __int128)counts[i] * wall_ns[best] * 100;
        unsigned __int128 rhs = (unsigned __int128)counts[best] * wall_ns[i] * (unsigned)gain_percent;
        if (wall_ns[i] && lhs >= rhs) best = i;
    }
    return counts[best] > 0 ? counts[best] : 1;
}

#endif
