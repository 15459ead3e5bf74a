/* ramdisk_partition.c - the ramdisk in a GPT partition of its own.
 *
 * FAT32 caps a file at 4 GiB and the firmware's file layer is the only way
 * to the ESP, so big models live in a partition beside it (written by
 * tools/mkimage.sh --ramdisk-partition, layout documented there): type GUID
 * C4DDAD76-6A2F-4E45-A3C0-71AA5F798057, a 4 KiB header giving the tar's
 * size, then the tar. It is looked for on the disk the loader came from,
 * through that disk's Block I/O protocol, and read in large requests.
 */
#include "boot/loader.h"

#define HEADER_BYTES 4096ULL
#define HEADER_VERSION 1
#define GPT_ENTRIES_MAX_BYTES (1ULL << 20)
#define MEDIA_HARDDRIVE_TYPE 4 /* MEDIA_DEVICE_PATH */
#define MEDIA_HARDDRIVE_SUBTYPE 1

static const EFI_GUID RAMDISK_PARTITION_TYPE = {
    0xc4ddad76, 0x6a2f, 0x4e45, {0xa3, 0xc0, 0x71, 0xaa, 0x5f, 0x79, 0x80, 0x57}};

struct gpt_header {
    char signature[8]; /* "EFI PART" */
    uint32_t revision, header_size, header_crc, reserved;
    uint64_t my_lba, alternate_lba, first_usable_lba, last_usable_lba;
    uint8_t disk_guid[16];
    uint64_t entries_lba;
    uint32_t entry_count, entry_size, entries_crc;
} __attribute__((packed));

struct gpt_entry {
    uint8_t type_guid[16];
    uint8_t unique_guid[16];
    uint64_t first_lba, last_lba, attributes;
    uint16_t name[36];
} __attribute__((packed));

struct ramdisk_header {
    char magic[8]; /* "LLMKRDSK" */
    uint32_t version;
    uint32_t tar_offset;
    uint64_t tar_bytes;
} __attribute__((packed));

struct disk {
    EFI_BLOCK_IO *io;
    uint32_t block_size;
};

static bool bytes_equal(const void *a, const void *b, uint64_t n) {
    const uint8_t *x = a, *y = b;
    for (uint64_t i = 0; i < n; i++)
        if (x[i] != y[i]) return false;
    return true;
}

static void *pool_alloc(UINTN bytes) {
    void *p = NULL;
    if (EFI_ERROR(loader_bs->AllocatePool(EfiLoaderData, bytes, &p))) return NULL;
    return p;
}

/* The whole-disk Block I/O under the partition the loader was started from:
 * its device path minus the last hard-drive node. */
static bool boot_disk_open(EFI_HANDLE image, struct disk *disk) {
    EFI_GUID loaded_image_guid = EFI_LOADED_IMAGE_PROTOCOL_GUID;
    EFI_GUID device_path_guid = EFI_DEVICE_PATH_PROTOCOL_GUID;
    EFI_GUID block_io_guid = EFI_BLOCK_IO_PROTOCOL_GUID;
    EFI_LOADED_IMAGE *loaded_image = NULL;
    EFI_DEVICE_PATH *path = NULL;
    if (EFI_ERROR(loader_bs->HandleProtocol(image, &loaded_image_guid, (void **)&loaded_image)) ||
        EFI_ERROR(loader_bs->HandleProtocol(loaded_image->DeviceHandle, &device_path_guid, (void **)&path)))
        return false;

    uint64_t partition_node = 0, offset = 0;
    bool have_partition = false;
    for (EFI_DEVICE_PATH *node = path; !IsDevicePathEnd(node); node = NextDevicePathNode(node)) {
        if ((uint64_t)DevicePathNodeLength(node) < sizeof(EFI_DEVICE_PATH)) return false; /* malformed */
        if (DevicePathType(node) == MEDIA_HARDDRIVE_TYPE &&
            DevicePathSubType(node) == MEDIA_HARDDRIVE_SUBTYPE) {
            partition_node = offset;
            have_partition = true;
        }
        offset += DevicePathNodeLength(node);
    }
    if (!have_partition) return false;

    EFI_DEVICE_PATH *disk_path = pool_alloc(partition_node + sizeof(EFI_DEVICE_PATH));
    if (!disk_path) return false;
    mem_copy(disk_path, path, partition_node);
    EFI_DEVICE_PATH *end = (EFI_DEVICE_PATH *)((uint8_t *)disk_path + partition_node);
    SetDevicePathEndNode(end);

    EFI_DEVICE_PATH *rest = disk_path;
    EFI_HANDLE handle = NULL;
    EFI_STATUS status = loader_bs->LocateDevicePath(&block_io_guid, &rest, &handle);
    bool whole_path = !EFI_ERROR(status) && IsDevicePathEnd(rest);
    loader_bs->FreePool(disk_path);
    if (!whole_path) return false;
    if (EFI_ERROR(loader_bs->HandleProtocol(handle, &block_io_guid, (void **)&disk->io))) return false;
    EFI_BLOCK_IO_MEDIA *media = disk->io->Media;
    disk->block_size = media->BlockSize;
    /* Whole disks only; sectors the header offset and page buffers suit. */
    return !media->LogicalPartition && media->MediaPresent && disk->block_size >= 512 &&
           disk->block_size <= HEADER_BYTES && (disk->block_size & (disk->block_size - 1)) == 0;
}

