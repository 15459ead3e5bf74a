/* e1000.c - Intel's PCI/PCIe gigabit family with the e1000 register set:
 * the 82540EM (QEMU's `pc` default, "e1000") and the 82574L (QEMU's `q35`
 * default, "e1000e"), through legacy receive and transmit descriptors,
 * polled. Both start the same way; what differs per part (EEPROM read
 * register layout) sits in the model table, where the I217/I218/I219
 * desktop parts (PCH-integrated, with their own PHY bring-up) would go.
 * Rings and buffers lie below 4 GiB: safe for every part of the family. */
#include "kernel/drivers/net/nic.h"

#include "kernel/console/console.h"
#include "kernel/drivers/timer.h"
#include "kernel/mm/memory.h"
#include "kernel/mm/paging.h"
#include "lib/string.h"

#define INTEL_VENDOR 0x8086

/* Registers (Intel 8254x / 82574 software developer's manuals). */
#define REG_CTRL 0x0000
#define REG_STATUS 0x0008
#define REG_EERD 0x0014
#define REG_IMC 0x00d8
#define REG_RCTL 0x0100
#define REG_TCTL 0x0400
#define REG_TIPG 0x0410
#define REG_RDBAL 0x2800
#define REG_RDBAH 0x2804
#define REG_RDLEN 0x2808
#define REG_RDH 0x2810
#define REG_RDT 0x2818
#define REG_TDBAL 0x3800
#define REG_TDBAH 0x3804
#define REG_TDLEN 0x3808
#define REG_TDH 0x3810
#define REG_TDT 0x3818
#define REG_MTA 0x5200
#define REG_RAL0 0x5400
#define REG_RAH0 0x5404

#define CTRL_ASDE (1u << 5)
#define CTRL_SLU (1u << 6)
#define CTRL_RST (1u << 26)
#define STATUS_LU (1u << 1)
#define RAH_AV (1u << 31)
#define RCTL_EN (1u << 1)
#define RCTL_BAM (1u << 15)
#define RCTL_SECRC (1u << 26) /* BSIZE 0: 2048-byte buffers */
#define TCTL_EN (1u << 1)
#define TCTL_PSP (1u << 3)
#define TCTL_CT (0x0fu << 4)
#define TCTL_COLD (0x40u << 12)
#define TIPG_DEFAULT (10u | (8u << 10) | (6u << 20))
#define TX_CMD_EOP 0x01
#define TX_CMD_IFCS 0x02
#define TX_CMD_RS 0x08
#define DESC_DD 0x01
#define RX_EOP 0x02

#define RX_COUNT 128
#define TX_COUNT 64
#define BUFFER_SIZE 2048
#define RESET_TIMEOUT_NS 100000000ull

/* How one part reads its EEPROM through EERD: the done bit and where the
 * word address goes differ between the 8254x and the 82574/ICH parts. */
struct e1000_model {
    uint16_t device;
    const char *name;
    uint32_t eerd_done;
    unsigned eerd_addr_shift;
};

static const struct e1000_model models[] = {
    {0x100e, "e1000", 1u << 4, 8},  /* 82540EM: QEMU -nic model=e1000 (tested) */
    {0x100f, "e1000", 1u << 4, 8},  /* 82545EM copper (untested) */
    {0x10d3, "e1000e", 1u << 1, 2}, /* 82574L: QEMU -nic model=e1000e (tested) */
};

struct rx_desc {
    uint64_t addr;
    uint16_t length, checksum;
    uint8_t status, errors;
    uint16_t special;
};
struct tx_desc {
    uint64_t addr;
    uint16_t length;
    uint8_t cso, cmd, status, css;
    uint16_t special;
};

struct e1000 {
    volatile uint8_t *regs;
    const struct e1000_model *model;
    struct rx_desc *rx;
    struct tx_desc *tx;
    uint8_t *rx_buffers, *tx_buffers;
    uint64_t rx_buffers_phys, tx_buffers_phys;
    uint32_t rx_next, tx_next;
};

static uint32_t reg_read(struct e1000 *e, uint32_t reg) {
    return *(volatile uint32_t *)(e->regs + reg);
}
static void reg_write(struct e1000 *e, uint32_t reg, uint32_t value) {
    *(volatile uint32_t *)(e->regs + reg) = value;
}

static bool e1000_link_up(struct nic *nic) {
    return reg_read(nic->driver, REG_STATUS) & STATUS_LU;
}

