/* gpt_parse.h - the GPT and the ramdisk partition's header as pure
 * functions over bytes read from the disk: no UEFI calls, so the same file
 * builds into the fuzz harness tests/fuzz/fuzz_gpt.c. Every count, size and
 * offset on the disk is checked before it is used. */
#ifndef BOOT_GPT_PARSE_H
#define BOOT_GPT_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#define GPT_ENTRIES_MAX_BYTES (1ULL << 20)
#define RAMDISK_HEADER_BYTES 4096ULL
#define RAMDISK_HEADER_VERSION 1

struct gpt_entry {
    uint8_t type_guid[16];
    uint8_t unique_guid[16];
    uint64_t first_lba, last_lba, attributes;
    uint16_t name[36];
} __attribute__((packed));

/* Where the partition entries are, from the header. */
struct gpt_table {
    uint64_t entries_lba;
    uint64_t entry_count, entry_size; /* count * size <= GPT_ENTRIES_MAX_BYTES */
};

/* The primary header in block[0, block_size) (LBA 1): true with *table
 * filled when it has the signature and an entry array we can read. */
bool gpt_header_parse(const void *block, uint64_t block_size, struct gpt_table *table);

/* Bytes the entry array takes, rounded up to whole blocks. */
uint64_t gpt_entries_bytes(const struct gpt_table *table, uint64_t block_size);

/* The first entry in entries[0, bytes) of this type whose LBA range is sane
 * (first <= last, its byte size fits 64 bits): true with *found set. */
bool gpt_find_entry(const void *entries, uint64_t bytes, const struct gpt_table *table,
                    const uint8_t type[16], struct gpt_entry *found);

/* The partition's size in bytes (found entries only: no overflow). */
uint64_t gpt_entry_bytes(const struct gpt_entry *entry, uint64_t block_size);

/* The ramdisk partition's 4 KiB header (layout in tools/mkimage.sh). */
enum ramdisk_header_result {
    RAMDISK_HEADER_OK,
    RAMDISK_HEADER_NO_ROOM,   /* the partition is smaller than the header */
    RAMDISK_HEADER_INVALID,   /* wrong magic or version, misaligned tar offset */
    RAMDISK_HEADER_TOO_SMALL, /* the tar runs past the partition's end */
    RAMDISK_HEADER_EMPTY,     /* a tar of 0 bytes */
};
struct ramdisk_location {
    uint32_t tar_offset; /* bytes from the partition start, a whole number of blocks */
    uint64_t tar_bytes;
};
/* header: the partition's first RAMDISK_HEADER_BYTES. On RAMDISK_HEADER_OK,
 * tar_offset + tar_bytes <= part_bytes. *where is filled from the header
 * whenever the magic matched (for messages). */
enum ramdisk_header_result ramdisk_header_parse(const void *header, uint64_t part_bytes, uint64_t block_size,
                                                struct ramdisk_location *where);

#endif
