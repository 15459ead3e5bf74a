/* bigint.h - small fixed-capacity unsigned big integers, used internally by
 * the exact decimal <-> binary conversions in format.c and parse_float.c.
 * Capacity covers every double: 2^1074 * 10^1100 fits easily. Operations that
 * would overflow the capacity drop the excess limbs instead of writing past
 * the array (callers size their inputs so this never happens). */
#ifndef LIB_BIGINT_H
#define LIB_BIGINT_H

#include <stdint.h>

#define BIGINT_LIMBS 180 /* 5760 bits */

struct bigint {
    uint32_t limb[BIGINT_LIMBS]; /* little-endian 32-bit limbs */
    int len;                     /* used limbs; limb[len-1] != 0 unless len == 0 */
};

void bigint_set_u64(struct bigint *b, uint64_t v);
int bigint_is_zero(const struct bigint *b);
void bigint_mul_small(struct bigint *b, uint32_t m);
void bigint_add_small(struct bigint *b, uint32_t a);
/* b /= d (d > 0); returns the remainder. */
uint32_t bigint_divmod_small(struct bigint *b, uint32_t d);
void bigint_mul_pow10(struct bigint *b, int n);
void bigint_shl(struct bigint *b, int bits);
void bigint_shr1(struct bigint *b);
int bigint_bitlen(const struct bigint *b);
int bigint_cmp(const struct bigint *a, const struct bigint *b);
/* a -= b; requires a >= b. */
void bigint_sub(struct bigint *a, const struct bigint *b);
/* Returns b >> k (must fit in 32 bits) and clears those bits from b. */
uint32_t bigint_take_above(struct bigint *b, int k);
/* The 64 bits just below the top (value >> (bitlen-64), or value << (64-bitlen)),
 * with *sticky set when any lower bit is non-zero. */
uint64_t bigint_top64(const struct bigint *b, int *sticky);

#endif
