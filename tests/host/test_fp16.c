/* test_fp16 - fp32 -> fp16 as the KV cache stores it: ggml_fp32_to_fp16
 * (the scalar path) against known values worked out by hand and against
 * the host's F16C instruction (vcvtps2ph, round to nearest even) over every
 * half's neighbourhood and a sweep of all floats; ggml_fp32_to_fp16_row
 * (F16C when the CPU has it) equals the scalar path at every length. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "llm/compute/cpu_features.h"
#include "llm/tensor/ggml_types.h"
#include "tests/host/check.h"

static float from_bits(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}

__attribute__((target("avx,f16c"))) static uint16_t f16c_convert(float f) {
    return (uint16_t)_mm_extract_epi16(_mm_cvtps_ph(_mm_set_ss(f), _MM_FROUND_TO_NEAREST_INT), 0);
}

static void test_known_values(void) {
    static const struct {
        uint32_t in;
        uint16_t want;
    } cases[] = {
        {0x3f800000, 0x3c00}, /* 1 */
        {0x3f801000, 0x3c00}, /* 1 + 2^-11: a tie, stays even */
        {0x3f803000, 0x3c02}, /* 1 + 3 * 2^-11: a tie, up to even */
        {0x3f801001, 0x3c01}, /* just past the tie */
        {0xc0000000, 0xc000}, /* -2 */
        {0x477fe000, 0x7bff}, /* 65504, the largest half */
        {0x477fefff, 0x7bff}, /* just under the tie with 65536 */
        {0x477ff000, 0x7c00}, /* 65520: the tie rounds to infinity */
        {0x33800000, 0x0001}, /* 2^-24, the smallest subnormal */
        {0x33000000, 0x0000}, /* 2^-25: a tie with zero, to even */
        {0x33000001, 0x0001}, /* just past it */
        {0x33c00000, 0x0002}, /* 3 * 2^-25: a tie, up to even */
        {0x34400000, 0x0003}, /* 3 * 2^-24 */
        {0x387fc000, 0x03ff}, /* the largest subnormal */
        {0x387fe000, 0x0400}, /* its tie with the smallest normal */
        {0x38800000, 0x0400}, /* 2^-14 */
        {0x00000001, 0x0000}, /* a float subnormal */
        {0x80000000, 0x8000}, /* -0 */
        {0x7f800000, 0x7c00}, /* inf */
        {0xff800000, 0xfc00}, /* -inf */
        {0x7fc00000, 0x7e00}, /* quiet NaN */
        {0x7f800001, 0x7e00}, /* signalling NaN, payload below 10 bits: quieted */
        {0xffa02000, 0xff01}, /* payload's top bits kept, sign kept */
    };
    int bad = -1;
    for (unsigned i = 0; i < sizeof cases / sizeof *cases && bad < 0; i++)
        if (ggml_fp32_to_fp16(from_bits(cases[i].in)) != cases[i].want) bad = (int)i;
    check(bad < 0, "fp32->fp16 known values (ties to even, subnormals, overflow, inf, NaN)",
          "0x%08x gave %04x, want %04x", bad < 0 ? 0 : cases[bad].in,
          bad < 0 ? 0 : ggml_fp32_to_fp16(from_bits(cases[bad].in)), bad < 0 ? 0 : cases[bad].want);
}

/* Every half value's float, the midpoints to its neighbours and one float
 * ulp either side of each, both signs; then every 251st float. */
