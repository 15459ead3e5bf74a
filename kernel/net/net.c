/* net.c - the network's start from boot.cfg, its polling, and /net. */
#include "kernel/net/net.h"
#include "kernel/net/net_internal.h"
#include "kernel/net/net_service.h"

#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include "lib/config.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "lwip/dhcp.h"
#include "lwip/init.h"
#include "lwip/ip4_addr.h"
#include "lwip/timeouts.h"

#define ADDRESS_WAIT_NS 3000000000ull /* QEMU's and a LAN's DHCP answer within milliseconds */

struct net_stats net_stats;
static struct netif interface;
static struct nic *card;
static bool started, driving, use_dhcp;

bool net_started(void) {
    return started;
}

bool net_is_up(void) {
    return started && netif_is_link_up(&interface) && !ip4_addr_isany_val(*netif_ip4_addr(&interface));
}

void net_drive(void) {
    if (!started || driving) return;
    driving = true;
    bool link = card->ops->link_up(card);
    if (link != netif_is_link_up(&interface)) {
        if (link)
            netif_set_link_up(&interface);
        else
            netif_set_link_down(&interface);
    }
    net_interface_receive(&interface);
    sys_check_timeouts();
    driving = false;
}

void net_poll(void) {
    net_drive();
    if (started) net_services_run();
}

static void idle_poll(void) {
    net_poll();
}

/* net=static: ip=, gw= and mask= (mask defaults to 255.255.255.0). */
static int read_static_address(const char *cfg, size_t len) {
    char ip[20], gw[20], mask[20] = "255.255.255.0";
    ip4_addr_t a, g, m;
    if (config_get(cfg, len, "ip", ip, sizeof ip) != CONFIG_FOUND || !ip4addr_aton(ip, &a)) {
        kprintf("net: net=static needs ip=A.B.C.D in boot.cfg; network off\n");
        return -1;
    }
    bool has_gw = config_get(cfg, len, "gw", gw, sizeof gw) == CONFIG_FOUND;
    if (has_gw && !ip4addr_aton(gw, &g)) {
        kprintf("net: gw=%s is not an IPv4 address; network off\n", gw);
        return -1;
    }
    if (!has_gw) ip4_addr_set_zero(&g);
    config_get(cfg, len, "mask", mask, sizeof mask);
    if (!ip4addr_aton(mask, &m)) {
        kprintf("net: mask=%s is not an IPv4 mask; network off\n", mask);
        return -1;
    }
    netif_set_addr(&interface, &a, &m, &g);
    return 0;
}

static void print_address(void) {
    if (ip4_addr_isany_val(*netif_ip4_addr(&interface))) {
        kprintf("net: no address yet%s\n", use_dhcp ? " (asking DHCP)" : "");
        return;
    }
    char ip[16], mask[16], gw[16];
    ip4addr_ntoa_r(netif_ip4_addr(&interface), ip, sizeof ip);
    ip4addr_ntoa_r(netif_ip4_netmask(&interface), mask, sizeof mask);
    ip4addr_ntoa_r(netif_ip4_gw(&interface), gw, sizeof gw);
    kprintf("net: address %s mask %s gateway %s (%s)\n", ip, mask, gw, use_dhcp ? "dhcp" : "static");
}

void net_init(const char *cfg, unsigned long len) {
    char mode[16], value[16];
    if (config_get(cfg, len, "net", mode, sizeof mode) != CONFIG_FOUND || !strcmp(mode, "off")) return;
    if (strcmp(mode, "dhcp") && strcmp(mode, "static")) {
        kprintf("net: net=%s is not dhcp, static or off; network off\n", mode);
        return;
    }
    use_dhcp = !strcmp(mode, "dhcp");
    if (config_get(cfg, len, "net_timeout", value, sizeof value) == CONFIG_FOUND) {
        long seconds = strtol(value, NULL, 10);
        if (seconds > 0) net_idle_timeout_ns = (uint64_t)seconds * 1000000000ull;
    }
    card = nic_probe_first();
    if (!card) {
        kprintf("net: no network card that a driver here starts; going on without network\n");
        return;
    }
    lwip_init();
    if (net_interface_add(&interface, card)) {
        kprintf("net: lwIP refused the interface; going on without network\n");
        return;
    }
    netif_set_default(&interface);
    if (!use_dhcp && read_static_address(cfg, len)) {
        netif_remove(&interface);
        return;
    }
    netif_set_up(&interface);
    if (card->ops->link_up(card)) netif_set_link_up(&interface);
    if (use_dhcp && dhcp_start(&interface) != ERR_OK) {
        kprintf("net: DHCP did not start (out of memory); going on without network\n");
        netif_remove(&interface);
        return;
    }
    started = true;
    const uint8_t *mac = card->mac;
    kprintf("net: %s %02x:%02x:%02x:%02x:%02x:%02x, link %s\n", card->model, mac[0], mac[1], mac[2], mac[3],
            mac[4], mac[5], card->ops->link_up(card) ? "up" : "down");
    for (uint64_t start = timer_ns(); !net_is_up() && timer_ns() - start < ADDRESS_WAIT_NS;) net_drive();
    print_address();
    console_register_idle(idle_poll);
    if (config_get(cfg, len, "net_echo", value, sizeof value) == CONFIG_FOUND && value[0] == '1')
        net_echo_start();
}

void net_print_status(void) {
    if (!started) {
        kprintf("net: off (boot.cfg net=dhcp, or net=static ip=... gw=... mask=...)\n");
        return;
    }
    net_drive();
    const uint8_t *mac = card->mac;
    kprintf("net: %s %02x:%02x:%02x:%02x:%02x:%02x, link %s\n", card->model, mac[0], mac[1], mac[2], mac[3],
            mac[4], mac[5], netif_is_link_up(&interface) ? "up" : "down");
    print_address();
    kprintf("net: frames in %lu, out %lu; dropped in %lu, out %lu; receive errors %lu\n",
            (unsigned long)card->rx_frames, (unsigned long)card->tx_frames,
            (unsigned long)net_stats.rx_dropped, (unsigned long)net_stats.tx_dropped,
            (unsigned long)card->rx_errors);
    net_services_print();
}
