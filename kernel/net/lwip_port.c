/* lwip_port.c - what lwIP asks of its host under NO_SYS: the time in
 * milliseconds, random numbers, and its heap (the kernel's). */
#include "kernel/drivers/timer.h"
#include "kernel/mm/memory.h"
#include "lwip/arch.h"
#include "lwip/sys.h"

u32_t sys_now(void) {
    return (u32_t)timer_ms();
}

/* TCP initial sequence numbers and DHCP transaction ids: the TSC's low bits
 * stirred (xorshift), unpredictable enough for a LAN. */
uint32_t net_random32(void) {
    static uint64_t state;
    state ^= rdtsc();
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (uint32_t)state;
}

void *net_heap_alloc(size_t size) {
    return kmalloc(size);
}

void *net_heap_calloc(size_t count, size_t size) {
    if (size && count > (size_t)-1 / size) return NULL;
    return kzalloc(count * size);
}

void net_heap_free(void *p) {
    kfree(p);
}
