/* stdlib.h - sorting, number parsing and the allocator interface.
 * malloc/calloc/realloc/free are NOT implemented in lib/: the kernel provides
 * them on top of its heap, the host build gets them from libc. */
#ifndef LIB_STDLIB_H
#define LIB_STDLIB_H

#include <stddef.h>

void qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
long strtol(const char *s, char **end, int base);
unsigned long long strtoull(const char *s, char **end, int base);
/* Correctly rounded for ordinary decimal input ("0.9", "1e-5", "-3.25"). */
float strtof(const char *s, char **end);
double strtod(const char *s, char **end);
int abs(int x);

void *malloc(size_t size);
void *calloc(size_t n, size_t size);
void *realloc(void *p, size_t size);
void free(void *p);

#endif
