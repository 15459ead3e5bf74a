/* thread_pool.h - the host's parallel runner (llm/compute/parallel.h) for llmrun,
 * bench and the host tests: persistent pthreads that spin briefly, then
 * sleep on a futex, waiting for a generation counter to move. A call costs
 * about a microsecond when the threads are awake; helpers that are not
 * running when a job is posted (more threads than free cores) are not
 * waited for. Header-only (static
 * functions) because every tools/NAME.c becomes its own program.
 *
 *   thread_pool_start(n);   // n threads in all, the caller being worker 0
 *   ... forward passes ...
 *   thread_pool_stop();
 */
#ifndef TOOLS_THREAD_POOL_H
#define TOOLS_THREAD_POOL_H

#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "llm/compute/parallel.h"

/* Not every includer uses every function. */
#define THREAD_POOL_API static __attribute__((unused))

#define THREAD_POOL_MAX 64
/* Pause-loop iterations before a waiting thread sleeps (tens of microseconds). */
#define THREAD_POOL_SPIN 20000
/* Set in the ticket once the caller's own share is done: no more joiners. */
#define TICKET_CLOSED 0x80000000u

static struct {
    pthread_t threads[THREAD_POOL_MAX];
    int count; /* workers including the caller */
    parallel_fn fn;
    int job_workers; /* workers the current job may use (helpers 1..job_workers-1) */
    void *ctx;
    _Atomic unsigned generation; /* bumped per job; futex word */
    _Atomic unsigned ticket;     /* helpers that joined the job, | TICKET_CLOSED */
    _Atomic int finished;        /* joined helpers done with the job */
    _Atomic int stopping;
    _Atomic int sleepers; /* helpers in (or entering) FUTEX_WAIT */
    unsigned start_generation;
} thread_pool;

static inline void thread_pool_cpu_relax(void) {
    __builtin_ia32_pause();
}

static inline void thread_pool_futex(_Atomic unsigned *word, int op, unsigned value) {
    syscall(SYS_futex, (unsigned *)word, op | FUTEX_PRIVATE_FLAG, value, NULL, NULL, 0);
}

/* Joins the open job, if any and if it takes this worker: 1, or 0. */
static int thread_pool_join(int worker) {
    if (worker >= thread_pool.job_workers) return 0;
    unsigned t = atomic_load(&thread_pool.ticket);
    while (!(t & TICKET_CLOSED) && (int)t < thread_pool.job_workers - 1)
        if (atomic_compare_exchange_weak(&thread_pool.ticket, &t, t + 1)) return 1;
    return 0;
}

/* Helper i is always worker i, so the rows a worker calls its own
 * (parallel_for's home chunks) stay in that core's caches token after token. */
static void *thread_pool_main(void *arg) {
    int worker = (int)(long)arg;
    unsigned seen = thread_pool.start_generation;
    for (;;) {
        unsigned now;
        int spins = 0;
        while ((now = atomic_load_explicit(&thread_pool.generation, memory_order_acquire)) == seen) {
            if (++spins < THREAD_POOL_SPIN)
                thread_pool_cpu_relax();
            else {
                /* seq_cst pairs with the runner's bump-then-check: either it
                 * sees this sleeper or the futex sees the new generation. */
                atomic_fetch_add(&thread_pool.sleepers, 1);
                thread_pool_futex(&thread_pool.generation, FUTEX_WAIT, seen);
                atomic_fetch_sub(&thread_pool.sleepers, 1);
            }
        }
        seen = now;
        if (atomic_load_explicit(&thread_pool.stopping, memory_order_acquire)) return NULL;
        if (!thread_pool_join(worker)) continue; /* too late: the caller did the work */
        thread_pool.fn(thread_pool.ctx, worker, thread_pool.job_workers);
        atomic_fetch_add(&thread_pool.finished, 1);
    }
}

/* The parallel_runner: runs fn as worker 0 on the caller and on the helpers
 * that join before the caller's fn returns; a helper that was not scheduled
 * in time (a busy machine) is left out instead of waited for, so fn must
 * share its work by claiming it (parallel_for does), not by worker number. */
THREAD_POOL_API void thread_pool_run(parallel_fn fn, void *ctx, int nworkers) {
    thread_pool.fn = fn;
    thread_pool.ctx = ctx;
    thread_pool.job_workers = nworkers < thread_pool.count ? nworkers : thread_pool.count;
    atomic_store(&thread_pool.finished, 0);
    atomic_store(&thread_pool.ticket, 0); /* open: fn and ctx are published */
    atomic_fetch_add(&thread_pool.generation, 1);
    if (atomic_load(&thread_pool.sleepers) > 0)
        thread_pool_futex(&thread_pool.generation, FUTEX_WAKE, THREAD_POOL_MAX);
    fn(ctx, 0, thread_pool.job_workers);
    int joined = (int)(atomic_fetch_or(&thread_pool.ticket, TICKET_CLOSED) & ~TICKET_CLOSED);
    int spins = 0;
    while (atomic_load(&thread_pool.finished) < joined) {
        /* Yield now and then so more threads than cores still progress. */
        if (++spins % 1024 == 0)
            sched_yield();
        else
            thread_pool_cpu_relax();
    }
}

/* Starts count - 1 helper threads (count is clamped to 1..THREAD_POOL_MAX)
 * and registers the pool as the llm/ runner. Returns the worker count. */
THREAD_POOL_API int thread_pool_start(int count) {
    if (count < 1) count = 1;
    if (count > THREAD_POOL_MAX) count = THREAD_POOL_MAX;
    thread_pool.count = 1;
    atomic_store(&thread_pool.stopping, 0);
    atomic_store(&thread_pool.ticket, TICKET_CLOSED);
    thread_pool.start_generation = atomic_load(&thread_pool.generation);
    for (int i = 1; i < count; i++) {
        if (pthread_create(&thread_pool.threads[i], NULL, thread_pool_main, (void *)(long)i) != 0) break;
        thread_pool.count = i + 1;
    }
    parallel_set_runner(thread_pool_run, thread_pool.count);
    return thread_pool.count;
}

/* Stops and joins the helpers; llm/ runs serially afterwards. */
THREAD_POOL_API void thread_pool_stop(void) {
    parallel_set_runner(NULL, 1);
    atomic_store_explicit(&thread_pool.stopping, 1, memory_order_release);
    atomic_fetch_add_explicit(&thread_pool.generation, 1, memory_order_release);
    thread_pool_futex(&thread_pool.generation, FUTEX_WAKE, THREAD_POOL_MAX);
    for (int i = 1; i < thread_pool.count; i++) pthread_join(thread_pool.threads[i], NULL);
    thread_pool.count = 1;
}

/* Online CPUs of this machine. */
THREAD_POOL_API int thread_pool_cpus(void) {
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

#endif
