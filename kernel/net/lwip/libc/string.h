/* string.h for lwIP: the kernel runtime's. */
#include "lib/string.h"
