/* net_interface.c - the lwIP network interface on top of a NIC driver:
 * frames in from the receive ring, frames out into the transmit ring. */
#include "kernel/net/net_internal.h"

#include "kernel/drivers/timer.h"
#include "lib/string.h"
#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

#define TX_WAIT_NS 20000000ull /* a full transmit ring drains in microseconds; past this, drop */
#define RX_BUDGET 64           /* frames per poll, so one busy poll stays short */

static err_t link_output(struct netif *netif, struct pbuf *p) {
    struct nic *nic = netif->state;
    if (p->tot_len > NIC_FRAME_MAX) return ERR_BUF;
    void *buffer = nic->ops->tx_buffer(nic);
    for (uint64_t start = timer_ns(); !buffer && timer_ns() - start < TX_WAIT_NS;)
        buffer = nic->ops->tx_buffer(nic);
    if (!buffer) {
        net_stats.tx_dropped++;
        return ERR_MEM; /* TCP retransmits it */
    }
    pbuf_copy_partial(p, buffer, p->tot_len, 0);
    nic->ops->tx_send(nic, p->tot_len);
    nic->tx_frames++;
    return ERR_OK;
}

static err_t interface_init(struct netif *netif) {
    struct nic *nic = netif->state;
    netif->name[0] = 'e';
    netif->name[1] = 'n';
    netif->hwaddr_len = ETH_HWADDR_LEN;
    memcpy(netif->hwaddr, nic->mac, ETH_HWADDR_LEN);
    netif->mtu = 1500;
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET;
    netif->output = etharp_output;
    netif->linkoutput = link_output;
    return ERR_OK;
}

int net_interface_add(struct netif *netif, struct nic *nic) {
    return netif_add(netif, NULL, NULL, NULL, nic, interface_init, ethernet_input) ? 0 : -1;
}

int net_interface_receive(struct netif *netif) {
    struct nic *nic = netif->state;
    int frames = 0;
    size_t len;
    const void *frame;
    while (frames < RX_BUDGET && (frame = nic->ops->rx_peek(nic, &len))) {
        struct pbuf *p = len ? pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM) : NULL;
        if (p) pbuf_take(p, frame, (u16_t)len);
        nic->ops->rx_release(nic);
        frames++;
        nic->rx_frames++;
        if (!p) {
            net_stats.rx_dropped++;
            continue;
        }
        if (netif->input(p, netif) != ERR_OK) pbuf_free(p);
    }
    return frames;
}
