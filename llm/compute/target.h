/* target.h - function attributes for each instruction set the SIMD files use.
 *
 * lib/ and llm/ are compiled for the SSE2 baseline (both builds, same bits);
 * wider code is enabled per function, and chosen at run time through
 * cpu_features(), so one binary runs on every x86_64 CPU. */
#ifndef LLM_SIMD_TARGET_H
#define LLM_SIMD_TARGET_H

#define TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#define TARGET_AVX512 __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define TARGET_AVX512_VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

/* QEMU's TCG chains one translated block to the next directly only within
 * a guest page: a hot loop across a page boundary takes a lookup on every
 * turn. The kernels QEMU spends its time in (the SSE2 GGUF matmuls and
 * gemms, the SSE2 int8 matmul and SWAR gemms, the SSE2/AVX2 attention
 * kernels) start on a page of their own, so their speed there does not move
 * with unrelated code. Measured: 15M Q4_0 decode 43 -> 38 ms/token once its
 * matmul stopped straddling a page; decode at 8k positions of a tiny model,
 * 61 against 280 tok/s for the same attention code at two addresses. */
#define TCG_PAGE_ALIGNED __attribute__((aligned(4096)))

/* For the general-purpose-register kernels meant for TCG (int8_swar.c,
 * q4_0_swar.c): GCC's SLP vectoriser would gather their integer lane sums
 * into SSE registers (movd, punpckldq: a helper call each under TCG), where
 * plain stores cost a host instruction. */
#define TCG_NO_SLP __attribute__((optimize("no-tree-slp-vectorize")))

#endif
