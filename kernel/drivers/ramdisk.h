/* ramdisk.h - the tar archive (GNU format) the loader read, used in place (zero copy). */
#ifndef KERNEL_RAMDISK_H
#define KERNEL_RAMDISK_H

#include <stddef.h>
#include <stdint.h>

struct ramdisk_file {
    const char *name;    /* NUL-terminated (points into a small table, not the archive) */
    const uint8_t *data; /* in place inside the archive */
    size_t size;
};

/* Indexes the archive; bad entries are reported and skipped. Returns the
 * number of regular files found. */
int ramdisk_init(const void *archive, size_t size);
int ramdisk_count(void);
const struct ramdisk_file *ramdisk_file_at(int index);
const struct ramdisk_file *ramdisk_find(const char *name);

#endif