static void e1000_rx_release(struct nic *nic);

static const void *e1000_rx_peek(struct nic *nic, size_t *len) {
    struct e1000 *e = nic->driver;
    for (;;) {
        volatile struct rx_desc *d = &e->rx[e->rx_next];
        if (!(d->status & DESC_DD)) return NULL;
        __atomic_thread_fence(__ATOMIC_ACQUIRE); /* the status before the data */
        if ((d->status & RX_EOP) && !d->errors && d->length <= NIC_FRAME_MAX) {
            *len = d->length;
            return e->rx_buffers + (size_t)e->rx_next * BUFFER_SIZE;
        }
        nic->rx_errors++; /* a frame split over buffers or damaged: dropped */
        e1000_rx_release(nic);
    }
}

static void e1000_rx_release(struct nic *nic) {
    struct e1000 *e = nic->driver;
    e->rx[e->rx_next].status = 0;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    reg_write(e, REG_RDT, e->rx_next); /* this descriptor is the card's again */
    e->rx_next = (e->rx_next + 1) % RX_COUNT;
}

static void *e1000_tx_buffer(struct nic *nic) {
    struct e1000 *e = nic->driver;
    volatile struct tx_desc *d = &e->tx[e->tx_next];
    /* A descriptor never handed out has cmd 0; one in flight waits for DD. */
    if (d->cmd && !(d->status & DESC_DD)) return NULL;
    return e->tx_buffers + (size_t)e->tx_next * BUFFER_SIZE;
}

static void e1000_tx_send(struct nic *nic, size_t len) {
    struct e1000 *e = nic->driver;
    struct tx_desc *d = &e->tx[e->tx_next];
    d->addr = e->tx_buffers_phys + (uint64_t)e->tx_next * BUFFER_SIZE;
    d->length = (uint16_t)len;
    d->status = 0;
    d->cmd = TX_CMD_EOP | TX_CMD_IFCS | TX_CMD_RS;
    e->tx_next = (e->tx_next + 1) % TX_COUNT;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the descriptor before the tail */
    reg_write(e, REG_TDT, e->tx_next);
}

static int eeprom_word(struct e1000 *e, unsigned address, uint16_t *word) {
    reg_write(e, REG_EERD, 1u | (address << e->model->eerd_addr_shift));
    uint64_t start = timer_ns();
    while (timer_ns() - start < RESET_TIMEOUT_NS) {
        uint32_t v = reg_read(e, REG_EERD);
        if (v & e->model->eerd_done) {
            *word = (uint16_t)(v >> 16);
            return 0;
        }
    }
    return -1;
}

/* The MAC address the firmware or the card loaded into receive address 0;
 * else the first three EEPROM words. */
static const char *read_mac(struct e1000 *e, uint8_t mac[6]) {
    uint32_t low = reg_read(e, REG_RAL0), high = reg_read(e, REG_RAH0);
    if ((high & RAH_AV) && (low || (high & 0xffff))) {
        for (int i = 0; i < 4; i++) mac[i] = (uint8_t)(low >> (8 * i));
        mac[4] = (uint8_t)high;
        mac[5] = (uint8_t)(high >> 8);
        return NULL;
    }
    for (unsigned i = 0; i < 3; i++) {
        uint16_t w;
        if (eeprom_word(e, i, &w)) return "no MAC address (EEPROM read timed out)";
        mac[2 * i] = (uint8_t)w;
        mac[2 * i + 1] = (uint8_t)(w >> 8);
    }
    reg_write(e, REG_RAL0, mac[0] | mac[1] << 8 | mac[2] << 16 | (uint32_t)mac[3] << 24);
    reg_write(e, REG_RAH0, mac[4] | mac[5] << 8 | RAH_AV);
    return NULL;
}

