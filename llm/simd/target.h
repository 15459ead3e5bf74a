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

#endif
