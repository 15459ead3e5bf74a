/* net_internal.h - what the files of kernel/net share (not for callers). */
#ifndef KERNEL_NET_INTERNAL_H
#define KERNEL_NET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/drivers/net/nic.h"
#include "lwip/netif.h"

struct net_stats {
    uint64_t rx_dropped, tx_dropped; /* frames the stack could not take or send */
    uint64_t connections, refused, timed_out;
};
extern struct net_stats net_stats;

/* The lwIP interface on nic (net_interface.c). 0, or -1. */
int net_interface_add(struct netif *netif, struct nic *nic);
/* Passes received frames to lwIP; returns how many. */
int net_interface_receive(struct netif *netif);

/* True once a NIC and lwIP run (net.c). */
bool net_started(void);
/* Drives the NIC and lwIP's timers; no service callbacks (net.c). */
void net_drive(void);

/* Connections (tcp_service.c): deliver received bytes and finish closed
 * connections (only outside service callbacks); the seconds after which
 * an idle connection, or a write that makes no progress, is dropped. */
void net_services_run(void);
extern uint64_t net_idle_timeout_ns;
/* One line per listening service for /net: port, requests, errors. */
void net_services_print(void);

/* The RFC 862 echo service (echo.c), on port 7 with boot.cfg net_echo=1. */
int net_echo_start(void);

#endif
