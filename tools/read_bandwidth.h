/* read_bandwidth.h - the machine's streaming read speed, for the benchmarks'
 * "share of the read-bandwidth limit" (tools/bench.c, tools/bench_bandwidth.c):
 * the best of a few passes over a buffer split into 1 MiB blocks among the
 * thread pool's workers (tools/thread_pool.h, started by the caller).
 * Header-only (static functions) because every tools/NAME.c becomes its own
 * program. */
#ifndef TOOLS_READ_BANDWIDTH_H
#define TOOLS_READ_BANDWIDTH_H

#include <immintrin.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "llm/compute/parallel.h"

#define READ_BLOCK_WORDS (1u << 17) /* 1 MiB */

typedef struct {
    const uint64_t *data;
    _Atomic uint64_t sum; /* keeps the reads from being optimised away */
} ReadJob;

static inline double read_bandwidth_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Blocks [b0, b1) of the buffer, claimed through parallel_for: 256-bit
 * loads into four independent accumulators when the CPU has AVX2 (128-bit
 * loads cap one core below its L3 speed), prefetching well ahead as the
 * matmul kernels do (without it one core stalls on every miss and reads
 * far below the real limit). */
__attribute__((target("avx2"))) static void read_blocks_avx2(void *ctx, int b0, int b1) {
    ReadJob *job = ctx;
    const uint64_t *p = job->data + (size_t)b0 * READ_BLOCK_WORDS,
                   *end = job->data + (size_t)b1 * READ_BLOCK_WORDS;
    __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
    for (; p < end; p += 16) {
        __builtin_prefetch(p + 512);
        __builtin_prefetch(p + 520);
        a = _mm256_add_epi64(a, _mm256_loadu_si256((const __m256i *)p));
        b = _mm256_add_epi64(b, _mm256_loadu_si256((const __m256i *)(p + 4)));
        c = _mm256_add_epi64(c, _mm256_loadu_si256((const __m256i *)(p + 8)));
        d = _mm256_add_epi64(d, _mm256_loadu_si256((const __m256i *)(p + 12)));
    }
    uint64_t lanes[4];
    _mm256_storeu_si256((__m256i *)lanes, _mm256_add_epi64(_mm256_add_epi64(a, b), _mm256_add_epi64(c, d)));
    atomic_fetch_add(&job->sum, lanes[0] + lanes[1] + lanes[2] + lanes[3]);
}

static void read_blocks_sse2(void *ctx, int b0, int b1) {
    ReadJob *job = ctx;
    const uint64_t *p = job->data + (size_t)b0 * READ_BLOCK_WORDS,
                   *end = job->data + (size_t)b1 * READ_BLOCK_WORDS;
    __m128i a = _mm_setzero_si128(), b = a, c = a, d = a;
    for (; p < end; p += 8) {
        __builtin_prefetch(p + 256);
        a = _mm_add_epi64(a, _mm_load_si128((const __m128i *)p));
        b = _mm_add_epi64(b, _mm_load_si128((const __m128i *)(p + 2)));
        c = _mm_add_epi64(c, _mm_load_si128((const __m128i *)(p + 4)));
        d = _mm_add_epi64(d, _mm_load_si128((const __m128i *)(p + 6)));
    }
    uint64_t lanes[2];
    _mm_storeu_si128((__m128i *)lanes, _mm_add_epi64(_mm_add_epi64(a, b), _mm_add_epi64(c, d)));
    atomic_fetch_add(&job->sum, lanes[0] + lanes[1]);
}

/* Best of `passes` streaming passes over the whole 1 MiB blocks of the
 * buffer (16-byte aligned), in bytes per second, on the pool's threads. */
static double measure_bandwidth(const uint64_t *data, size_t bytes, int passes) {
    ReadJob job = {data, 0};
    int blocks = (int)(bytes / 8 / READ_BLOCK_WORDS);
    parallel_range_fn read = __builtin_cpu_supports("avx2") ? read_blocks_avx2 : read_blocks_sse2;
    double best = 0, moved = (double)blocks * READ_BLOCK_WORDS * 8;
    for (int pass = 0; pass < passes; pass++) {
        double t0 = read_bandwidth_now();
        parallel_for(blocks, 1, UINT64_MAX, read, &job);
        double t = read_bandwidth_now() - t0;
        if (t > 0 && moved / t > best) best = moved / t;
    }
    return best;
}

#endif