static const char *allocate_rings(struct e1000 *e) {
    /* One page holds both descriptor rings (128 x 16 + 64 x 16 bytes). */
    uint64_t rings = page_alloc_below(1ull << 32, 1);
    uint64_t rx = page_alloc_below(1ull << 32, RX_COUNT * BUFFER_SIZE / PAGE_SIZE);
    uint64_t tx = page_alloc_below(1ull << 32, TX_COUNT * BUFFER_SIZE / PAGE_SIZE);
    if (!rings || !rx || !tx) {
        if (rings) page_free(rings, 1);
        if (rx) page_free(rx, RX_COUNT * BUFFER_SIZE / PAGE_SIZE);
        if (tx) page_free(tx, TX_COUNT * BUFFER_SIZE / PAGE_SIZE);
        return "out of memory below 4 GiB for the rings";
    }
    memset(phys_to_virt(rings), 0, PAGE_SIZE);
    e->rx = phys_to_virt(rings);
    e->tx = phys_to_virt(rings + RX_COUNT * sizeof(struct rx_desc));
    e->rx_buffers = phys_to_virt(rx);
    e->tx_buffers = phys_to_virt(tx);
    e->rx_buffers_phys = rx;
    e->tx_buffers_phys = tx;
    for (int i = 0; i < RX_COUNT; i++) e->rx[i].addr = rx + (uint64_t)i * BUFFER_SIZE;
    reg_write(e, REG_RDBAL, (uint32_t)rings);
    reg_write(e, REG_RDBAH, (uint32_t)(rings >> 32));
    reg_write(e, REG_RDLEN, RX_COUNT * sizeof(struct rx_desc));
    reg_write(e, REG_RDH, 0);
    reg_write(e, REG_RDT, RX_COUNT - 1); /* every descriptor but one is the card's */
    uint64_t tx_ring = rings + RX_COUNT * sizeof(struct rx_desc);
    reg_write(e, REG_TDBAL, (uint32_t)tx_ring);
    reg_write(e, REG_TDBAH, (uint32_t)(tx_ring >> 32));
    reg_write(e, REG_TDLEN, TX_COUNT * sizeof(struct tx_desc));
    reg_write(e, REG_TDH, 0);
    reg_write(e, REG_TDT, 0);
    return NULL;
}

static const char *start(struct e1000 *e, uint8_t mac[6]) {
    reg_write(e, REG_IMC, 0xffffffff); /* polled: no interrupts */
    reg_write(e, REG_CTRL, reg_read(e, REG_CTRL) | CTRL_RST);
    timer_sleep_us(1000);
    uint64_t begin = timer_ns();
    while (reg_read(e, REG_CTRL) & CTRL_RST)
        if (timer_ns() - begin > RESET_TIMEOUT_NS) return "the card did not come out of reset";
    reg_write(e, REG_IMC, 0xffffffff);
    reg_write(e, REG_CTRL, reg_read(e, REG_CTRL) | CTRL_SLU | CTRL_ASDE);
    const char *why = read_mac(e, mac);
    if (why) return why;
    for (int i = 0; i < 128; i++) reg_write(e, REG_MTA + 4 * i, 0);
    if ((why = allocate_rings(e))) return why;
    /* The last receive descriptor stays the driver's until rx_release. */
    e->rx_next = 0;
    reg_write(e, REG_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);
    reg_write(e, REG_TIPG, TIPG_DEFAULT);
    reg_write(e, REG_TCTL, TCTL_EN | TCTL_PSP | TCTL_CT | TCTL_COLD);
    return NULL;
}

static const struct nic_ops e1000_ops = {e1000_link_up, e1000_rx_peek, e1000_rx_release, e1000_tx_buffer,
                                         e1000_tx_send};

int e1000_probe(const struct pci_device *pci, struct nic *nic) {
    if (pci->vendor != INTEL_VENDOR) return 0;
    const struct e1000_model *model = NULL;
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (models[i].device == pci->device) model = &models[i];
    if (!model) return 0;
    static struct e1000 e; /* one card: the first that starts */
    memset(&e, 0, sizeof e);
    e.model = model;
    uint64_t size = 0, base = pci_bar_address(pci, 0, &size);
    const char *why = NULL;
    if (!base || size < 0x6000)
        why = "BAR 0 is not a usable memory BAR";
    else {
        pci_enable_mmio_and_dma(pci);
        e.regs = paging_map_mmio(base, size < 0x20000 ? size : 0x20000);
        why = e.regs ? start(&e, nic->mac) : "cannot map BAR 0";
    }
    if (why) {
        kprintf("net: %s (%04x:%04x) at %02x:%02x.%x failed: %s; going on without it\n", model->name,
                pci->vendor, pci->device, pci->bus, pci->slot, pci->func, why);
        return -1;
    }
    nic->model = model->name;
    nic->driver = &e;
    nic->ops = &e1000_ops;
    return 1;
}
