/* echo.c - the RFC 862 echo service (boot.cfg net_echo=1, TCP port 7): a
 * diagnostic that proves the transport, every byte sent comes back. */
#include "kernel/net/net_internal.h"
#include "kernel/net/net_service.h"

/* No state of its own: the connection is its stream. */
static void *echo_open(struct byte_stream *stream) {
    return stream;
}

static void echo_receive(void *conn, const void *bytes, size_t n) {
    struct byte_stream *stream = conn;
    if (stream->write(stream->ctx, bytes, n, false) != 0) net_close(stream->ctx);
}

static void echo_close(void *conn) {}

static const struct net_service echo_service = {
    .name = "echo",
    .port = 7,
    .max_connections = 4,
    .open = echo_open,
    .receive = echo_receive,
    .close = echo_close,
};

int net_echo_start(void) {
    return net_listen(&echo_service);
}