static bool disk_read(const struct disk *disk, uint64_t lba, uint64_t bytes, void *buffer) {
    return !EFI_ERROR(disk->io->ReadBlocks(disk->io, disk->io->Media->MediaId, lba, bytes, buffer));
}

static uint64_t round_up(uint64_t n, uint64_t unit) {
    return (n + unit - 1) / unit * unit;
}

/* The first entry with our type GUID in the disk's primary GPT. */
static bool find_ramdisk_partition(const struct disk *disk, struct gpt_entry *found) {
    uint64_t scratch = pages_alloc(1, "the GPT header");
    struct gpt_header *header = (struct gpt_header *)scratch;
    bool ok = disk_read(disk, 1, disk->block_size, header) && bytes_equal(header->signature, "EFI PART", 8) &&
              header->entry_size >= sizeof(struct gpt_entry) &&
              (uint64_t)header->entry_count * header->entry_size <= GPT_ENTRIES_MAX_BYTES;
    uint64_t entry_count = ok ? header->entry_count : 0, entry_size = ok ? header->entry_size : 0;
    uint64_t entries_lba = ok ? header->entries_lba : 0;
    loader_bs->FreePages(scratch, 1);
    if (!ok || entry_count == 0) return false;

    uint64_t bytes = round_up(entry_count * entry_size, disk->block_size);
    uint64_t entries = pages_alloc(PAGES_FOR(bytes), "the GPT entries");
    bool have = false;
    if (disk_read(disk, entries_lba, bytes, (void *)entries)) {
        for (uint64_t i = 0; i < entry_count && !have; i++) {
            const struct gpt_entry *entry = (const struct gpt_entry *)(entries + i * entry_size);
            if (bytes_equal(entry->type_guid, &RAMDISK_PARTITION_TYPE, 16) &&
                entry->last_lba >= entry->first_lba) {
                *found = *entry;
                have = true;
            }
        }
    }
    loader_bs->FreePages(entries, PAGES_FOR(bytes));
    return have;
}

/* Reads the tar the header describes into fresh pages; false on any
 * problem (already reported). */
static bool read_tar(const struct disk *disk, const struct gpt_entry *part, struct boot_info *info) {
    uint64_t part_bytes = (part->last_lba - part->first_lba + 1) * disk->block_size;
    if (part_bytes < HEADER_BYTES) {
        log_printf("loader: warning: the ramdisk partition is only %lu bytes, no room for its header\n",
                   part_bytes);
        return false;
    }
    uint64_t scratch = pages_alloc(PAGES_FOR(HEADER_BYTES), "the ramdisk header");
    struct ramdisk_header header = {0};
    bool read_ok = disk_read(disk, part->first_lba, HEADER_BYTES, (void *)scratch);
    if (read_ok) mem_copy(&header, (void *)scratch, sizeof(header));
    loader_bs->FreePages(scratch, PAGES_FOR(HEADER_BYTES));
    if (!read_ok || !bytes_equal(header.magic, "LLMKRDSK", 8) || header.version != HEADER_VERSION ||
        header.tar_offset < sizeof(header) || header.tar_offset % disk->block_size) {
        log_printf("loader: warning: the ramdisk partition has no valid header%s\n",
                   read_ok ? "" : " (read error)");
        return false;
    }
    if (header.tar_bytes > part_bytes || header.tar_offset > part_bytes - header.tar_bytes) {
        log_printf("loader: warning: the ramdisk partition (%lu bytes) is too small for its tar "
                   "(%lu bytes from offset %u)\n",
                   part_bytes, header.tar_bytes, header.tar_offset);
        return false;
    }
    if (header.tar_bytes == 0) return false;

    uint64_t bytes = round_up(header.tar_bytes, disk->block_size);
    uint64_t addr = 0;
    if (!pages_alloc_or_report(bytes, "the ramdisk", &addr)) return false;
    uint64_t lba = part->first_lba + header.tar_offset / disk->block_size;
    uint64_t start = tsc_read();
    struct read_progress progress;
    read_progress_start(&progress, "the ramdisk", bytes);
    for (uint64_t done = 0; done < bytes;) {
        uint64_t chunk = read_progress_request(&progress, done, disk->block_size);
        if (!disk_read(disk, lba + done / disk->block_size, chunk, (void *)(addr + done))) {
            log_printf("loader: warning: read error in the ramdisk partition at byte %lu\n", done);
            loader_bs->FreePages(addr, PAGES_FOR(bytes));
            return false;
        }
        done += chunk;
        read_progress_update(&progress, done);
    }
    uint64_t ms = tsc_to_ms(tsc_read() - start);
    /* Nothing stale after the tar, up to the end of its last page. */
    mem_zero((void *)(addr + header.tar_bytes), PAGES_FOR(bytes) * LOADER_PAGE_SIZE - header.tar_bytes);
    info->ramdisk = addr;
    info->ramdisk_size = header.tar_bytes;
    log_printf("loader: ramdisk partition: %lu MiB in %lu ms (%lu MB/s)\n", header.tar_bytes >> 20, ms,
               ms ? header.tar_bytes / 1000 / ms : 0);
    return true;
}

bool ramdisk_partition_read(EFI_HANDLE image, struct boot_info *info) {
    struct disk disk;
    struct gpt_entry part;
    if (!boot_disk_open(image, &disk) || !find_ramdisk_partition(&disk, &part)) return false;
    if (!read_tar(&disk, &part, info)) log_printf("loader: booting without a ramdisk\n");
    return true;
}
