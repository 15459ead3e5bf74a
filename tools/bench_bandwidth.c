/* bench_bandwidth - the read-bandwidth limit of this machine, on 1 thread
 * and on every core: streaming reads (tools/read_bandwidth.h) of a buffer
 * that fits the last-level cache and of one several times larger than it
 * (L3 is 480 MiB on the Xeon this project is measured on, so "DRAM" means
 * GiBs here), best of a few passes each.
 *
 *   bench_bandwidth [--threads 1,2] [--sizes 64,4096]   (MiB)
 *
 * One line per size and thread count, "bandwidth THREADS MIB GB/s", read
 * by tools/bench_compare.py for the decode rows' share of the limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/read_bandwidth.h"
#include "tools/thread_pool.h"

/* Comma-separated positive numbers into out (at most max); their count, or
 * 0 when the list is malformed. */
static int parse_list(const char *s, int *out, int max) {
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 1 << 20) return 0;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return 0;
    }
    return *s ? 0 : n;
}

int main(int argc, char **argv) {
    int threads[8] = {1, 2}, sizes[8] = {64, 4096};
    int n_threads = 2, n_sizes = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            n_threads = parse_list(argv[++i], threads, 8);
        else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
            n_sizes = parse_list(argv[++i], sizes, 8);
        else
            n_threads = 0;
        if (!n_threads || !n_sizes) {
            fprintf(stderr,
                    "usage: bench_bandwidth [--threads 1,2] [--sizes 64,4096] (MiB, comma-separated)\n");
            return 2;
        }
    }
    for (int s = 0; s < n_sizes; s++) {
        size_t bytes = (size_t)sizes[s] << 20;
        uint64_t *buffer = malloc(bytes);
        if (!buffer) {
            fprintf(stderr, "bench_bandwidth: no memory for %d MiB\n", sizes[s]);
            return 1;
        }
        for (size_t i = 0; i < bytes / 8; i++) buffer[i] = i * 0x9E3779B97F4A7C15ull; /* pages really there */
        for (int k = 0; k < n_threads; k++) {
            if (threads[k] > THREAD_POOL_MAX) threads[k] = THREAD_POOL_MAX;
            thread_pool_start(threads[k]);
            /* big buffers: fewer passes, each already long */
            double best = measure_bandwidth(buffer, bytes, sizes[s] >= 1024 ? 3 : 20);
            thread_pool_stop();
            printf("bandwidth %d %d %.2f\n", threads[k], sizes[s], best / 1e9);
            fflush(stdout);
        }
        free(buffer);
    }
    return 0;
}
