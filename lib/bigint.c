/* bigint.c - fixed-capacity unsigned big integers (see bigint.h). */
#include "lib/bigint.h"

static void trim(struct bigint *b) {
    while (b->len > 0 && b->limb[b->len - 1] == 0) b->len--;
}

void bigint_set_u64(struct bigint *b, uint64_t v) {
    b->limb[0] = (uint32_t)v;
    b->limb[1] = (uint32_t)(v >> 32);
    b->len = 2;
    trim(b);
}

int bigint_is_zero(const struct bigint *b) {
    return b->len == 0;
}

void bigint_mul_small(struct bigint *b, uint32_t m) {
    uint64_t carry = 0;
    for (int i = 0; i < b->len; i++) {
        uint64_t t = (uint64_t)b->limb[i] * m + carry;
        b->limb[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && b->len < BIGINT_LIMBS) b->limb[b->len++] = (uint32_t)carry;
    trim(b);
}

void bigint_add_small(struct bigint *b, uint32_t a) {
    uint64_t carry = a;
    for (int i = 0; i < b->len && carry; i++) {
        uint64_t t = (uint64_t)b->limb[i] + carry;
        b->limb[i] = (uint32_t)t;
        carry = t >> 32;
    }
    if (carry && b->len < BIGINT_LIMBS) b->limb[b->len++] = (uint32_t)carry;
}

uint32_t bigint_divmod_small(struct bigint *b, uint32_t d) {
    uint64_t rem = 0;
    for (int i = b->len - 1; i >= 0; i--) {
        uint64_t cur = (rem << 32) | b->limb[i];
        b->limb[i] = (uint32_t)(cur / d);
        rem = cur % d;
    }
    trim(b);
    return (uint32_t)rem;
}

void bigint_mul_pow10(struct bigint *b, int n) {
    for (; n >= 9; n -= 9) bigint_mul_small(b, 1000000000u);
    static const uint32_t small_pow10[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};
    if (n > 0) bigint_mul_small(b, small_pow10[n]);
}

void bigint_shl(struct bigint *b, int bits) {
    if (b->len == 0 || bits <= 0) return;
    int words = bits / 32, shift = bits % 32;
    int new_len = b->len + words + 1;
    if (new_len > BIGINT_LIMBS) new_len = BIGINT_LIMBS;
    for (int i = new_len - 1; i >= 0; i--) {
        int src = i - words;
        uint32_t hi = (src >= 0 && src < b->len) ? b->limb[src] : 0;
        uint32_t lo = (src - 1 >= 0 && src - 1 < b->len) ? b->limb[src - 1] : 0;
        b->limb[i] = shift ? (hi << shift) | (lo >> (32 - shift)) : hi;
    }
    b->len = new_len;
    trim(b);
}

void bigint_shr1(struct bigint *b) {
    for (int i = 0; i < b->len; i++)
        b->limb[i] = (b->limb[i] >> 1) | (i + 1 < b->len ? b->limb[i + 1] << 31 : 0);
    trim(b);
}

int bigint_bitlen(const struct bigint *b) {
    if (b->len == 0) return 0;
    return (b->len - 1) * 32 + (32 - __builtin_clz(b->limb[b->len - 1]));
}

int bigint_cmp(const struct bigint *a, const struct bigint *b) {
    if (a->len != b->len) return a->len < b->len ? -1 : 1;
    for (int i = a->len - 1; i >= 0; i--)
        if (a->limb[i] != b->limb[i]) return a->limb[i] < b->limb[i] ? -1 : 1;
    return 0;
}

void bigint_sub(struct bigint *a, const struct bigint *b) {
    int64_t borrow = 0;
    for (int i = 0; i < a->len; i++) {
        int64_t t = (int64_t)a->limb[i] - (i < b->len ? b->limb[i] : 0) - borrow;
        borrow = t < 0;
        a->limb[i] = (uint32_t)(t + (borrow ? ((int64_t)1 << 32) : 0));
    }
    trim(a);
}

uint32_t bigint_take_above(struct bigint *b, int k) {
    int word = k / 32, shift = k % 32;
    uint64_t high = 0;
    /* The result is < 2^32, so it lives in at most two limbs from `word`. */
    for (int i = b->len - 1; i >= word; i--) high = (high << 32) | b->limb[i];
    uint32_t result = (uint32_t)(high >> shift);
    if (word < b->len) {
        b->limb[word] &= shift ? ((1u << shift) - 1) : 0;
        for (int i = word + 1; i < b->len; i++) b->limb[i] = 0;
    }
    trim(b);
    return result;
}

uint64_t bigint_top64(const struct bigint *b, int *sticky) {
    int bits = bigint_bitlen(b);
    *sticky = 0;
    if (bits == 0) return 0;
    uint64_t top = 0;
    int shift = bits - 64; /* bit index of the lowest bit we keep */
    for (int i = 63; i >= 0; i--) {
        int pos = shift + i;
        if (pos < 0) break;
        if ((b->limb[pos / 32] >> (pos % 32)) & 1) top |= (uint64_t)1 << i;
    }
    if (shift <= 0) return top; /* fewer than 64 bits: top is value << -shift, exact */
    for (int pos = 0; pos < shift && !*sticky; pos++)
        if (pos % 32 == 0 && pos + 32 <= shift) {
            if (b->limb[pos / 32]) *sticky = 1;
            pos += 31;
        } else if ((b->limb[pos / 32] >> (pos % 32)) & 1) {
            *sticky = 1;
        }
    return top;
}
