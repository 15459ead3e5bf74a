/* isa.h - the instruction sets llm/ runs its arithmetic in, in the one
 * encoding every part uses (the kernel sets, the shell's /set simd, the
 * tools' --simd): ordered, so isa >= ISA_AVX2 means AVX2+FMA code may run. */
#ifndef LLM_COMPUTE_ISA_H
#define LLM_COMPUTE_ISA_H

#include <stdbool.h>

enum isa { ISA_SCALAR, ISA_SSE2, ISA_AVX2, ISA_AVX512, ISA_COUNT };

/* "scalar", "sse2", "avx2", "avx512" (the names /set simd and --simd take). */
const char *isa_name(enum isa isa);
/* The set a name means, or -1 for none of isa_name's names. */
int isa_parse(const char *name);
/* The widest set this CPU runs, from cpu_features(): ISA_AVX512 needs
 * AVX-512F+BW+VL, ISA_AVX2 AVX2+FMA+F16C (what target.h lets each set's
 * code use), else ISA_SSE2. In the kernel it is ISA_SSE2 until the kernel
 * has called cpu_features_set(). */
enum isa isa_widest(void);
/* Whether this CPU runs `isa` (scalar and SSE2 always). */
bool isa_usable(enum isa isa);

#endif
