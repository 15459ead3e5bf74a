/* tcp_service.c - TCP services over lwIP's raw API: listening sockets,
 * connections, their byte streams and time-outs. lwIP's callbacks only
 * record what happened (bytes queued, peer gone); the service's callbacks
 * run later from net_poll, never from inside lwIP, so a service may write,
 * and wait for the send window, from any of them. */
#include "kernel/net/net_internal.h"
#include "kernel/net/net_service.h"

#include "kernel/arch/cpu.h"
#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include "kernel/mm/memory.h"
#include "lwip/tcp.h"

#define MAX_LISTENERS 4
#define POLL_INTERVAL 2 /* lwIP's coarse timer ticks (500 ms): the idle check runs every second */

struct listener {
    const struct net_service *service;
    struct tcp_pcb *pcb;
    int open;
    uint64_t accepted, refused, timed_out, errors;
};

struct connection {
    struct connection *next;
    struct listener *listener;
    struct tcp_pcb *pcb; /* NULL once lwIP has freed it */
    void *conn;          /* the service's, from open */
    struct byte_stream stream;
    struct pbuf *received; /* bytes not yet handed to the service */
    bool opened, peer_closed, gone, close_requested;
    uint64_t last_activity_ns; /* bytes received or acknowledged */
};

uint64_t net_idle_timeout_ns = 120ull * 1000000000ull;
static struct listener listeners[MAX_LISTENERS];
static int listener_count;
static struct connection *connections;
static int service_depth; /* > 0 while a service callback runs */

/* Forgets the pcb (no more callbacks) and resets the connection. */
static void abort_connection(struct connection *c) {
    if (!c->pcb) return;
    tcp_arg(c->pcb, NULL);
    tcp_recv(c->pcb, NULL);
    tcp_sent(c->pcb, NULL);
    tcp_err(c->pcb, NULL);
    tcp_poll(c->pcb, NULL, 0);
    tcp_abort(c->pcb);
    c->pcb = NULL;
    c->gone = true;
}

static err_t on_receive(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t err) {
    struct connection *c = arg;
    if (!p) {
        c->peer_closed = true;
        return ERR_OK;
    }
    if (err != ERR_OK || c->gone || c->close_requested) {
        tcp_recved(pcb, p->tot_len);
        pbuf_free(p);
        return ERR_OK;
    }
    if (c->received)
        pbuf_cat(c->received, p);
    else
        c->received = p;
    c->last_activity_ns = timer_ns();
    return ERR_OK; /* the window reopens (tcp_recved) once the service took the bytes */
}

static err_t on_sent(void *arg, struct tcp_pcb *pcb, u16_t len) {
    ((struct connection *)arg)->last_activity_ns = timer_ns();
    return ERR_OK;
}

static void on_error(void *arg, err_t err) {
    struct connection *c = arg;
    c->pcb = NULL; /* lwIP freed it */
    c->gone = true;
    if (err != ERR_ABRT) c->listener->errors++;
}

static err_t on_poll(void *arg, struct tcp_pcb *pcb) {
    struct connection *c = arg;
    if (timer_ns() - c->last_activity_ns <= net_idle_timeout_ns) return ERR_OK;
    c->listener->timed_out++;
    abort_connection(c);
    return ERR_ABRT;
}

static int stream_write(void *ctx, const void *bytes, size_t n, bool more) {
    struct connection *c = ctx;
    const uint8_t *p = bytes;
    uint64_t progress_ns = timer_ns();
    while (n > 0) {
        if (c->gone || !c->pcb) return -1;
        size_t room = tcp_sndbuf(c->pcb);
        if (room > 0 && tcp_sndqueuelen(c->pcb) < TCP_SND_QUEUELEN - 1) {
            size_t chunk = n < room ? n : room;
            if (chunk > 0xffff) chunk = 0xffff;
            err_t err = tcp_write(c->pcb, p, (u16_t)chunk,
                                  TCP_WRITE_FLAG_COPY | (chunk < n || more ? TCP_WRITE_FLAG_MORE : 0));
            if (err == ERR_OK) {
                p += chunk;
                n -= chunk;
                progress_ns = timer_ns();
                continue;
            }
            if (err != ERR_MEM) {
                c->listener->errors++;
                abort_connection(c);
                return -1;
            }
        }
        tcp_output(c->pcb);
        net_drive(); /* acknowledgements arrive, the window opens */
        uint64_t last = progress_ns > c->last_activity_ns ? progress_ns : c->last_activity_ns;
        if (c->pcb && timer_ns() - last > net_idle_timeout_ns) {
            c->listener->timed_out++;
            abort_connection(c);
            return -1;
        }
        cpu_relax();
    }
    if (c->pcb && !more) tcp_output(c->pcb);
    return c->gone ? -1 : 0;
}

static bool stream_closed(void *ctx) {
    struct connection *c = ctx;
    return c->peer_closed || c->gone;
}

