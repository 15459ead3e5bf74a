/* arch/cc.h - lwIP's port to this kernel: types from the compiler's own
 * headers, diagnostics through kprintf, little endian, no libc headers. */
#ifndef KERNEL_NET_LWIP_ARCH_CC_H
#define KERNEL_NET_LWIP_ARCH_CC_H

#include <stdint.h>

/* The freestanding build has no inttypes.h, ctype.h or unistd.h. */
#define LWIP_NO_INTTYPES_H 1
#define LWIP_NO_CTYPE_H 1
#define LWIP_NO_UNISTD_H 1
#define X8_F "02x"
#define U16_F "u"
#define S16_F "d"
#define X16_F "x"
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#define SZT_F "lu"

#define BYTE_ORDER LITTLE_ENDIAN

int kprintf(const char *fmt, ...);
/* Never fatal: an lwIP assertion is reported and the kernel keeps running. */
#define LWIP_PLATFORM_DIAG(x)                                                                                \
    do {                                                                                                     \
        kprintf x;                                                                                           \
    } while (0)
#define LWIP_PLATFORM_ASSERT(x) kprintf("lwip: assertion \"%s\" failed at %s:%d\n", x, __FILE__, __LINE__)

uint32_t net_random32(void);
#define LWIP_RAND() net_random32()

#endif
