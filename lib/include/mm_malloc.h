/* Stand-in for GCC's mm_malloc.h, which pulls in a hosted <stdlib.h>.
 * The freestanding kernel build puts lib/include first on the include path so
 * that <immintrin.h> works; the _mm_malloc helpers are not used. */
#ifndef LIB_MM_MALLOC_H
#define LIB_MM_MALLOC_H
#endif
