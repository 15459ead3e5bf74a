/* workers_calibrate.c - how many workers actually run at once.
 *
 * Under emulation the vCPUs may outnumber the host cores that run them (QEMU
 * -smp 16 on a 2-core host). Every worker past the host's cores then only
 * waits for a time slice, and a job waits for its slowest worker, so decoding
 * got slower with more vCPUs (-smp 4 below -smp 2). Each candidate worker
 * count runs the same fixed work per worker, the counts interleaved over a
 * few rounds (best time of each), and workers_choose keeps the counts that
 * raise throughput. On real hardware every count scales and all CPUs stay.
 * The host's load changes, so the measurement is redone when it is stale. */
#include "kernel/arch/workers.h"
#include "kernel/arch/smp.h"
#include "kernel/arch/workers_choice.h"
#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include <stdint.h>

/* Per-worker work of one trial: about this long on one CPU, the order of one
 * decode matmul of a small model under emulation. */
#define TRIAL_US 1000
#define ROUNDS 3
#define GAIN_PERCENT 115
#define MAX_CANDIDATES 16
#define STALE_NS (10ull * 1000 * 1000 * 1000)

struct spin_job {
    uint64_t rounds;
    struct {
        uint64_t value __attribute__((aligned(64)));
    } out[SMP_MAX_CPUS];
};

static uint64_t spin(uint64_t rounds, uint64_t x) {
    for (uint64_t i = 0; i < rounds; i++) x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    return x;
}

static void spin_part(void *ctx, int worker, int nworkers) {
    struct spin_job *job = ctx;
    job->out[worker].value = spin(job->rounds, 0x9E3779B97F4A7C15ull + (uint64_t)worker);
}

static uint64_t run_ns(struct spin_job *job, int n) {
    workers_set_limit(n);
    uint64_t t0 = timer_ns();
    workers_run(spin_part, job);
    uint64_t ns = timer_ns() - t0;
    workers_set_limit(0);
    return ns ? ns : 1;
}

/* 1, 2, 3, 4, then doubling, and the total. */
static int candidate_counts(int all, int *counts) {
    int k = 0;
    for (int n = 1; k < MAX_CANDIDATES - 1 && n < all; n = n < 4 ? n + 1 : n * 2) counts[k++] = n;
    counts[k++] = all;
    return k;
}

static int useful;           /* 0: not measured yet (all workers) */
static uint64_t measured_at; /* timer_ns() of the last measurement */
static unsigned long gain_x100;

static int measure(void) {
    int all = smp_online_count();
    if (all <= 1) return 1;
    static struct spin_job job;
    job.rounds = 1u << 12;
    uint64_t t0 = timer_ns();
    spin_part(&job, 0, 1);
    uint64_t probe_ns = timer_ns() - t0;
    job.rounds = probe_ns ? job.rounds * TRIAL_US * 1000 / probe_ns : job.rounds * 64;
    if (job.rounds < 1024) job.rounds = 1024;

    int counts[MAX_CANDIDATES];
    uint64_t wall[MAX_CANDIDATES];
    int k = candidate_counts(all, counts);
    for (int i = 0; i < k; i++) wall[i] = ~0ull;
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < k; i++) {
            uint64_t ns = run_ns(&job, counts[i]);
            if (ns < wall[i]) wall[i] = ns;
        }
    int best = workers_choose(counts, wall, k, GAIN_PERCENT);
    for (int i = 0; i < k; i++)
        if (counts[i] == best) gain_x100 = (unsigned long)(wall[0] * (uint64_t)best * 100 / wall[i]);
    return best;
}

int workers_calibrate(void) {
    uint64_t start = timer_ns();
    useful = measure();
    measured_at = timer_ns();
    int all = smp_online_count();
    if (all > 1)
        kprintf("smp: %d of %d workers pay off (%lu.%02lux the throughput of one%s; measured in %lu ms)\n",
                useful, all, gain_x100 / 100, gain_x100 % 100,
                useful < all ? "; the rest would wait for host CPU time" : "",
                (unsigned long)((measured_at - start) / 1000000));
    return useful;
}

int workers_useful(void) {
    if (useful > 0 && smp_online_count() > 1 && timer_ns() - measured_at > STALE_NS) {
        useful = measure();
        measured_at = timer_ns();
    }
    return useful > 0 ? useful : smp_online_count();
}
