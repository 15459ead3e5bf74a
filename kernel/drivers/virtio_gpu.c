/* virtio_gpu.c - a screen on virtio-gpu-pci, whose firmware driver (OVMF's)
 * offers a blt-only GOP and so leaves no linear framebuffer to the kernel.
 *
 * One job: a 2D scanout of a framebuffer in guest RAM. The device is found
 * through its virtio 1.x PCI capabilities (common configuration and notify
 * regions), one control queue is set up, and the resource is created,
 * backed by the buffer and attached to scanout 0. The framebuffer console
 * then draws into the buffer as into any GOP framebuffer, and every change
 * is sent as TRANSFER_TO_HOST_2D plus RESOURCE_FLUSH of the rows it touched.
 * Commands are synchronous (one at a time, the used ring polled); anything
 * unexpected ends the setup with one log line and the kernel keeps serial. */
#include "kernel/drivers/virtio_gpu.h"

#include "kernel/console/console.h"
#include "kernel/drivers/fbcon.h"
#include "kernel/drivers/pci.h"
#include "kernel/drivers/timer.h"
#include "kernel/drivers/virtio_pci.h"
#include "kernel/mm/memory.h"
#include "lib/string.h"

#define VIRTIO_ID_GPU_MODERN 0x1050

enum {
    CMD_GET_DISPLAY_INFO = 0x0100,
    CMD_RESOURCE_CREATE_2D = 0x0101,
    CMD_SET_SCANOUT = 0x0103,
    CMD_RESOURCE_FLUSH = 0x0104,
    CMD_TRANSFER_TO_HOST_2D = 0x0105,
    CMD_RESOURCE_ATTACH_BACKING = 0x0106,
    RESP_OK_NODATA = 0x1100,
    RESP_OK_DISPLAY_INFO = 0x1101,
};

#define FORMAT_B8G8R8X8 2 /* bytes B, G, R, X: the BGRX layout of GOP framebuffers */
#define RESOURCE_ID 1
#define MAX_SCANOUTS 16
#define DEFAULT_WIDTH 1024
#define DEFAULT_HEIGHT 768
#define MAX_WIDTH 3840
#define MAX_HEIGHT 2160

struct gpu_hdr {
    uint32_t type, flags;
    uint64_t fence_id;
    uint32_t ctx_id;
    uint8_t ring_idx, pad[3];
};

struct gpu_rect {
    uint32_t x, y, width, height;
};

struct gpu_display_info {
    struct gpu_hdr hdr;
    struct {
        struct gpu_rect r;
        uint32_t enabled, flags;
    } modes[MAX_SCANOUTS];
};

struct gpu_create_2d {
    struct gpu_hdr hdr;
    uint32_t resource_id, format, width, height;
};

struct gpu_attach_backing {
    struct gpu_hdr hdr;
    uint32_t resource_id, nr_entries;
    struct {
        uint64_t addr;
        uint32_t length, pad;
    } entry;
};

struct gpu_set_scanout {
    struct gpu_hdr hdr;
    struct gpu_rect r;
    uint32_t scanout_id, resource_id;
};

struct gpu_transfer_2d {
    struct gpu_hdr hdr;
    struct gpu_rect r;
    uint64_t offset;
    uint32_t resource_id, pad;
};

struct gpu_flush {
    struct gpu_hdr hdr;
    struct gpu_rect r;
    uint32_t resource_id, pad;
};

static struct virtio_pci dev;
static struct virtq controlq;
static struct boot_framebuffer screen;
static int failed; /* a command failed after setup: stop sending */

/* Sends the request in controlq's request buffer and checks the response type. */
static int command(size_t request_size, size_t response_size, uint32_t want) {
    struct gpu_hdr *resp = controlq.response;
    resp->type = 0;
    if (virtq_call(&dev, &controlq, request_size, response_size) != 0) return -1;
    return resp->type == want ? 0 : -1;
}

static void *request(uint32_t type, size_t size) {
    memset(controlq.request, 0, size);
    ((struct gpu_hdr *)controlq.request)->type = type;
    return controlq.request;
}

static void display_size(uint32_t *width, uint32_t *height) {
    *width = DEFAULT_WIDTH;
    *height = DEFAULT_HEIGHT;
    request(CMD_GET_DISPLAY_INFO, sizeof(struct gpu_hdr));
    if (command(sizeof(struct gpu_hdr), sizeof(struct gpu_display_info), RESP_OK_DISPLAY_INFO) != 0) return;
    const struct gpu_display_info *info = controlq.response;
    const struct gpu_rect *r = &info->modes[0].r;
    if (info->modes[0].enabled && r->width >= 64 && r->height >= 64 && r->width <= MAX_WIDTH &&
        r->height <= MAX_HEIGHT) {
        *width = r->width;
        *height = r->height;
    }
}

