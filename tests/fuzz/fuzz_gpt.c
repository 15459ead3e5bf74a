/* fuzz_gpt.c - the loader's GPT reader and the ramdisk partition's header
 * (boot/gpt_parse.c) over a disk image: the input is the disk from LBA 0,
 * the first byte choosing the block size (512 << 0..3). It is read the way
 * ramdisk_partition.c reads a disk: LBA 1 for the header, then the entry
 * array at its LBA, then the partition's first 4 KiB; reads past the image's
 * end fail as a disk's would. */
#include <stdint.h>

#include "boot/gpt_parse.h"
#include "tests/fuzz/fuzz_common.h"

static const uint8_t RAMDISK_TYPE[16] = {0x76, 0xad, 0xdd, 0xc4, 0x2f, 0x6a, 0x45, 0x4e,
                                         0xa3, 0xc0, 0x71, 0xaa, 0x5f, 0x79, 0x80, 0x57};

/* A read of exactly `bytes` into a fresh buffer, or NULL where the disk ends. */
static uint8_t *disk_read(const uint8_t *disk, size_t disk_size, uint64_t lba, uint64_t bytes,
                          uint64_t block_size) {
    if (lba > disk_size / block_size || bytes > disk_size - lba * block_size) return NULL;
    uint8_t *buf = malloc(bytes ? bytes : 1);
    memcpy(buf, disk + lba * block_size, bytes);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    uint64_t block_size = 512ULL << (data[0] & 3);
    const uint8_t *disk = data + 1;
    size_t disk_size = size - 1;

    uint8_t *block = disk_read(disk, disk_size, 1, block_size, block_size);
    struct gpt_table table;
    bool ok = block && gpt_header_parse(block, block_size, &table);
    free(block);
    if (!ok || table.entry_count == 0) return 0;
    FUZZ_ASSERT(table.entry_size >= sizeof(struct gpt_entry), "entry smaller than an entry");
    FUZZ_ASSERT(table.entry_count * table.entry_size <= GPT_ENTRIES_MAX_BYTES, "entry array too large");

    uint64_t bytes = gpt_entries_bytes(&table, block_size);
    FUZZ_ASSERT(bytes >= table.entry_count * table.entry_size && bytes % block_size == 0,
                "entry bytes wrong");
    uint8_t *entries = disk_read(disk, disk_size, table.entries_lba, bytes, block_size);
    struct gpt_entry part;
    ok = entries && gpt_find_entry(entries, bytes, &table, RAMDISK_TYPE, &part);
    free(entries);
    if (!ok) return 0;
    FUZZ_ASSERT(part.last_lba >= part.first_lba, "partition ends before it starts");
    uint64_t part_bytes = gpt_entry_bytes(&part, block_size);
    FUZZ_ASSERT(part_bytes >= block_size && part_bytes / block_size == part.last_lba - part.first_lba + 1,
                "partition size overflowed");

    uint8_t *header = disk_read(disk, disk_size, part.first_lba, RAMDISK_HEADER_BYTES, block_size);
    if (!header) return 0;
    struct ramdisk_location where = {0};
    enum ramdisk_header_result r = ramdisk_header_parse(header, part_bytes, block_size, &where);
    free(header);
    if (r == RAMDISK_HEADER_OK) {
        FUZZ_ASSERT(where.tar_bytes > 0 && where.tar_offset % block_size == 0, "accepted a bad tar place");
        FUZZ_ASSERT(where.tar_offset <= part_bytes && where.tar_bytes <= part_bytes - where.tar_offset,
                    "accepted a tar past the partition");
    }
    return 0;
}
