/* isa.c - see isa.h. */
#include "llm/compute/isa.h"

#include "lib/string.h"
#include "llm/compute/cpu_features.h"

static const char *const names[ISA_COUNT] = {"scalar", "sse2", "avx2", "avx512"};

const char *isa_name(enum isa isa) {
    return (unsigned)isa < ISA_COUNT ? names[isa] : "unknown";
}

int isa_parse(const char *name) {
    for (int i = 0; i < ISA_COUNT; i++)
        if (strcmp(name, names[i]) == 0) return i;
    return -1;
}

enum isa isa_widest(void) {
    const struct cpu_features *f = cpu_features();
    if (!(f->avx2 && f->fma && f->f16c)) return ISA_SSE2;
    return f->avx512f && f->avx512bw && f->avx512vl ? ISA_AVX512 : ISA_AVX2;
}

bool isa_usable(enum isa isa) {
    return isa <= isa_widest();
}
