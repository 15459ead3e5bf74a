/* virtio_net.c - virtio-net over the virtio 1.x PCI transport (virtio 1.x
 * spec, 5.1 "Network Device"): queue 0 receives, queue 1 transmits, each
 * a split virtqueue of up to 128 buffers of 2 KiB, polled. Virtio 1.x
 * devices address 64 bits: the rings and buffers may lie anywhere. */
#include "kernel/drivers/net/nic.h"

#include "kernel/console/console.h"
#include "kernel/drivers/virtio_pci.h"
#include "kernel/mm/memory.h"
#include "lib/string.h"

#define VIRTIO_NET_MODERN 0x1041
#define VIRTIO_NET_TRANSITIONAL 0x1000
#define PCI_SUBSYSTEM_ID 0x2e
#define FEATURE_MAC (1u << 5)
#define FEATURE_STATUS (1u << 16)
#define CONFIG_STATUS 6
#define STATUS_LINK_UP 1
#define HEADER_SIZE 12 /* struct virtio_net_hdr with num_buffers (always in 1.x) */
#define BUFFER_SIZE 2048
#define QUEUE_SIZE_MAX 128
#define DESC_F_WRITE 2
#define USED_F_NO_NOTIFY 1
#define AVAIL_F_NO_INTERRUPT 1

struct ring_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

/* One split virtqueue with a buffer per descriptor. */
struct net_queue {
    uint16_t index, size, last_used;
    struct ring_desc *desc;
    volatile uint16_t *avail_flags, *avail_idx, *avail_ring;
    volatile uint16_t *used_idx, *used_flags;
    volatile uint32_t *used_ring; /* id, len pairs */
    volatile uint16_t *notify;
    uint8_t *buffers;
    uint64_t buffers_phys;
    uint16_t free_ids[QUEUE_SIZE_MAX], free_count; /* transmit descriptors not in flight */
};

struct virtio_net {
    struct virtio_pci dev;
    bool has_status;
    struct net_queue rx, tx;
    uint16_t rx_pending; /* descriptor id handed out by rx_peek */
    uint16_t tx_pending;
};

/* Lays out the descriptor table, driver area (avail) and device area (used)
 * of `size` entries in zeroed pages, and `size` buffers. */
