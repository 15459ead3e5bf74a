/* gpt_parse.c - the GPT and the ramdisk partition's header as pure
 * functions over bytes (boot/gpt_parse.h). */
#include "boot/gpt_parse.h"

struct gpt_header {
    char signature[8]; /* "EFI PART" */
    uint32_t revision, header_size, header_crc, reserved;
    uint64_t my_lba, alternate_lba, first_usable_lba, last_usable_lba;
    uint8_t disk_guid[16];
    uint64_t entries_lba;
    uint32_t entry_count, entry_size, entries_crc;
} __attribute__((packed));

struct ramdisk_header {
    char magic[8]; /* "LLMKRDSK" */
    uint32_t version;
    uint32_t tar_offset;
    uint64_t tar_bytes;
} __attribute__((packed));

static bool bytes_equal(const void *a, const void *b, uint64_t n) {
    const uint8_t *x = a, *y = b;
    for (uint64_t i = 0; i < n; i++)
        if (x[i] != y[i]) return false;
    return true;
}

static void copy_bytes(void *dst, const void *src, uint64_t n) {
    uint8_t *d = dst;
    const uint8_t *s = src;
    while (n--) *d++ = *s++;
}

bool gpt_header_parse(const void *block, uint64_t block_size, struct gpt_table *table) {
    struct gpt_header header;
    if (block_size < sizeof header) return false;
    copy_bytes(&header, block, sizeof header);
    if (!bytes_equal(header.signature, "EFI PART", 8) || header.entry_size < sizeof(struct gpt_entry) ||
        (uint64_t)header.entry_count * header.entry_size > GPT_ENTRIES_MAX_BYTES)
        return false;
    table->entries_lba = header.entries_lba;
    table->entry_count = header.entry_count;
    table->entry_size = header.entry_size;
    return true;
}

uint64_t gpt_entries_bytes(const struct gpt_table *table, uint64_t block_size) {
    uint64_t n = table->entry_count * table->entry_size;
    return (n + block_size - 1) / block_size * block_size;
}

bool gpt_find_entry(const void *entries, uint64_t bytes, const struct gpt_table *table,
                    const uint8_t type[16], struct gpt_entry *found) {
    const uint8_t *base = entries;
    for (uint64_t i = 0; i < table->entry_count; i++) {
        uint64_t at = i * table->entry_size;
        if (at + sizeof(struct gpt_entry) > bytes) break;
        struct gpt_entry entry;
        copy_bytes(&entry, base + at, sizeof entry);
        /* (last - first + 1) blocks of up to 4 KiB must fit 64 bits. */
        if (bytes_equal(entry.type_guid, type, 16) && entry.last_lba >= entry.first_lba &&
            entry.last_lba - entry.first_lba < (UINT64_MAX >> 12)) {
            *found = entry;
            return true;
        }
    }
    return false;
}

uint64_t gpt_entry_bytes(const struct gpt_entry *entry, uint64_t block_size) {
    return (entry->last_lba - entry->first_lba + 1) * block_size;
}

enum ramdisk_header_result ramdisk_header_parse(const void *bytes, uint64_t part_bytes, uint64_t block_size,
                                                struct ramdisk_location *where) {
    if (part_bytes < RAMDISK_HEADER_BYTES) return RAMDISK_HEADER_NO_ROOM;
    struct ramdisk_header header;
    copy_bytes(&header, bytes, sizeof header);
    if (!bytes_equal(header.magic, "LLMKRDSK", 8)) return RAMDISK_HEADER_INVALID;
    where->tar_offset = header.tar_offset;
    where->tar_bytes = header.tar_bytes;
    if (header.version != RAMDISK_HEADER_VERSION || header.tar_offset < sizeof header || block_size == 0 ||
        header.tar_offset % block_size)
        return RAMDISK_HEADER_INVALID;
    if (header.tar_bytes > part_bytes || header.tar_offset > part_bytes - header.tar_bytes)
        return RAMDISK_HEADER_TOO_SMALL;
    if (header.tar_bytes == 0) return RAMDISK_HEADER_EMPTY;
    return RAMDISK_HEADER_OK;
}