static void test_against_f16c(void) {
    if (!cpu_features()->f16c) {
        check_skipped("fp32->fp16 equals F16C's vcvtps2ph", "the host has no F16C");
        return;
    }
    uint64_t tried = 0, differ = 0;
    uint32_t first = 0;
    for (uint32_t h = 0; h < 0x7c00; h++) {
        float lo = ggml_fp16_to_fp32((uint16_t)h), hi = ggml_fp16_to_fp32((uint16_t)(h + 1));
        uint32_t base, mid;
        memcpy(&base, &lo, 4);
        float m = (float)(((double)lo + hi) / 2);
        memcpy(&mid, &m, 4);
        uint32_t around[] = {base, base + 1, base - 1, mid, mid + 1, mid - 1};
        for (unsigned k = 0; k < 6; k++)
            for (int negative = 0; negative < 2; negative++) {
                uint32_t sign = negative ? 0x80000000u : 0;
                float f = from_bits(around[k] ^ sign);
                tried++;
                if (ggml_fp32_to_fp16(f) != f16c_convert(f) && differ++ == 0) first = around[k] ^ sign;
            }
    }
    for (uint64_t u = 0; u <= 0xffffffffu; u += 251) {
        float f = from_bits((uint32_t)u);
        tried++;
        if (ggml_fp32_to_fp16(f) != f16c_convert(f) && differ++ == 0) first = (uint32_t)u;
    }
    check(differ == 0,
          "fp32->fp16 equals F16C's vcvtps2ph (every half's ties and neighbours, every 251st float)",
          "%llu of %llu differ, first 0x%08x", (unsigned long long)differ, (unsigned long long)tried, first);
}

static void test_rows(void) {
    float x[40];
    uint16_t got[40], want[40];
    uint32_t seed = 12345;
    int same = 1;
    for (int n = 0; n <= 40; n++) {
        for (int i = 0; i < n; i++) {
            seed = seed * 1664525u + 1013904223u;
            /* Any bit pattern: specials and subnormals too. */
            x[i] = i % 3 ? from_bits(seed) : (float)(int)(seed >> 8) * 1e-9f;
        }
        for (int i = 0; i < n; i++) want[i] = ggml_fp32_to_fp16(x[i]);
        memset(got, 0xaa, sizeof got);
        ggml_fp32_to_fp16_row(got, x, n);
        same &= memcmp(got, want, (size_t)n * 2) == 0 && got[n < 40 ? n : 39] == (n < 40 ? 0xaaaa : want[39]);
    }
    check(same, "ggml_fp32_to_fp16_row equals ggml_fp32_to_fp16 at lengths 0..40, nothing past n written",
          "a value differs");
}

/* The row conversion (the KV cache's) against ggml_fp32_to_fp16 on both of
 * its paths, F16C and the inline one for normal halves: a sweep of bit
 * patterns (every sign, exponent, NaN and rounding case, 1M of them) and the
 * edges of the inline range: ties that carry into the exponent, the largest
 * half and the first value that rounds to infinity, the smallest normal
 * half and the float below. */
static void test_row_paths(void) {
    static const float edges[] = {
        1.0f + 2047.5f / 2048, 2.0f - 1.0f / 4096, 65504.0f,       65519.0f,     65520.0f,
        6.1035156e-5f,         6.1035152e-5f,      -6.1035156e-5f, 0x1.ffep-15f, -0x1.ffffp-1f};
    struct cpu_features saved = *cpu_features(), no_f16c = saved;
    no_f16c.f16c = false;
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 0 && !saved.f16c) continue;
        cpu_features_set(pass == 0 ? &saved : &no_f16c);
        int same = 1;
        for (uint64_t bits = 0; bits < ((uint64_t)1 << 32); bits += 4099) {
            float f = from_bits((uint32_t)bits);
            uint16_t got;
            ggml_fp32_to_fp16_row(&got, &f, 1);
            same &= got == ggml_fp32_to_fp16(f);
        }
        uint16_t h[sizeof edges / sizeof *edges];
        ggml_fp32_to_fp16_row(h, edges, (int)(sizeof edges / sizeof *edges));
        for (unsigned i = 0; i < sizeof edges / sizeof *edges; i++)
            same &= h[i] == ggml_fp32_to_fp16(edges[i]);
        check(same && h[0] == 0x4000 && h[4] == 0x7c00,
              pass == 0 ? "f16 rows with F16C equal ggml_fp32_to_fp16 over 1M bit patterns and the edges"
                        : "f16 rows without F16C (the inline normal-half path) equal ggml_fp32_to_fp16",
              "a value differs (1 + 2047.5/2048 -> %04x, 65520 -> %04x)", h[0], h[4]);
    }
    cpu_features_set(&saved);
}

int main(void) {
    test_known_values();
    test_against_f16c();
    test_rows();
    test_row_paths();
    return failures != 0;
}
