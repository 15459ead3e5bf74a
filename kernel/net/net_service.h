/* net_service.h - TCP services on the kernel's network: a service names a
 * port and three callbacks; the transport (kernel/net) accepts connections,
 * hands each one a byte_stream to write its answers to, times out idle and
 * slow peers, and frees every connection's buffers when it closes. All of it
 * runs from net_poll: no interrupts, no threads. */
#ifndef KERNEL_NET_SERVICE_H
#define KERNEL_NET_SERVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A byte stream to one client: a TCP connection here, the serial line in kernel/api. */
struct byte_stream {
    void *ctx;
    /* Queues all n bytes, polling the network while the send window is full;
       returns 0, or -1 once the peer is gone (reset, closed, timed out).
       `more`: further bytes follow at once, so nothing is sent yet unless
       the window fills; the parts of one message leave as one segment. */
    int (*write)(void *ctx, const void *bytes, size_t n, bool more);
    /* True once the peer closed or reset the connection. */
    bool (*closed)(void *ctx);
};

/* A TCP service: the transport accepts connections on `port` and calls these. */
struct net_service {
    const char *name;
    uint16_t port;
    int max_connections;                       /* past it a new connection is closed at once */
    void *(*open)(struct byte_stream *stream); /* NULL refuses the connection */
    /* Must not block on generation: buffer/queue only (writing is fine). Like
       open and close, never called from inside lwIP or another callback. */
    void (*receive)(void *conn, const void *bytes, size_t n);
    /* The peer is gone or the transport closed it; free everything. Exactly
       once per successful open (after net_close too), from a top-level
       net_poll; the stream is invalid once it returns. */
    void (*close)(void *conn);
};

/* 0, or -1 with a reason printed (network off, port taken, out of memory).
 * The service must outlive the kernel (a static struct). */
int net_listen(const struct net_service *service);
/* Drives NICs, lwIP timers, services; cheap when idle; safe to call often.
 * Called from inside a service callback it only drives the NIC and lwIP
 * (no callbacks run, nothing is freed). */
void net_poll(void);
/* The service closes a connection after its last write (stream->ctx):
 * queued bytes are still delivered, then the connection is closed and the
 * service's close callback runs. */
void net_close(void *conn_stream_ctx);

/* True once an address is configured (DHCP lease or static) and a link is up. */
bool net_is_up(void);

#endif
