/* session_simd.c - how the model's arithmetic runs: which kernel set (scalar,
 * SSE2, AVX2, AVX-512), chosen at boot by timing them, and on how many
 * workers (llm/compute/parallel.h driven by the worker pool). */
#include "kernel/session/session.h"

#include "kernel/arch/workers.h"
#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include "llm/compute/cpu_features.h"
#include "llm/compute/kernels.h"
#include "llm/compute/parallel.h"

const char *const session_simd_names[4] = {"scalar", "sse2", "avx2", "avx512"};

void session_simd_apply(struct session *s, enum session_simd simd) {
    s->settings.simd = simd;
    kernels_select_level(simd - 1); /* 1 sse2, 2 avx2, 3 avx512 -> KERNELS_SSE2 .. KERNELS_AVX512 */
    if (simd == SESSION_SIMD_SCALAR) kernels = &kernels_scalar;
}

/* From the flags cpu_init published (cleared unless XCR0 has the state they
 * need), with the same rule as every host tool: kernels_widest_level(). */
int session_avx2_usable(void) {
    return kernels_widest_level() >= KERNELS_AVX2;
}

int session_avx512_usable(void) {
    return kernels_widest_level() >= KERNELS_AVX512;
}

/* Times one matmul with a kernel set (best of three, in ns). Under QEMU's
 * TCG the AVX2+FMA code is ~20x slower than SSE2 while natively it is faster,
 * so the choice is measured, not assumed from CPUID. */
static uint64_t time_matmul(const KernelSet *set) {
    enum { N = 128, D = 32 };
    static float w[N * D], x[N], out[D];
    for (int i = 0; i < N * D; i++) w[i] = (float)((i * 7919) % 201 - 100) * 0.001f;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 17) * 0.01f;
    uint64_t best = ~0ULL;
    for (int rep = 0; rep < 3; rep++) {
        uint64_t t0 = timer_ns();
        set->matmul(out, x, w, N, D);
        uint64_t t = timer_ns() - t0;
        if (t < best) best = t;
    }
    return best;
}

enum session_simd session_simd_fastest(void) {
    uint64_t sse2 = time_matmul(&kernels_sse2);
    if (!session_avx2_usable()) return SESSION_SIMD_SSE2;
    uint64_t avx2 = time_matmul(&kernels_avx2);
    enum session_simd best = avx2 < sse2 ? SESSION_SIMD_AVX2 : SESSION_SIMD_SSE2;
    if (session_avx512_usable()) {
        uint64_t avx512 = time_matmul(&kernels_avx512);
        kprintf("llm: matmul probe: sse2 %llu ns, avx2 %llu ns, avx512 %llu ns\n", (unsigned long long)sse2,
                (unsigned long long)avx2, (unsigned long long)avx512);
        if (avx512 < (best == SESSION_SIMD_AVX2 ? avx2 : sse2)) best = SESSION_SIMD_AVX512;
    } else {
        kprintf("llm: matmul probe: sse2 %llu ns, avx2 %llu ns\n", (unsigned long long)sse2,
                (unsigned long long)avx2);
    }
    return best;
}

/* limit 0: the workers measured to pay off at boot (workers_calibrate). */
int session_use_workers(int limit) {
    int n = workers_set_limit(limit > 0 ? limit : workers_useful());
    parallel_set_runner(workers_run_claimed, n);
    return n;
}