/* TRANSFER_TO_HOST_2D and RESOURCE_FLUSH of rows y .. y + rows - 1. */
static void present_rows(uint32_t y, uint32_t rows) {
    if (failed || !rows || y >= screen.height) return;
    if (rows > screen.height - y) rows = screen.height - y;
    struct gpu_rect r = {0, y, screen.width, rows};
    struct gpu_transfer_2d *t = request(CMD_TRANSFER_TO_HOST_2D, sizeof *t);
    t->r = r;
    t->offset = (uint64_t)y * screen.pitch;
    t->resource_id = RESOURCE_ID;
    int rc = command(sizeof *t, sizeof(struct gpu_hdr), RESP_OK_NODATA);
    if (rc == 0) {
        struct gpu_flush *f = request(CMD_RESOURCE_FLUSH, sizeof *f);
        f->r = r;
        f->resource_id = RESOURCE_ID;
        rc = command(sizeof *f, sizeof(struct gpu_hdr), RESP_OK_NODATA);
    }
    if (rc != 0) {
        failed = 1; /* the console keeps drawing in RAM; serial still works */
        kprintf("virtio-gpu: a screen update failed; the screen stops here\n");
    }
}

static const char *set_up_scanout(void) {
    uint32_t width, height;
    display_size(&width, &height);
    uint64_t bytes = (uint64_t)width * height * 4;
    uint64_t pages = (bytes + PAGE_SIZE - 1) / PAGE_SIZE;
    uint64_t phys = page_alloc(pages);
    if (!phys) return "no memory for the framebuffer";
    memset(phys_to_virt(phys), 0, pages * PAGE_SIZE);

    struct gpu_create_2d *c = request(CMD_RESOURCE_CREATE_2D, sizeof *c);
    c->resource_id = RESOURCE_ID;
    c->format = FORMAT_B8G8R8X8;
    c->width = width;
    c->height = height;
    if (command(sizeof *c, sizeof(struct gpu_hdr), RESP_OK_NODATA) != 0) goto refused;
    struct gpu_attach_backing *a = request(CMD_RESOURCE_ATTACH_BACKING, sizeof *a);
    a->resource_id = RESOURCE_ID;
    a->nr_entries = 1;
    a->entry.addr = phys;
    a->entry.length = (uint32_t)bytes;
    if (command(sizeof *a, sizeof(struct gpu_hdr), RESP_OK_NODATA) != 0) goto refused;
    struct gpu_set_scanout *s = request(CMD_SET_SCANOUT, sizeof *s);
    s->r = (struct gpu_rect){0, 0, width, height};
    s->scanout_id = 0;
    s->resource_id = RESOURCE_ID;
    if (command(sizeof *s, sizeof(struct gpu_hdr), RESP_OK_NODATA) != 0) goto refused;

    screen = (struct boot_framebuffer){.base = phys,
                                       .size = pages * PAGE_SIZE,
                                       .width = width,
                                       .height = height,
                                       .pitch = width * 4,
                                       .format = BOOT_PIXEL_BGRX,
                                       .red_mask = 0x00ff0000,
                                       .green_mask = 0x0000ff00,
                                       .blue_mask = 0x000000ff,
                                       .reserved_mask = 0xff000000};
    return NULL;
refused:
    page_free(phys, pages);
    return "the device refused a scanout command";
}

int virtio_gpu_init(void) {
    for (int i = 0; i < pci_device_count(); i++) {
        const struct pci_device *pci = pci_device_at(i);
        if (pci->vendor != VIRTIO_PCI_VENDOR || pci->device != VIRTIO_ID_GPU_MODERN) continue;
        const char *problem = virtio_pci_open(pci, &dev);
        if (!problem) problem = virtq_create(&dev, 0, &controlq);
        if (!problem) problem = virtio_pci_start(&dev);
        if (!problem) problem = set_up_scanout();
        if (problem) {
            kprintf("virtio-gpu: %02x:%02x.%x: %s; no screen (serial only)\n", pci->bus, pci->slot, pci->func,
                    problem);
            virtio_pci_reset(&dev);
            return -1;
        }
        fbcon_set_present(present_rows);
        fbcon_init(&screen);
        kprintf("virtio-gpu: %ux%u scanout from a framebuffer in RAM\n", screen.width, screen.height);
        return 0;
    }
    return -1;
}
