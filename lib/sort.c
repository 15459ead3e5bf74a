/* sort.c - qsort as introsort: median-of-three quicksort, insertion sort for
 * short ranges and heapsort when recursion gets too deep, so it is
 * O(n log n) for every input. */
#include <stdint.h>

#include "lib/stdlib.h"

typedef int (*compare_fn)(const void *, const void *);

static void swap_bytes(unsigned char *a, unsigned char *b, size_t size) {
    if (a == b) return;
    typedef uint64_t __attribute__((may_alias, aligned(1))) unaligned_u64;
    while (size >= 8) {
        uint64_t t = *(unaligned_u64 *)a;
        *(unaligned_u64 *)a = *(unaligned_u64 *)b;
        *(unaligned_u64 *)b = t;
        a += 8;
        b += 8;
        size -= 8;
    }
    while (size-- > 0) {
        unsigned char t = *a;
        *a++ = *b;
        *b++ = t;
    }
}

#define AT(i) (base + (i)*size)

static void insertion_sort(unsigned char *base, size_t n, size_t size, compare_fn cmp) {
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && cmp(AT(j - 1), AT(j)) > 0; j--) swap_bytes(AT(j - 1), AT(j), size);
}

static void sift_down(unsigned char *base, size_t root, size_t n, size_t size, compare_fn cmp) {
    for (;;) {
        size_t child = 2 * root + 1;
        if (child >= n) return;
        if (child + 1 < n && cmp(AT(child), AT(child + 1)) < 0) child++;
        if (cmp(AT(root), AT(child)) >= 0) return;
        swap_bytes(AT(root), AT(child), size);
        root = child;
    }
}

static void heap_sort(unsigned char *base, size_t n, size_t size, compare_fn cmp) {
    for (size_t i = n / 2; i-- > 0;) sift_down(base, i, n, size, cmp);
    for (size_t end = n - 1; end > 0; end--) {
        swap_bytes(AT(0), AT(end), size);
        sift_down(base, 0, end, size, cmp);
    }
}

static void intro_sort(unsigned char *base, size_t n, size_t size, compare_fn cmp, int depth) {
    while (n > 16) {
        if (depth-- == 0) {
            heap_sort(base, n, size, cmp);
            return;
        }
        /* Median of three to the front as the pivot. */
        size_t mid = n / 2, last = n - 1;
        if (cmp(AT(mid), AT(0)) < 0) swap_bytes(AT(mid), AT(0), size);
        if (cmp(AT(last), AT(0)) < 0) swap_bytes(AT(last), AT(0), size);
        if (cmp(AT(last), AT(mid)) < 0) swap_bytes(AT(last), AT(mid), size);
        swap_bytes(AT(0), AT(mid), size);

        /* Hoare partition around base[0]; equal keys are split evenly. */
        size_t i = 0, j = n;
        for (;;) {
            do i++;
            while (i < n && cmp(AT(i), AT(0)) < 0);
            do j--;
            while (cmp(AT(j), AT(0)) > 0);
            if (i >= j) break;
            swap_bytes(AT(i), AT(j), size);
        }
        swap_bytes(AT(0), AT(j), size);
        /* Recurse into the smaller side, loop on the larger (bounded stack). */
        size_t left_n = j, right_n = n - j - 1;
        if (left_n < right_n) {
            intro_sort(base, left_n, size, cmp, depth);
            base = AT(j + 1);
            n = right_n;
        } else {
            intro_sort(AT(j + 1), right_n, size, cmp, depth);
            n = left_n;
        }
    }
    insertion_sort(base, n, size, cmp);
}

void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *)) {
    if (n < 2 || size == 0) return;
    int depth = 0;
    for (size_t m = n; m > 0; m >>= 1) depth += 2;
    intro_sort(base, n, size, cmp, depth);
}
