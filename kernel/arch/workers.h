/* workers.h - a pool of one worker per online CPU for data-parallel work
 * (the LLM's matrix products). The BSP is worker 0 and takes part. */
#ifndef KERNEL_WORKERS_H
#define KERNEL_WORKERS_H

#include <stddef.h>

typedef void (*worker_fn)(void *ctx, int worker, int nworkers);

/* Workers workers_run uses: online CPUs, capped by workers_set_limit. */
int workers_count(void);
/* Runs fn(ctx, w, n) on workers w = 0..n-1 (n = workers_count()) and
 * returns when all have finished. Call from the BSP only, not nested. */
void workers_run(worker_fn fn, void *ctx);
/* The llm/compute/parallel.h runner: fn on workers 0..nworkers-1 (capped by
 * workers_count()), where a worker that has not started by the time the
 * BSP's own call returns is left out, so fn must share its work by claiming
 * pieces (parallel_for does). */
void workers_run_claimed(worker_fn fn, void *ctx, int nworkers);
/* Caps the workers used (1 = BSP only, for benchmarks); 0 or less removes
 * the cap. Returns the resulting workers_count(). */
int workers_set_limit(int n);

/* Parallel sum over a large array on all workers, checked against a serial
 * sum, plus the measured round-trip time of an empty workers_run. Writes a
 * one-line report; returns 0 when the result matched. */
int workers_selftest(char *report, size_t report_size);
/* Runs debug_fault(kind) on the last worker (an AP when there is one):
 * a fault there must still give the full dump and halt every CPU. */
void workers_fault_test(const char *kind);

/* Measures, with every worker doing the same fixed work, how many workers
 * raise throughput (fewer than the CPUs online when vCPUs outnumber the host
 * cores that run them), logs it, and returns it (workers_calibrate.c). */
int workers_calibrate(void);
/* That count, measured again (~10-50 ms under emulation) when the last
 * measurement is older than 10 s; all CPUs before workers_calibrate ran.
 * Call from the BSP only, between jobs. */
int workers_useful(void);

/* For smp.c: the pool has `count` workers (online CPUs). */
void workers_init(int count);
/* For smp.c: an AP's loop as worker `worker`; never returns. */
__attribute__((noreturn)) void workers_ap_loop(int worker);

#endif
