/* workers.c - one worker per online CPU, the BSP being worker 0.
 *
 * Each AP worker has a slot of two cache lines: one written only by the BSP
 * (job and start generation), one only by the worker (done generation,
 * sleeping flag), so the hot path has no locks and no false sharing. A round
 * is: BSP publishes fn/ctx and bumps start_gen (release); the worker, spinning
 * with pause, sees it (acquire), runs fn and stores done_gen (release); the
 * BSP runs its own share and spins until every done_gen matches.
 * A worker idle for IDLE_SPIN_US halts (IF=0, so only an NMI wakes it) to
 * stop burning host CPU under emulation; the BSP sends an NMI when it sees
 * the sleeping flag (sequentially consistent flag/generation handshake) and
 * resends it if the worker went to sleep just as the first one arrived.
 * For parallel_for's jobs (workers_run_claimed) a worker that has not begun
 * when the BSP finished is skipped, not waited for: under emulation its
 * vCPU may not get a host core for milliseconds. */
#include "kernel/arch/workers.h"
#include "kernel/arch/apic.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/panic.h"
#include "kernel/kernel.h"
#include "kernel/mm/memory.h"
#include "kernel/arch/smp.h"
#include "kernel/drivers/timer.h"
#include "lib/format.h"
#include "lib/string.h"
#include <stdint.h>

/* A waiting worker spins this long, then halts: long enough to catch the next
 * matmul of a forward pass on real hardware, short enough that idle vCPUs
 * under emulation give their host cores back to the ones that compute (with
 * -smp 16 on a 2-core host, 15 spinning vCPUs left the BSP a fraction of a
 * core). */
#define IDLE_SPIN_US 30
#define NMI_RESEND_US 1000
/* A worker that has not finished its share this long after the BSP finished
 * its own is taken as hung: WAIT_MIN_US, plus WAIT_SHARE_FACTOR times the
 * BSP's share (the same size of work), generous enough for a vCPU the host
 * does not schedule for seconds under emulation. */
#define WAIT_MIN_US 5000000ull
#define WAIT_SHARE_FACTOR 100

struct worker_slot {
    /* Written by the BSP. */
    uint64_t start_gen __attribute__((aligned(64)));
    worker_fn fn;
    void *ctx;
    int nworkers;
    /* Who took generation g: 2g+1 the worker (it runs the job), 2g the BSP
     * (the worker came too late and skips it). Written by both, with a CAS. */
    uint64_t turn __attribute__((aligned(64)));
    /* Written by the worker. */
    uint64_t done_gen __attribute__((aligned(64)));
    int sleeping;
    uint32_t apic_id;
};

static struct worker_slot slots[SMP_MAX_CPUS];
static int pool_size = 1;
static int worker_limit;
static uint64_t generation;

void workers_init(int count) {
    pool_size = count < 1 ? 1 : count > SMP_MAX_CPUS ? SMP_MAX_CPUS : count;
}

int workers_count(void) {
    return worker_limit > 0 && worker_limit < pool_size ? worker_limit : pool_size;
}

int workers_set_limit(int n) {
    worker_limit = n > 0 ? n : 0;
    return workers_count();
}

static uint64_t ticks_from_us(uint64_t us) {
    uint64_t hz = tsc_hz();
    return hz ? hz / 1000000 * us : us * 1000;
}

/* Takes generation g for `claim` (2g+1 worker, 2g BSP) unless the other
 * side took it first; returns the value that holds for g afterwards. */
