/* parallel.c - splitting the forward pass's matmuls and per-head work over
 * the registered workers. Rows are split in contiguous chunks aligned to the
 * kernels' 4-row blocks, tokens of a batch in contiguous runs; either way
 * every output value comes from the same kernel code as a serial run. */
#include "llm/compute/parallel.h"

#include "lib/string.h"
#include "llm/compute/kernels.h"

/* Rows per block in the SIMD matmul kernels: chunks start on a multiple so
 * each row lands in the same block position as in a serial run. */
#define KERNEL_ROW_BLOCK 4
/* The fp32 GEMM tiles' rows (6 AVX-512, 4 AVX2 and SSE2) divide this, so
 * a chunk leaves no partial tile. */
#define FP32_GEMM_ROW_BLOCK 12

static parallel_runner runner;
static int runner_workers = 1;
static uint64_t min_work = PARALLEL_DEFAULT_MIN_WORK;

void parallel_set_min_work(uint64_t work) {
    min_work = work;
}

void parallel_set_runner(parallel_runner run, int nworkers) {
    runner = nworkers > 1 ? run : NULL;
    runner_workers = runner ? nworkers : 1;
}

void parallel_split(int count, int align, int worker, int nworkers, int *begin, int *end) {
    if (align < 1) align = 1;
    if (nworkers < 1) nworkers = 1;
    long units = ((long)count + align - 1) / align;
    long u0 = units * worker / nworkers, u1 = units * (worker + 1) / nworkers;
    long b = u0 * align, e = u1 * align;
    *begin = (int)(b < count ? b : count);
    *end = (int)(e < count ? e : count);
}

/* Chunks per worker for row splits: workers claim chunks as they finish, so
 * a worker that starts late (its CPU busy with something else: host threads,
 * or TCG vCPUs on a loaded host) costs little. Each chunk runs the same code
 * whoever claims it. Worker w first takes its own chunks (w * per_worker
 * onwards), then helps with the others': when every worker is on time each
 * one computes the same rows at every call, which keeps those weights in
 * its own core's caches (measured: a Q8_0 model larger than one core's
 * share of the cache decoded faster than with first-come chunks). Two per
 * worker: a helper that finishes first takes over at most half of a slow
 * one's rows, which then miss in its cache; with four, the 110M Q8_0 decoded
 * 3.5% slower on the host, and QEMU -smp 2 showed no difference. */
#define CHUNKS_PER_WORKER 2
#define MAX_CHUNKS 512

typedef struct {
    parallel_range_fn fn;
    void *ctx;
    int count, align, chunks, per_worker;
    unsigned char claimed[MAX_CHUNKS]; /* claimed with an atomic exchange */
} RangeJob;

static void run_chunk(RangeJob *job, int chunk) {
    if (__atomic_exchange_n(&job->claimed[chunk], 1, __ATOMIC_RELAXED)) return;
    int begin, end;
    parallel_split(job->count, job->align, chunk, job->chunks, &begin, &end);
    if (begin < end) job->fn(job->ctx, begin, end);
}

static void range_worker(void *ctx, int worker, int nworkers) {
    RangeJob *job = ctx;
    int home = worker * job->per_worker;
    for (int i = 0; i < job->chunks; i++) run_chunk(job, (home + i) % job->chunks);
}

/* Workers worth waking for `work` multiply-adds: one per min_work of it. */
static int workers_for(uint64_t work) {
    if (!min_work) return runner_workers;
    uint64_t n = work / min_work;
    return n < (uint64_t)runner_workers ? (n < 1 ? 1 : (int)n) : runner_workers;
}

/* parallel_for with chunks_per_worker chunks per worker (1 keeps each
 * worker's share in one piece: token splits, where a piece reuses weights). */
static void parallel_for_chunks(int count, int align, uint64_t work, int chunks_per_worker,
                                parallel_range_fn fn, void *ctx) {
    if (count <= 0) return;
    if (!runner || work < min_work) {
        fn(ctx, 0, count);
        return;
    }
    if (align < 1) align = 1;
    int units = (int)(((long)count + align - 1) / align);
    int workers = workers_for(work);
    if (workers > units) workers = units;
    if (workers <= 1) {
        fn(ctx, 0, count);
        return;
    }
    int per_worker = chunks_per_worker;
    if (workers * per_worker > MAX_CHUNKS) per_worker = MAX_CHUNKS / workers;
    if (per_worker < 1) per_worker = 1;
    int chunks = workers * per_worker;
    if (chunks > units) chunks = units;
    RangeJob job = {
        .fn = fn, .ctx = ctx, .count = count, .align = align, .chunks = chunks, .per_worker = per_worker};
    memset(job.claimed, 0, (size_t)chunks);
    runner(range_worker, &job, workers);
}

void parallel_for(int count, int align, uint64_t work, parallel_range_fn fn, void *ctx) {
    parallel_for_chunks(count, align, work, CHUNKS_PER_WORKER, fn, ctx);
}

/* ---------------------------------------------------------------- matmuls */

/* One matmul's arguments; the union of what every variant needs. */
typedef struct {
    float *out;
    const float *x, *w;
    const int8_t *q;
    const float *s;
    const int16_t *xq;
    const float *xs;
    int batch, n, d, group_size;
    int out_stride, x_stride; /* fp32 batches: floats between positions */
} MatmulJob;

