/* virtio_pci.c - the virtio 1.x PCI transport and a synchronous split
 * virtqueue (virtio 1.x spec, 4.1 "Virtio Over PCI Bus" and 2.7 "Split
 * Virtqueues"). No interrupts: the driver polls the used ring, which is all
 * a console needs and works before any interrupt routing exists. */
#include "kernel/drivers/virtio_pci.h"

#include "kernel/drivers/timer.h"
#include "kernel/mm/memory.h"
#include "kernel/mm/paging.h"
#include "lib/string.h"

#define PCI_STATUS 0x06
#define PCI_STATUS_CAPS 0x10
#define PCI_CAP_POINTER 0x34
#define PCI_CAP_VENDOR 0x09

/* virtio_pci_cap.cfg_type */
#define CAP_COMMON 1
#define CAP_NOTIFY 2
#define CAP_DEVICE 4

/* struct virtio_pci_common_cfg offsets */
#define COMMON_DEVICE_FEATURE_SELECT 0x00
#define COMMON_DEVICE_FEATURE 0x04
#define COMMON_DRIVER_FEATURE_SELECT 0x08
#define COMMON_DRIVER_FEATURE 0x0C
#define COMMON_STATUS 0x14
#define COMMON_QUEUE_SELECT 0x16
#define COMMON_QUEUE_SIZE 0x18
#define COMMON_QUEUE_ENABLE 0x1C
#define COMMON_QUEUE_NOTIFY_OFF 0x1E
#define COMMON_QUEUE_DESC 0x20
#define COMMON_QUEUE_DRIVER 0x28
#define COMMON_QUEUE_DEVICE 0x30
#define COMMON_SIZE 0x38

#define STATUS_ACKNOWLEDGE 1
#define STATUS_DRIVER 2
#define STATUS_DRIVER_OK 4
#define STATUS_FEATURES_OK 8
#define STATUS_FAILED 0x80
#define FEATURE_VERSION_1_HIGH 1 /* bit 32: bit 0 of feature word 1 */

#define DESC_F_NEXT 1
#define DESC_F_WRITE 2
#define AVAIL_F_NO_INTERRUPT 1
#define QUEUE_MAX 16
#define CALL_TIMEOUT_NS 1000000000ull

struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags, next;
};

struct virtq_avail {
    uint16_t flags, idx;
    uint16_t ring[QUEUE_MAX];
};

struct virtq_used {
    uint16_t flags, idx;
    struct {
        uint32_t id, len;
    } ring[QUEUE_MAX];
};

static uint8_t read8(volatile uint8_t *base, unsigned off) {
    return *(volatile uint8_t *)(base + off);
}
static void write8(volatile uint8_t *base, unsigned off, uint8_t v) {
    *(volatile uint8_t *)(base + off) = v;
}
static uint16_t read16(volatile uint8_t *base, unsigned off) {
    return *(volatile uint16_t *)(base + off);
}
static void write16(volatile uint8_t *base, unsigned off, uint16_t v) {
    *(volatile uint16_t *)(base + off) = v;
}
static uint32_t read32(volatile uint8_t *base, unsigned off) {
    return *(volatile uint32_t *)(base + off);
}
static void write32(volatile uint8_t *base, unsigned off, uint32_t v) {
    *(volatile uint32_t *)(base + off) = v;
}
static void write64(volatile uint8_t *base, unsigned off, uint64_t v) {
    write32(base, off, (uint32_t)v);
    write32(base, off + 4, (uint32_t)(v >> 32));
}

/* The region a virtio capability points at, mapped; NULL when its BAR is
 * not a memory BAR or the region does not fit in it. */
static volatile uint8_t *map_region(const struct pci_device *pci, uint8_t cap, uint32_t min_length) {
    uint32_t word1 = pci_read32(pci, cap + 4); /* bar (byte 0), id, padding */
    uint32_t offset = pci_read32(pci, cap + 8);
    uint32_t length = pci_read32(pci, cap + 12);
    int bar = (int)(word1 & 0xff);
    uint64_t bar_size = 0;
    if (bar > 5 || length < min_length) return NULL;
    uint64_t base = pci_bar_address(pci, bar, &bar_size);
    if (!base || (uint64_t)offset + length > bar_size) return NULL;
    return paging_map_mmio(base + offset, length);
}

const char *virtio_pci_open(const struct pci_device *pci, struct virtio_pci *dev) {
    return virtio_pci_open_features(pci, dev, 0, NULL);
}

