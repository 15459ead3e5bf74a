/* lwipopts.h - lwIP's configuration for this kernel: no operating system
 * (NO_SYS, the raw callback API, polled from net_poll), IPv4 with TCP, UDP,
 * DHCP, ARP and ICMP, and every allocation on the kernel heap so that
 * closed connections give their memory back (/mem unchanged). */
#ifndef KERNEL_NET_LWIPOPTS_H
#define KERNEL_NET_LWIPOPTS_H

#include <stddef.h>

#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0 /* one CPU drives the network, never from an interrupt */
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0
#define LWIP_TIMERS 1

#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_UDP 1
#define LWIP_TCP 1
#define LWIP_DHCP 1
#define LWIP_RAW 0
#define LWIP_DNS 0
#define LWIP_IGMP 0
#define LWIP_AUTOIP 0
#define IP_REASSEMBLY 0
#define IP_FRAG 0
#define DHCP_DOES_ARP_CHECK 0 /* QEMU's and home routers' leases: no 1 s probe before use */
#define LWIP_NETIF_STATUS_CALLBACK 1
#define LWIP_NETIF_LINK_CALLBACK 1
#define LWIP_NETIF_HOSTNAME 0

/* Memory: the kernel heap for everything (mem_malloc and the memp pools). */
void *net_heap_alloc(size_t size);
void *net_heap_calloc(size_t count, size_t size);
void net_heap_free(void *p);
#define MEM_LIBC_MALLOC 1
#define MEMP_MEM_MALLOC 1
#define mem_clib_malloc net_heap_alloc
#define mem_clib_calloc net_heap_calloc
#define mem_clib_free net_heap_free
#define MEM_ALIGNMENT 8
#define MEM_SIZE (256 * 1024) /* unused with MEM_LIBC_MALLOC; kept sane */

/* TCP: windows large enough for a 1 MiB burst at QEMU user-net speed. */
#define TCP_MSS 1460
#define TCP_WND (32 * TCP_MSS)
#define TCP_SND_BUF (32 * TCP_MSS)
#define TCP_SND_QUEUELEN (4 * TCP_SND_BUF / TCP_MSS)
#define TCP_QUEUE_OOSEQ 1
#define LWIP_WND_SCALE 1
#define TCP_RCV_SCALE 1
#define MEMP_NUM_TCP_PCB 32
#define MEMP_NUM_TCP_PCB_LISTEN 8
#define MEMP_NUM_TCP_SEG 256
#define PBUF_POOL_SIZE 64
#define PBUF_POOL_BUFSIZE 1536
#define LWIP_TCP_KEEPALIVE 1
#define TCP_MSL 5000UL /* TIME_WAIT 10 s: a closed connection's pcb goes back to the heap soon */

#define LWIP_STATS 0
#define LWIP_CHECKSUM_ON_COPY 0
#define LWIP_SINGLE_NETIF 0

#endif
