/* ramdisk_partition.c - the ramdisk in a GPT partition of its own.
 *
 * FAT32 caps a file at 4 GiB and the firmware's file layer is the only way
 * to the ESP, so big models live in a partition beside it (written by
 * tools/mkimage.sh --ramdisk-partition, layout documented there): type GUID
 * C4DDAD76-6A2F-4E45-A3C0-71AA5F798057, a 4 KiB header giving the tar's
 * size, then the tar. It is looked for on the disk the loader came from,
 * through that disk's Block I/O protocol, and read in large requests.
 */
#include "boot/gpt_parse.h"
#include "boot/loader.h"

#define MEDIA_HARDDRIVE_TYPE 4 /* MEDIA_DEVICE_PATH */
#define MEDIA_HARDDRIVE_SUBTYPE 1

static const EFI_GUID RAMDISK_PARTITION_TYPE = {
    0xc4ddad76, 0x6a2f, 0x4e45, {0xa3, 0xc0, 0x71, 0xaa, 0x5f, 0x79, 0x80, 0x57}};

struct disk {
    EFI_BLOCK_IO *io;
    uint32_t block_size;
};

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
           disk->block_size <= RAMDISK_HEADER_BYTES && (disk->block_size & (disk->block_size - 1)) == 0;
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
    struct gpt_table table;
    bool ok = disk_read(disk, 1, disk->block_size, (void *)scratch) &&
              gpt_header_parse((const void *)scratch, disk->block_size, &table);
    loader_bs->FreePages(scratch, 1);
    if (!ok || table.entry_count == 0) return false;

    uint64_t bytes = gpt_entries_bytes(&table, disk->block_size);
    uint64_t entries = pages_alloc(PAGES_FOR(bytes), "the GPT entries");
    bool have =
        disk_read(disk, table.entries_lba, bytes, (void *)entries) &&
        gpt_find_entry((const void *)entries, bytes, &table, (const uint8_t *)&RAMDISK_PARTITION_TYPE, found);
    loader_bs->FreePages(entries, PAGES_FOR(bytes));
    return have;
}

/* Reads the tar the header describes into fresh pages; false on any
 * problem (already reported). */
static bool read_tar(const struct disk *disk, const struct gpt_entry *part, struct boot_info *info) {
    uint64_t part_bytes = gpt_entry_bytes(part, disk->block_size);
    uint64_t scratch = pages_alloc(PAGES_FOR(RAMDISK_HEADER_BYTES), "the ramdisk header");
    bool read_ok = part_bytes >= RAMDISK_HEADER_BYTES &&
                   disk_read(disk, part->first_lba, RAMDISK_HEADER_BYTES, (void *)scratch);
    struct ramdisk_location where = {0};
    enum ramdisk_header_result result =
        read_ok ? ramdisk_header_parse((const void *)scratch, part_bytes, disk->block_size, &where)
        : part_bytes < RAMDISK_HEADER_BYTES ? RAMDISK_HEADER_NO_ROOM
                                            : RAMDISK_HEADER_INVALID;
    loader_bs->FreePages(scratch, PAGES_FOR(RAMDISK_HEADER_BYTES));
    switch (result) {
    case RAMDISK_HEADER_OK:
        break;
    case RAMDISK_HEADER_NO_ROOM:
        log_printf("loader: warning: the ramdisk partition is only %lu bytes, no room for its header\n",
                   part_bytes);
        return false;
    case RAMDISK_HEADER_INVALID:
        log_printf("loader: warning: the ramdisk partition has no valid header%s\n",
                   read_ok ? "" : " (read error)");
        return false;
    case RAMDISK_HEADER_TOO_SMALL:
        log_printf("loader: warning: the ramdisk partition (%lu bytes) is too small for its tar "
                   "(%lu bytes from offset %u)\n",
                   part_bytes, where.tar_bytes, where.tar_offset);
        return false;
    case RAMDISK_HEADER_EMPTY:
        return false;
    }

    uint64_t bytes = round_up(where.tar_bytes, disk->block_size);
    uint64_t addr = 0;
    if (!pages_alloc_or_report(bytes, "the ramdisk", &addr)) return false;
    uint64_t lba = part->first_lba + where.tar_offset / disk->block_size;
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
    mem_zero((void *)(addr + where.tar_bytes), PAGES_FOR(bytes) * LOADER_PAGE_SIZE - where.tar_bytes);
    info->ramdisk = addr;
    info->ramdisk_size = where.tar_bytes;
    log_printf("loader: ramdisk partition: %lu MiB in %lu ms (%lu MB/s)\n", where.tar_bytes >> 20, ms,
               ms ? where.tar_bytes / 1000 / ms : 0);
    return true;
}

bool ramdisk_partition_read(EFI_HANDLE image, struct boot_info *info) {
    struct disk disk;
    struct gpt_entry part;
    if (!boot_disk_open(image, &disk) || !find_ramdisk_partition(&disk, &part)) return false;
    if (!read_tar(&disk, &part, info)) log_printf("loader: booting without a ramdisk\n");
    return true;
}
