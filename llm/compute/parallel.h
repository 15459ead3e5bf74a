/* parallel.h - data-parallel helpers for the forward pass, independent of
 * who supplies the threads: the kernel registers its per-CPU worker pool,
 * host programs a pthread pool, and without a runner everything runs on the
 * caller's thread. Each output row is computed by exactly the code the
 * single-thread run uses, so results are bit-identical for any worker count. */
#ifndef LLM_PARALLEL_H
#define LLM_PARALLEL_H

#include <stddef.h>
#include <stdint.h>

/* Work item: called on worker w of nworkers. Must not allocate or print. */
typedef void (*parallel_fn)(void *ctx, int worker, int nworkers);
/* Runs fn(ctx, w, nworkers) on workers 0..nworkers-1 (nworkers is at most
 * the registered count) and returns when all that took part are done. The
 * caller is worker 0 and always runs; a runner may leave out workers that
 * are late (the host pool and the kernel's do, on a busy machine), so work
 * is shared by claiming pieces (parallel_for), never by worker number alone. */
typedef void (*parallel_runner)(parallel_fn fn, void *ctx, int nworkers);

/* Registers the runner and its worker count; NULL or nworkers <= 1 makes
 * every helper run serially on the caller's thread. */
void parallel_set_runner(parallel_runner run, int nworkers);
/* Calls smaller than this many multiply-adds run serially (waking workers
 * would cost more), and a larger call takes one worker per this much work
 * (a small job on many CPUs would spend more waking them than it saves);
 * 0 forces every call through all the workers (tests). */
void parallel_set_min_work(uint64_t work);
#define PARALLEL_DEFAULT_MIN_WORK 32768

/* Worker `worker` of `nworkers`'s share [*begin, *end) of 0..count-1, in
 * contiguous chunks whose boundaries are multiples of align (except count). */
void parallel_split(int count, int align, int worker, int nworkers, int *begin, int *end);

/* fn(ctx, begin, end) over 0..count-1 in contiguous chunks (boundaries on
 * multiples of align, as parallel_split cuts them), a few per worker, which
 * the workers claim as they go; serial (one call over everything) when work
 * (a rough operation count) is below the minimum. */
typedef void (*parallel_range_fn)(void *ctx, int begin, int end);
void parallel_for(int count, int align, uint64_t work, parallel_range_fn fn, void *ctx);

/* The KernelSet matmuls (llm/compute/kernels.h) split over workers. */
void parallel_matmul(float *out, const float *x, const float *w, int n, int d);
/* Position b's output at out + b * out_stride, its input at x + b * x_stride. */
void parallel_matmul_batch(float *out, int out_stride, const float *x, int x_stride, int batch,
                           const float *w, int n, int d);
void parallel_matmul_q8(float *out, const float *x, int batch, const int8_t *q, const float *s, int n, int d,
                        int group_size);
void parallel_matmul_q8q(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                         const float *ws, int n, int d, int group_size);

#endif
