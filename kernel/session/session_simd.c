/* session_simd.c - how the model's arithmetic runs: which kernel set (scalar,
 * SSE2, AVX2, AVX-512), chosen at boot by timing them (kernels_probe with
 * the kernel's clock), and on how many workers (llm/compute/parallel.h
 * driven by the worker pool). */
#include "kernel/session/session.h"

#include "kernel/arch/workers.h"
#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include "llm/compute/kernels.h"
#include "llm/compute/parallel.h"

void session_simd_apply(struct session *s, enum isa simd) {
    s->settings.simd = simd;
    kernels_use(simd);
}

enum isa session_simd_fastest(void) {
    uint64_t ns[ISA_COUNT];
    enum isa best = kernels_probe(timer_ns, ns);
    if (isa_usable(ISA_AVX512))
        kprintf("llm: matmul probe: sse2 %llu ns, avx2 %llu ns, avx512 %llu ns\n",
                (unsigned long long)ns[ISA_SSE2], (unsigned long long)ns[ISA_AVX2],
                (unsigned long long)ns[ISA_AVX512]);
    else if (isa_usable(ISA_AVX2))
        kprintf("llm: matmul probe: sse2 %llu ns, avx2 %llu ns\n", (unsigned long long)ns[ISA_SSE2],
                (unsigned long long)ns[ISA_AVX2]);
    return best;
}

/* limit 0: the workers measured to pay off at boot (workers_calibrate). */
int session_use_workers(int limit) {
    int n = workers_set_limit(limit > 0 ? limit : workers_useful());
    parallel_set_runner(workers_run_claimed, n);
    return n;
}
