/* read_pace.h - the pace of a long read in the loader: when it prints a
 * progress line, and how many bytes it asks the firmware for at a time.
 *
 * Pure arithmetic on byte counts and elapsed milliseconds (no firmware
 * calls), so tests/host/test_read_pace.c checks it on simulated reads.
 *
 * A progress line can only come between two requests, so requests are
 * sized to take about READ_PACE_REQUEST_MS at the speed measured so far:
 * the first line then comes soon after the read has taken a second, on a
 * slow USB stick (whose 64 MiB request would take seconds) as well as on a
 * fast disk (large requests, which the firmware reads at full speed).
 */
#ifndef BOOT_READ_PACE_H
#define BOOT_READ_PACE_H

#include <stdbool.h>
#include <stdint.h>

#define READ_PACE_FIRST_REPORT_MS 1000ULL  /* the first line once a read has taken this long */
#define READ_PACE_REPORT_EVERY_MS 2000ULL  /* later lines at least this far apart: no flood */
#define READ_PACE_REQUEST_MS 250ULL        /* what one request should take */
#define READ_PACE_MIN_REQUEST (4ULL << 20) /* also the first request, before any speed is known */
#define READ_PACE_MAX_REQUEST (64ULL << 20)

/* Whether a progress line is due after `elapsed_ms`, `reports` lines so far
 * (the last at `last_report_ms`). */
static inline bool read_pace_report_due(uint64_t elapsed_ms, uint64_t reports, uint64_t last_report_ms) {
    if (reports == 0) return elapsed_ms >= READ_PACE_FIRST_REPORT_MS;
    return elapsed_ms >= last_report_ms + READ_PACE_REPORT_EVERY_MS;
}

/* Bytes for the next request: about READ_PACE_REQUEST_MS at the speed of
 * `done` bytes in `elapsed_ms`, between the two limits, a whole number of
 * `unit`s (the block size; 1 for files), and never past `left`. */
static inline uint64_t read_pace_request(uint64_t done, uint64_t elapsed_ms, uint64_t left, uint64_t unit) {
    uint64_t want = READ_PACE_MIN_REQUEST;
    if (done && elapsed_ms) {
        uint64_t per_ms = done / elapsed_ms;
        want = per_ms > READ_PACE_MAX_REQUEST / READ_PACE_REQUEST_MS ? READ_PACE_MAX_REQUEST
                                                                     : per_ms * READ_PACE_REQUEST_MS;
    } else if (done) {
        want = READ_PACE_MAX_REQUEST; /* under a millisecond so far: fast */
    }
    if (want < READ_PACE_MIN_REQUEST) want = READ_PACE_MIN_REQUEST;
    if (unit > 1) want -= want % unit;
    if (want < unit) want = unit;
    return want < left ? want : left;
}

#endif