static uint64_t macs(int batch, int n, int d) {
    return (uint64_t)batch * (uint64_t)n * (uint64_t)d;
}

static void fp32_rows(void *ctx, int r0, int r1) {
    MatmulJob *j = ctx;
    kernels_active()->matmul(j->out + r0, j->x, j->w + (size_t)r0 * j->n, j->n, r1 - r0);
}

void parallel_matmul(float *out, const float *x, const float *w, int n, int d) {
    if (!runner || macs(1, n, d) < min_work) {
        kernels_active()->matmul(out, x, w, n, d);
        return;
    }
    MatmulJob job = {.out = out, .x = x, .w = w, .n = n, .d = d};
    parallel_for(d, KERNEL_ROW_BLOCK, macs(1, n, d), fp32_rows, &job);
}

/* fp32 batches are split by row: each worker reads its share of the
 * weights from memory once and uses it for every token (split by token,
 * each would read all of them, and the fp32 GEMM is bound by that read at
 * the batch sizes of a prefill). */
static void fp32_batch_rows(void *ctx, int r0, int r1) {
    MatmulJob *j = ctx;
    kernels_active()->matmul_batch(j->out + r0, j->out_stride, j->x, j->x_stride, j->batch,
                                   j->w + (size_t)r0 * j->n, j->n, r1 - r0);
}

void parallel_matmul_batch(float *out, int out_stride, const float *x, int x_stride, int batch,
                           const float *w, int n, int d) {
    uint64_t work = macs(batch, n, d);
    if (!runner || work < min_work) {
        kernels_active()->matmul_batch(out, out_stride, x, x_stride, batch, w, n, d);
        return;
    }
    MatmulJob job = {.out = out, .x = x, .w = w, .batch = batch, .n = n, .d = d};
    job.out_stride = out_stride;
    job.x_stride = x_stride;
    parallel_for(d, FP32_GEMM_ROW_BLOCK, work, fp32_batch_rows, &job);
}

/* int8 weights with groups that may straddle rows: a chunk must start on a
 * row whose first value begins a group, so its scales line up. */
static void q8_rows(void *ctx, int r0, int r1) {
    MatmulJob *j = ctx;
    size_t first = (size_t)r0 * j->n;
    for (int b = 0; b < j->batch; b++)
        kernels_active()->matmul_q8(j->out + (size_t)b * j->d + r0, j->x + (size_t)b * j->n, j->q + first,
                                    j->s + first / j->group_size, j->n, r1 - r0, j->group_size);
}

static int gcd(int a, int b) {
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

void parallel_matmul_q8(float *out, const float *x, int batch, const int8_t *q, const float *s, int n, int d,
                        int group_size) {
    uint64_t work = macs(batch, n, d);
    if (!runner || work < min_work || group_size < 1 || n < 1) {
        for (int b = 0; b < batch; b++)
            kernels_active()->matmul_q8(out + (size_t)b * d, x + (size_t)b * n, q, s, n, d, group_size);
        return;
    }
    MatmulJob job = {
        .out = out, .x = x, .q = q, .s = s, .batch = batch, .n = n, .d = d, .group_size = group_size};
    int align = group_size / gcd(n % group_size, group_size); /* rows per whole number of groups */
    parallel_for(d, align, work, q8_rows, &job);
}

static void q8q_tokens(void *ctx, int b0, int b1) {
    MatmulJob *j = ctx;
    int groups = j->n / j->group_size;
    kernels_active()->matmul_q8q(j->out + (size_t)b0 * j->d, j->xq + (size_t)b0 * j->n,
                                 j->xs + (size_t)b0 * groups, b1 - b0, j->q, j->s, j->n, j->d, j->group_size);
}

static void q8q_rows(void *ctx, int r0, int r1) {
    MatmulJob *j = ctx;
    int groups = j->n / j->group_size;
    for (int b = 0; b < j->batch; b++)
        kernels_active()->matmul_q8q(j->out + (size_t)b * j->d + r0, j->xq + (size_t)b * j->n,
                                     j->xs + (size_t)b * groups, 1, j->q + (size_t)r0 * j->n,
                                     j->s + (size_t)r0 * groups, j->n, r1 - r0, j->group_size);
}

void parallel_matmul_q8q(float *out, const int16_t *xq, const float *xs, int batch, const int8_t *wq,
                         const float *ws, int n, int d, int group_size) {
    uint64_t work = macs(batch, n, d);
    if (!runner || work < min_work) {
        kernels_active()->matmul_q8q(out, xq, xs, batch, wq, ws, n, d, group_size);
        return;
    }
    MatmulJob job = {.out = out,
                     .xq = xq,
                     .xs = xs,
                     .q = wq,
                     .s = ws,
                     .batch = batch,
                     .n = n,
                     .d = d,
                     .group_size = group_size};
    if (batch >= runner_workers)
        parallel_for_chunks(batch, 1, work, 1, q8q_tokens, &job);
    else
        parallel_for(d, KERNEL_ROW_BLOCK, work, q8q_rows, &job);
}