const char *virtio_pci_open_features(const struct pci_device *pci, struct virtio_pci *dev, uint32_t wanted,
                                     uint32_t *granted) {
    memset(dev, 0, sizeof *dev);
    dev->pci = pci;
    if (!(pci_read16(pci, PCI_STATUS) & PCI_STATUS_CAPS))
        return "no PCI capabilities (not a virtio 1.x device)";
    pci_enable_mmio_and_dma(pci);
    uint8_t cap = (uint8_t)(pci_read32(pci, PCI_CAP_POINTER) & 0xfc);
    for (int guard = 0; cap >= 0x40 && guard < 48; guard++) {
        uint32_t head = pci_read32(pci, cap); /* id, next, length, cfg_type */
        uint8_t type = (uint8_t)(head >> 24);
        if ((head & 0xff) == PCI_CAP_VENDOR && type == CAP_COMMON && !dev->common)
            dev->common = map_region(pci, cap, COMMON_SIZE);
        if ((head & 0xff) == PCI_CAP_VENDOR && type == CAP_NOTIFY && !dev->notify) {
            dev->notify = map_region(pci, cap, 2);
            dev->notify_multiplier = pci_read32(pci, cap + 16);
        }
        if ((head & 0xff) == PCI_CAP_VENDOR && type == CAP_DEVICE && !dev->device)
            dev->device = map_region(pci, cap, 1);
        cap = (uint8_t)((head >> 8) & 0xfc);
    }
    if (!dev->common || !dev->notify) return "no usable virtio common/notify capability";
    virtio_pci_reset(dev);
    write8(dev->common, COMMON_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER);
    write32(dev->common, COMMON_DEVICE_FEATURE_SELECT, 1);
    if (!(read32(dev->common, COMMON_DEVICE_FEATURE) & FEATURE_VERSION_1_HIGH))
        return "the device does not offer VIRTIO_F_VERSION_1";
    write32(dev->common, COMMON_DEVICE_FEATURE_SELECT, 0);
    uint32_t low = read32(dev->common, COMMON_DEVICE_FEATURE) & wanted;
    if (granted) *granted = low;
    write32(dev->common, COMMON_DRIVER_FEATURE_SELECT, 0);
    write32(dev->common, COMMON_DRIVER_FEATURE, low);
    write32(dev->common, COMMON_DRIVER_FEATURE_SELECT, 1);
    write32(dev->common, COMMON_DRIVER_FEATURE, FEATURE_VERSION_1_HIGH);
    write8(dev->common, COMMON_STATUS, STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK);
    if (!(read8(dev->common, COMMON_STATUS) & STATUS_FEATURES_OK)) return "the device refused our features";
    return NULL;
}

static uint64_t zeroed_page(void) {
    uint64_t phys = page_alloc(1);
    if (phys) memset(phys_to_virt(phys), 0, PAGE_SIZE);
    return phys;
}

uint16_t virtio_pci_queue_max(struct virtio_pci *dev, uint16_t index) {
    write16(dev->common, COMMON_QUEUE_SELECT, index);
    return read16(dev->common, COMMON_QUEUE_SIZE);
}

volatile uint16_t *virtio_pci_queue_enable(struct virtio_pci *dev, uint16_t index, uint16_t size,
                                           uint64_t desc, uint64_t driver, uint64_t device) {
    write16(dev->common, COMMON_QUEUE_SELECT, index);
    write16(dev->common, COMMON_QUEUE_SIZE, size);
    write64(dev->common, COMMON_QUEUE_DESC, desc);
    write64(dev->common, COMMON_QUEUE_DRIVER, driver);
    write64(dev->common, COMMON_QUEUE_DEVICE, device);
    uint32_t notify_off = read16(dev->common, COMMON_QUEUE_NOTIFY_OFF);
    write16(dev->common, COMMON_QUEUE_ENABLE, 1);
    return (volatile uint16_t *)(dev->notify + notify_off * dev->notify_multiplier);
}

const char *virtq_create(struct virtio_pci *dev, uint16_t index, struct virtq *q) {
    memset(q, 0, sizeof *q);
    uint16_t size = virtio_pci_queue_max(dev, index);
    if (size == 0) return "the device has no such queue";
    if (size > QUEUE_MAX) size = QUEUE_MAX;
    uint64_t rings = zeroed_page(), used = zeroed_page();
    q->request_phys = zeroed_page();
    q->response_phys = zeroed_page();
    if (!rings || !used || !q->request_phys || !q->response_phys) return "out of memory for the queue";
    q->index = index;
    q->size = size;
    q->desc = phys_to_virt(rings);
    q->avail = phys_to_virt(rings + 512); /* after 16 descriptors of 16 bytes (256) */
    q->used = phys_to_virt(used);
    q->request = phys_to_virt(q->request_phys);
    q->response = phys_to_virt(q->response_phys);
    q->avail->flags = AVAIL_F_NO_INTERRUPT;
    q->notify = virtio_pci_queue_enable(dev, index, size, rings, rings + 512, used);
    return NULL;
}

const char *virtio_pci_start(struct virtio_pci *dev) {
    write8(dev->common, COMMON_STATUS,
           STATUS_ACKNOWLEDGE | STATUS_DRIVER | STATUS_FEATURES_OK | STATUS_DRIVER_OK);
    return read8(dev->common, COMMON_STATUS) & STATUS_FAILED ? "the device failed to start" : NULL;
}

void virtio_pci_reset(struct virtio_pci *dev) {
    if (!dev->common) return;
    write8(dev->common, COMMON_STATUS, 0);
    uint64_t start = timer_ns();
    while (read8(dev->common, COMMON_STATUS) != 0 && timer_ns() - start < CALL_TIMEOUT_NS) {
    }
}

int virtq_call(struct virtio_pci *dev, struct virtq *q, size_t request_size, size_t response_size) {
    (void)dev;
    q->desc[0] = (struct virtq_desc){q->request_phys, (uint32_t)request_size, DESC_F_NEXT, 1};
    q->desc[1] = (struct virtq_desc){q->response_phys, (uint32_t)response_size, DESC_F_WRITE, 0};
    q->avail->ring[q->next_avail % q->size] = 0;
    __atomic_store_n(&q->avail->idx, (uint16_t)(q->next_avail + 1), __ATOMIC_RELEASE);
    q->next_avail++;
    __atomic_thread_fence(__ATOMIC_SEQ_CST); /* the ring before the notification */
    *q->notify = q->index;
    uint64_t start = timer_ns();
    while (__atomic_load_n(&q->used->idx, __ATOMIC_ACQUIRE) == q->last_used) {
        if (timer_ns() - start > CALL_TIMEOUT_NS) return -1;
        __asm__ volatile("pause");
    }
    q->last_used++;
    return 0;
}
