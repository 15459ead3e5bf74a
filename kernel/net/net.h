/* net.h - the kernel's network: a NIC driver, lwIP, and the TCP services. */
#ifndef KERNEL_NET_H
#define KERNEL_NET_H

/* Reads boot.cfg (net=dhcp|static|off, ip= gw= mask=, net_echo=1,
 * net_timeout=SECONDS), starts the first NIC that works and waits up to
 * 3 s for an address. Off, or without a NIC, it prints one line and the
 * kernel goes on. */
void net_init(const char *boot_cfg, unsigned long len);
/* The shell's /net: link, address, port, requests served and errors. */
void net_print_status(void);

#endif