static const char *queue_create(struct virtio_net *vn, uint16_t index, struct net_queue *q) {
    uint16_t size = virtio_pci_queue_max(&vn->dev, index);
    if (size == 0) return "the device has no such queue";
    if (size > QUEUE_SIZE_MAX) size = QUEUE_SIZE_MAX;
    size_t desc_bytes = 16u * size, avail_bytes = 6 + 2u * size;
    size_t used_offset = (desc_bytes + avail_bytes + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
    size_t ring_pages = (used_offset + 6 + 8u * size + PAGE_SIZE - 1) / PAGE_SIZE;
    size_t buffer_pages = (size_t)size * BUFFER_SIZE / PAGE_SIZE;
    uint64_t rings = page_alloc(ring_pages), buffers = page_alloc(buffer_pages);
    if (!rings || !buffers) {
        if (rings) page_free(rings, ring_pages);
        if (buffers) page_free(buffers, buffer_pages);
        return "out of memory for the rings";
    }
    uint8_t *base = phys_to_virt(rings);
    memset(base, 0, ring_pages * PAGE_SIZE);
    memset(phys_to_virt(buffers), 0, buffer_pages * PAGE_SIZE);
    q->index = index;
    q->size = size;
    q->desc = (struct ring_desc *)base;
    q->avail_flags = (volatile uint16_t *)(base + desc_bytes);
    q->avail_idx = q->avail_flags + 1;
    q->avail_ring = q->avail_flags + 2;
    q->used_flags = (volatile uint16_t *)(base + used_offset);
    q->used_idx = q->used_flags + 1;
    q->used_ring = (volatile uint32_t *)(base + used_offset + 4);
    q->buffers = phys_to_virt(buffers);
    q->buffers_phys = buffers;
    *q->avail_flags = AVAIL_F_NO_INTERRUPT;
    for (uint16_t i = 0; i < size; i++) q->desc[i].addr = buffers + (uint64_t)i * BUFFER_SIZE;
    q->notify =
        virtio_pci_queue_enable(&vn->dev, index, size, rings, rings + desc_bytes, rings + used_offset);
    return NULL;
}

/* Puts descriptor id in the driver area and tells the device, unless it
 * asked not to be told (it is already polling the queue). */
static void queue_offer(struct net_queue *q, uint16_t id) {
    uint16_t idx = *q->avail_idx;
    q->avail_ring[idx % q->size] = id;
    __atomic_store_n(q->avail_idx, (uint16_t)(idx + 1), __ATOMIC_RELEASE);
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the ring before reading used flags and notifying */
    if (!(*q->used_flags & USED_F_NO_NOTIFY)) *q->notify = q->index;
}

static bool virtio_net_link_up(struct nic *nic) {
    struct virtio_net *vn = nic->driver;
    if (!vn->has_status || !vn->dev.device) return true; /* no status field: always up */
    return *(volatile uint16_t *)(vn->dev.device + CONFIG_STATUS) & STATUS_LINK_UP;
}

static const void *virtio_net_rx_peek(struct nic *nic, size_t *len) {
    struct virtio_net *vn = nic->driver;
    struct net_queue *q = &vn->rx;
    if (__atomic_load_n(q->used_idx, __ATOMIC_ACQUIRE) == q->last_used) return NULL;
    uint16_t slot = q->last_used % q->size;
    uint32_t id = q->used_ring[2 * slot], written = q->used_ring[2 * slot + 1];
    if (id >= q->size) id = 0; /* a device bug: never index past the ring */
    vn->rx_pending = (uint16_t)id;
    *len = written > HEADER_SIZE ? written - HEADER_SIZE : 0;
    if (*len > NIC_FRAME_MAX) *len = NIC_FRAME_MAX;
    return q->buffers + (size_t)id * BUFFER_SIZE + HEADER_SIZE;
}

static void virtio_net_rx_release(struct nic *nic) {
    struct virtio_net *vn = nic->driver;
    vn->rx.last_used++;
    queue_offer(&vn->rx, vn->rx_pending);
}

static void *virtio_net_tx_buffer(struct nic *nic) {
    struct virtio_net *vn = nic->driver;
    struct net_queue *q = &vn->tx;
    while (__atomic_load_n(q->used_idx, __ATOMIC_ACQUIRE) != q->last_used) {
        uint32_t id = q->used_ring[2 * (q->last_used % q->size)];
        if (id < q->size && q->free_count < q->size) q->free_ids[q->free_count++] = (uint16_t)id;
        q->last_used++;
    }
    if (q->free_count == 0) return NULL;
    vn->tx_pending = q->free_ids[--q->free_count];
    uint8_t *buffer = q->buffers + (size_t)vn->tx_pending * BUFFER_SIZE;
    memset(buffer, 0, HEADER_SIZE); /* no offloads: a zero header */
    return buffer + HEADER_SIZE;
}

static void virtio_net_tx_send(struct nic *nic, size_t len) {
    struct virtio_net *vn = nic->driver;
    struct net_queue *q = &vn->tx;
    q->desc[vn->tx_pending].len = (uint32_t)(HEADER_SIZE + len);
    q->desc[vn->tx_pending].flags = 0;
    queue_offer(q, vn->tx_pending);
}

static const struct nic_ops virtio_net_ops = {virtio_net_link_up, virtio_net_rx_peek, virtio_net_rx_release,
                                              virtio_net_tx_buffer, virtio_net_tx_send};

static int fail(const struct pci_device *pci, struct virtio_net *vn, const char *why) {
    kprintf("net: virtio-net at %02x:%02x.%x failed: %s; going on without it\n", pci->bus, pci->slot,
            pci->func, why);
    virtio_pci_reset(&vn->dev); /* stops any DMA into memory we may free later */
    return -1;
}

int virtio_net_probe(const struct pci_device *pci, struct nic *nic) {
    if (pci->vendor != VIRTIO_PCI_VENDOR) return 0;
    if (pci->device != VIRTIO_NET_MODERN &&
        !(pci->device == VIRTIO_NET_TRANSITIONAL && pci_read16(pci, PCI_SUBSYSTEM_ID) == 1))
        return 0;
    static struct virtio_net vn; /* one card: the first that starts */
    memset(&vn, 0, sizeof vn);
    uint32_t features = 0;
    const char *why = virtio_pci_open_features(pci, &vn.dev, FEATURE_MAC | FEATURE_STATUS, &features);
    if (why) return fail(pci, &vn, why);
    if (!(features & FEATURE_MAC) || !vn.dev.device) return fail(pci, &vn, "the device has no MAC address");
    vn.has_status = features & FEATURE_STATUS;
    if ((why = queue_create(&vn, 0, &vn.rx)) || (why = queue_create(&vn, 1, &vn.tx)))
        return fail(pci, &vn, why);
    for (uint16_t i = 0; i < vn.rx.size; i++) {
        vn.rx.desc[i].len = BUFFER_SIZE;
        vn.rx.desc[i].flags = DESC_F_WRITE;
        vn.rx.avail_ring[i] = i;
    }
    *vn.rx.avail_idx = vn.rx.size;
    for (uint16_t i = 0; i < vn.tx.size; i++) vn.tx.free_ids[i] = (uint16_t)(vn.tx.size - 1 - i);
    vn.tx.free_count = vn.tx.size;
    if ((why = virtio_pci_start(&vn.dev))) return fail(pci, &vn, why);
    *vn.rx.notify = 0;
    for (int i = 0; i < 6; i++) nic->mac[i] = vn.dev.device[i];
    nic->model = "virtio-net";
    nic->driver = &vn;
    nic->ops = &virtio_net_ops;
    return 1;
}