static uint64_t take_turn(struct worker_slot *s, uint64_t g, uint64_t claim) {
    uint64_t t = __atomic_load_n(&s->turn, __ATOMIC_ACQUIRE);
    while (t < 2 * g)
        if (__atomic_compare_exchange_n(&s->turn, &t, claim, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return claim;
    return t;
}

__attribute__((noreturn)) void workers_ap_loop(int worker) {
    struct worker_slot *s = &slots[worker];
    s->apic_id = apic_id();
    uint64_t seen = 0, idle_ticks = ticks_from_us(IDLE_SPIN_US);
    for (;;) {
        uint64_t g, spin_start = rdtsc();
        while ((g = __atomic_load_n(&s->start_gen, __ATOMIC_ACQUIRE)) == seen) {
            cpu_relax();
            if (rdtsc() - spin_start < idle_ticks) continue;
            __atomic_store_n(&s->sleeping, 1, __ATOMIC_SEQ_CST);
            if (__atomic_load_n(&s->start_gen, __ATOMIC_SEQ_CST) == seen)
                __asm__ volatile("hlt" ::: "memory");
            __atomic_store_n(&s->sleeping, 0, __ATOMIC_SEQ_CST);
            spin_start = rdtsc();
        }
        seen = g;
        if (take_turn(s, g, 2 * g + 1) != 2 * g + 1) continue; /* the BSP did our share */
        s->fn(s->ctx, worker, s->nworkers);
        __atomic_store_n(&s->done_gen, g, __ATOMIC_RELEASE);
    }
}

/* A claimed job's pieces cannot be finished by anyone else (the hung
 * worker holds them), so the machine stops, saying which CPU and job. */
__attribute__((noreturn)) static void report_hung(const struct worker_slot *s, int w, uint64_t g,
                                                  uint64_t share, uint64_t bound) {
    unsigned long offset;
    const char *job = symbol_lookup((unsigned long)s->fn, &offset);
    panic("workers: CPU %d (worker %d, APIC id %u) did not finish job %s (round %lu) within %lu ms "
          "(the boot CPU did its share in %lu us): the worker hangs",
          w, w, s->apic_id, job, (unsigned long)g, (unsigned long)(timer_ticks_to_ns(bound) / 1000000),
          (unsigned long)(timer_ticks_to_ns(share) / 1000));
}

/* Runs fn on workers 0..n-1. skip_late: a worker that has not started when
 * the BSP's own share is done is left out (fn shares work by claiming it). */
static void run_job(worker_fn fn, void *ctx, int n, int skip_late) {
    if (n > workers_count()) n = workers_count();
    if (n <= 1) {
        fn(ctx, 0, 1);
        return;
    }
    uint64_t g = ++generation;
    for (int w = 1; w < n; w++) {
        struct worker_slot *s = &slots[w];
        s->fn = fn;
        s->ctx = ctx;
        s->nworkers = n;
        __atomic_store_n(&s->start_gen, g, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&s->sleeping, __ATOMIC_SEQ_CST)) apic_send_nmi(s->apic_id);
    }
    uint64_t share_start = rdtsc();
    fn(ctx, 0, n);
    uint64_t share_end = rdtsc(), share = share_end - share_start;
    uint64_t resend_ticks = ticks_from_us(NMI_RESEND_US);
    uint64_t bound = ticks_from_us(WAIT_MIN_US) + WAIT_SHARE_FACTOR * share;
    for (int w = 1; w < n; w++) {
        struct worker_slot *s = &slots[w];
        if (skip_late && take_turn(s, g, 2 * g) == 2 * g) continue;
        uint64_t last_check = rdtsc();
        while (__atomic_load_n(&s->done_gen, __ATOMIC_ACQUIRE) != g) {
            cpu_relax();
            if (rdtsc() - last_check < resend_ticks) continue;
            if (__atomic_load_n(&s->sleeping, __ATOMIC_SEQ_CST)) apic_send_nmi(s->apic_id);
            last_check = rdtsc();
            if (last_check - share_end > bound) report_hung(s, w, g, share, bound);
        }
    }
}

void workers_run(worker_fn fn, void *ctx) {
    run_job(fn, ctx, workers_count(), 0);
}

void workers_run_claimed(worker_fn fn, void *ctx, int nworkers) {
    run_job(fn, ctx, nworkers, 1);
}

/* ---------------------------------------------------------------- self-test */

#define TEST_ELEMENTS (2u << 20) /* 16 MiB of uint64_t */
#define ROUND_TRIPS 1000

struct sum_job {
    const uint64_t *data;
    size_t count;
    struct {
        uint64_t sum __attribute__((aligned(64)));
        int runs;
    } part[SMP_MAX_CPUS];
};

static void sum_part(void *ctx, int worker, int nworkers) {
    struct sum_job *job = ctx;
    size_t chunk = (job->count + nworkers - 1) / nworkers;
    size_t begin = chunk * worker, end = begin + chunk < job->count ? begin + chunk : job->count;
    uint64_t sum = 0;
    for (size_t i = begin; i < end; i++) sum += job->data[i];
    job->part[worker].sum = sum;
    job->part[worker].runs++;
}

static void nothing(void *ctx, int worker, int nworkers) {
    (void)ctx, (void)worker, (void)nworkers;
}

int workers_selftest(char *report, size_t report_size) {
    int n = workers_count();
    uint64_t *data = kmalloc(TEST_ELEMENTS * sizeof *data);
    struct sum_job *job = kzalloc(sizeof *job);
    if (!data || !job) {
        kfree(data);
        kfree(job);
        snprintf(report, report_size, "smp test: FAILED: out of memory");
        return -1;
    }
    uint64_t expected = 0, x = 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < TEST_ELEMENTS; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: no pattern a bug could hide in */
        data[i] = x;
        expected += x;
    }
    job->data = data;
    job->count = TEST_ELEMENTS;
    uint64_t t0 = rdtsc();
    workers_run(sum_part, job);
    uint64_t sum_ns = timer_ticks_to_ns(rdtsc() - t0);
    uint64_t got = 0;
    int bad_runs = 0;
    for (int w = 0; w < n; w++) {
        got += job->part[w].sum;
        if (job->part[w].runs != 1) bad_runs++;
    }
    t0 = rdtsc();
    for (int i = 0; i < ROUND_TRIPS; i++) workers_run(nothing, NULL);
    uint64_t trip_ns = timer_ticks_to_ns(rdtsc() - t0) / ROUND_TRIPS;
    kfree(data);
    kfree(job);
    int ok = got == expected && bad_runs == 0;
    snprintf(report, report_size,
             "smp test: %s: %d workers, sum of %u values %s (%lu us), workers_run round trip %lu ns",
             ok ? "ok" : "FAILED", n, TEST_ELEMENTS, got == expected ? "matches" : "MISMATCH",
             (unsigned long)(sum_ns / 1000), (unsigned long)trip_ns);
    return ok ? 0 : -1;
}

static void fault_on_last(void *ctx, int worker, int nworkers) {
    if (worker != nworkers - 1) return;
    if (strcmp((const char *)ctx, "hang") == 0 && worker > 0)
        for (;;) cpu_relax(); /* spins without faulting: the BSP's wait bound must catch it */
    debug_fault((const char *)ctx);
}

void workers_fault_test(const char *kind) {
    /* Every online CPU, whatever count was measured to pay off: the last
     * worker must be an AP whenever there is one. */
    int limit = worker_limit;
    worker_limit = 0;
    workers_run(fault_on_last, (void *)kind);
    worker_limit = limit;
}
