/* test_kv_store - the q8_0 KV cache rows of every kernel level this CPU
 * runs (llm/compute/q8_0_store.h): values whose rounding is known by hand
 * (halves round away from zero, which the CPU's own conversion does not
 * do), the bytes of the scalar variant on random rows of many scales, and
 * kv_store_row following the active kernel set. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/compute/q8_0_store.h"
#include "tests/host/check.h"

/* Each set's q8_0 store, by enum isa. */
static q8_0_store_fn *const stores[ISA_COUNT] = {q8_0_store_scalar, q8_0_store_sse2, q8_0_store_avx2,
                                                 q8_0_store_avx512};

/* A block whose largest magnitude is 127, so d = 1 and each value is
 * rounded as it is: the integers each must become. */
static void test_known_rounding(q8_0_store_fn *store, const char *level) {
    static const struct {
        float x;
        int8_t want;
    } cases[] = {{127.0f, 127},     {-127.0f, -127},   {0.5f, 1},        {-0.5f, -1},        {1.5f, 2},
                 {-1.5f, -2},       {2.5f, 3},         {-2.5f, -3},      {126.5f, 127},      {-126.5f, -127},
                 {0.49999997f, 0},  {-0.49999997f, 0}, {0.50000006f, 1}, {-0.50000006f, -1}, {3.4999998f, 3},
                 {-3.4999998f, -3}, {0.0f, 0},         {-0.0f, 0},       {64.5f, 65},        {-64.5f, -65},
                 {1e-30f, 0},       {-1e-30f, 0},      {100.25f, 100},   {-100.75f, -101},   {5.5f, 6},
                 {-5.5f, -6},       {7.0f, 7},         {-8.5f, -9},      {125.5f, 126},      {-125.5f, -126},
                 {32.5f, 33},       {-0.25f, 0}};
    _Static_assert(sizeof cases / sizeof *cases == QK32, "one block of cases");
    float x[QK32];
    for (int j = 0; j < QK32; j++) x[j] = cases[j].x;
    BlockQ8_0 got;
    store(&got, x, QK32);
    char name[96], why[128] = "";
    for (int j = 0; j < QK32 && !why[0]; j++)
        if (got.qs[j] != cases[j].want)
            snprintf(why, sizeof why, "%.9g became %d, not %d", (double)cases[j].x, got.qs[j], cases[j].want);
    if (!why[0] && got.d != 0x3c00) snprintf(why, sizeof why, "scale %04x, not 1.0 (3c00)", got.d);
    snprintf(name, sizeof name, "q8_0 KV store (%s): halves round away from zero", level);
    check(!why[0], name, "%s", why);
}

static float uniform(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(*state >> 40) / (float)(1 << 24) - 0.5f;
}

/* Rows of 1..8 blocks at scales from 1e-6 to 1e6, an all-zero block and
 * blocks of exact halves: the scalar variant's bytes. */
static void test_same_as_scalar(q8_0_store_fn *store, const char *level) {
    enum { MAX = 8 * QK32 };
    static const float scales[] = {1e-6f, 1e-3f, 0.1f, 1.0f, 3.0f, 100.0f, 1e4f, 1e6f};
    float x[MAX];
    BlockQ8_0 got[MAX / QK32], want[MAX / QK32];
    uint64_t seed = 7;
    int differ = 0, rows = 0;
    for (int trial = 0; trial < 400; trial++) {
        int n = QK32 * (1 + trial % 8);
        float s = scales[trial % 8];
        for (int j = 0; j < n; j++) x[j] = s * uniform(&seed);
        if (trial % 5 == 0) memset(x, 0, QK32 * sizeof(float)); /* d = 0: every value 0 */
        if (trial % 7 == 0) { /* d = 1 (max 127), so halves stay halves after scaling */
            for (int j = 0; j < QK32; j++) x[j] = (float)((int)(508.0f * uniform(&seed))) * 0.5f;
            x[3] = 127.0f;
        }
        memset(got, 0x55, sizeof got), memset(want, 0xaa, sizeof want);
        store(got, x, n);
        q8_0_store_scalar(want, x, n);
        differ += memcmp(got, want, (size_t)(n / QK32) * sizeof(BlockQ8_0)) != 0;
        rows++;
    }
    char name[96];
    snprintf(name, sizeof name, "q8_0 KV store (%s): scalar variant's bytes on %d rows", level, rows);
    check(differ == 0, name, "%d rows differ", differ);
}

int main(void) {
    int widest = isa_widest();
    for (int level = ISA_SCALAR; level <= ISA_AVX512; level++) {
        const char *label = isa_name(level);
        if (level > widest) {
            char name[96];
            snprintf(name, sizeof name, "q8_0 KV store (%s)", label);
            check_skipped(name, "this CPU cannot run it");
            continue;
        }
        q8_0_store_fn *store = stores[level];
        test_known_rounding(store, label);
        test_same_as_scalar(store, label);
        /* kv_store_row uses the active set's variant. */
        kernels_use(level);
        float x[2 * QK32];
        uint64_t seed = 3;
        for (int j = 0; j < 2 * QK32; j++) x[j] = 10.0f * uniform(&seed);
        BlockQ8_0 got[2], want[2];
        kv_store_row(GGML_TYPE_Q8_0, got, x, 2 * QK32);
        store(want, x, 2 * QK32);
        char name[96];
        snprintf(name, sizeof name, "kv_store_row q8_0 with the %s kernels", kernels_active()->name);
        check(memcmp(got, want, sizeof got) == 0 && kernels_active()->store_q8_0 == store, name,
              "not the level's variant");
    }
    kernels_use(ISA_SSE2);
    return failures ? 1 : 0;
}
