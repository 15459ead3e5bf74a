/* timed_choice.h - picks the faster of two kernels that give the same
 * bits, by timing real calls: the first TIMED_CHOICE_TRIALS calls of each
 * alternate, each timed with the TSC per unit of work, then the one with the
 * smaller best time runs from then on. The best (not the mean) time, so a
 * cold first call (page faults, QEMU translating the code) or an interrupt
 * does not decide. Callers from several threads only race on which trial
 * records last; any record is a real measurement. */
#ifndef LLM_SIMD_TIMED_CHOICE_H
#define LLM_SIMD_TIMED_CHOICE_H

#include <stdint.h>

#define TIMED_CHOICE_TRIALS 3

typedef struct {
    int calls;       /* trial calls handed out */
    int recorded[2]; /* trials recorded per kernel */
    double best[2];  /* smallest ticks per unit of work seen */
    int chosen;      /* -1 until both have TIMED_CHOICE_TRIALS records */
} TimedChoice;

#define TIMED_CHOICE_INIT                                                                                    \
    { 0, {0, 0}, {0.0, 0.0}, -1 }

static inline uint64_t timed_choice_ticks(void) {
    return __builtin_ia32_rdtsc();
}

/* Which kernel to run now (`forced` when it is 0 or 1); *timed is set when
 * this call is a trial. */
static inline int timed_choice_pick(TimedChoice *c, int forced, int *timed) {
    *timed = 0;
    if (forced >= 0) return forced;
    int chosen = __atomic_load_n(&c->chosen, __ATOMIC_RELAXED);
    if (chosen >= 0) return chosen;
    *timed = 1;
    return __atomic_fetch_add(&c->calls, 1, __ATOMIC_RELAXED) & 1;
}

/* A trial's time; decides once both kernels have their trials. */
static inline void timed_choice_record(TimedChoice *c, int which, uint64_t ticks, double work) {
    double per = (double)ticks / (work > 0.0 ? work : 1.0);
    int n = __atomic_load_n(&c->recorded[which], __ATOMIC_RELAXED);
    if (n == 0 || per < c->best[which]) c->best[which] = per;
    __atomic_store_n(&c->recorded[which], n + 1, __ATOMIC_RELAXED);
    if (c->recorded[0] >= TIMED_CHOICE_TRIALS && c->recorded[1] >= TIMED_CHOICE_TRIALS)
        __atomic_store_n(&c->chosen, c->best[1] < c->best[0] ? 1 : 0, __ATOMIC_RELAXED);
}

#endif