static err_t on_accept(void *arg, struct tcp_pcb *pcb, err_t err) {
    struct listener *l = arg;
    if (err != ERR_OK || !pcb) return ERR_VAL;
    l->accepted++; /* every connection that reached us; served = accepted - refused */
    struct connection *c = l->open < l->service->max_connections ? kzalloc(sizeof *c) : NULL;
    if (!c) {
        l->refused++;
        tcp_abort(pcb);
        return ERR_ABRT;
    }
    c->listener = l;
    c->pcb = pcb;
    c->stream = (struct byte_stream){c, stream_write, stream_closed};
    c->last_activity_ns = timer_ns();
    c->next = connections;
    connections = c;
    l->open++;
    tcp_arg(pcb, c);
    tcp_recv(pcb, on_receive);
    tcp_sent(pcb, on_sent);
    tcp_err(pcb, on_error);
    tcp_poll(pcb, on_poll, POLL_INTERVAL);
    tcp_nagle_disable(pcb); /* answers stream token by token */
    return ERR_OK;
}

/* Hands queued bytes to the service, oldest first; bytes that arrive while
 * it runs (it may wait for the window) are picked up by the next round. */
static void deliver(struct connection *c) {
    while (c->received && !c->gone && !c->close_requested) {
        struct pbuf *p = c->received;
        c->received = NULL;
        for (struct pbuf *q = p; q && !c->gone && !c->close_requested; q = q->next) {
            service_depth++;
            c->listener->service->receive(c->conn, q->payload, q->len);
            service_depth--;
        }
        if (c->pcb) tcp_recved(c->pcb, p->tot_len);
        pbuf_free(p);
    }
}

/* The connection is over: the service frees its state, queued bytes still
 * go out (tcp_close is graceful), then ours is freed. */
static void finish(struct connection *c) {
    if (c->conn) {
        service_depth++;
        c->listener->service->close(c->conn);
        service_depth--;
    }
    if (c->pcb) {
        tcp_arg(c->pcb, NULL);
        tcp_recv(c->pcb, NULL);
        tcp_sent(c->pcb, NULL);
        tcp_err(c->pcb, NULL);
        tcp_poll(c->pcb, NULL, 0);
        if (tcp_close(c->pcb) != ERR_OK) tcp_abort(c->pcb);
        c->pcb = NULL;
    }
    if (c->received) pbuf_free(c->received);
    c->listener->open--;
    kfree(c);
}

void net_services_run(void) {
    if (service_depth) return; /* called from inside a service: only net_drive ran */
    for (struct connection **link = &connections; *link;) {
        struct connection *c = *link;
        if (!c->opened && !c->gone) {
            c->opened = true;
            service_depth++;
            c->conn = c->listener->service->open(&c->stream);
            service_depth--;
            if (!c->conn) {
                c->listener->refused++;
                c->close_requested = true;
            }
        }
        if (c->conn) deliver(c);
        if (c->gone || c->close_requested || (c->peer_closed && !c->received)) {
            *link = c->next;
            finish(c);
        } else {
            link = &c->next;
        }
    }
}

void net_close(void *conn_stream_ctx) {
    struct connection *c = conn_stream_ctx;
    if (c) c->close_requested = true;
}

int net_listen(const struct net_service *service) {
    if (!net_started()) {
        kprintf("net: %s on port %u not started: the network is off (boot.cfg net=dhcp or net=static)\n",
                service->name, service->port);
        return -1;
    }
    if (listener_count == MAX_LISTENERS) {
        kprintf("net: %s on port %u not started: %d services already\n", service->name, service->port,
                MAX_LISTENERS);
        return -1;
    }
    struct tcp_pcb *pcb = tcp_new();
    if (!pcb) {
        kprintf("net: %s on port %u not started: out of memory\n", service->name, service->port);
        return -1;
    }
    if (tcp_bind(pcb, IP_ANY_TYPE, service->port) != ERR_OK) {
        tcp_close(pcb);
        kprintf("net: %s on port %u not started: the port is taken\n", service->name, service->port);
        return -1;
    }
    struct tcp_pcb *listening = tcp_listen(pcb);
    if (!listening) {
        tcp_close(pcb);
        kprintf("net: %s on port %u not started: out of memory\n", service->name, service->port);
        return -1;
    }
    struct listener *l = &listeners[listener_count++];
    *l = (struct listener){.service = service, .pcb = listening};
    tcp_arg(listening, l);
    tcp_accept(listening, on_accept);
    kprintf("net: %s listening on port %u\n", service->name, service->port);
    return 0;
}

void net_services_print(void) {
    if (listener_count == 0) kprintf("net: no service listening\n");
    for (int i = 0; i < listener_count; i++) {
        const struct listener *l = &listeners[i];
        kprintf(
            "net: %s on port %u: %lu connections served, %d open, %lu refused, %lu timed out, %lu errors\n",
            l->service->name, l->service->port, (unsigned long)(l->accepted - l->refused), l->open,
            (unsigned long)l->refused, (unsigned long)l->timed_out, (unsigned long)l->errors);
    }
}
