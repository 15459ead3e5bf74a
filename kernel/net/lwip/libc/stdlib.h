/* stdlib.h for lwIP: the kernel runtime's. */
#include "lib/stdlib.h"
/* netif.c's netif_find parses an interface number with atoi. */
static inline int atoi(const char *s) {
    return (int)strtol(s, NULL, 10);
}
