/* tar.h - zero-copy reader for USTAR and GNU tar archives held in memory
 * (the ramdisk): files of any size, names up to 256 bytes. Never reads
 * outside the buffer, whatever it contains. */
#ifndef LIB_TAR_H
#define LIB_TAR_H

#include <stddef.h>
#include <stdint.h>

/* prefix (155) + "/" + name (100) + NUL; GNU long names (type L) get as much */
#define TAR_NAME_MAX 257

struct tar_reader {
    const uint8_t *data;
    size_t size;
    size_t offset; /* of the next header */
    int done;
};

struct tar_entry {
    char name[TAR_NAME_MAX];
    const uint8_t *data; /* points into the archive */
    uint64_t size;
};

void tar_init(struct tar_reader *r, const void *data, size_t size);
/* Next regular file: 1 and *out filled; 0 at the end of the archive; -1 on a
 * damaged archive with a one-line reason in err (the reader then stays at
 * the end). Directories, links and other entry types are skipped. */
int tar_next(struct tar_reader *r, struct tar_entry *out, char *err, size_t err_size);
/* Finds a regular file by name: 1 found, 0 not there, -1 damaged archive. */
int tar_find(const void *data, size_t size, const char *name, struct tar_entry *out, char *err,
             size_t err_size);

#endif
