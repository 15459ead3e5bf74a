/* ramdisk.c - the loader's tar archive, indexed in place: names are
 * copied into one small heap block, file data stays inside the archive. */
#include <stdint.h>
#include "kernel/drivers/ramdisk.h"
#include "kernel/console/console.h"
#include "kernel/mm/memory.h"
#include "lib/string.h"
#include "lib/tar.h"

#define RAMDISK_MAX_FILES 256

static struct ramdisk_file *ramdisk_files;
static int ramdisk_file_count;

int ramdisk_init(const void *archive, size_t size) {
    ramdisk_files = NULL;
    ramdisk_file_count = 0;
    if (!archive || size == 0) return 0; /* kernel_main reports "none" */

    /* Two passes: count and size the names, then fill the table. */
    struct tar_reader reader;
    struct tar_entry entry;
    char err[128];
    size_t name_bytes = 0;
    int files = 0, rc;
    tar_init(&reader, archive, size);
    while ((rc = tar_next(&reader, &entry, err, sizeof err)) != 0) {
        if (rc < 0) {
            /* The reader cannot resync after damage: keep what came before. */
            kprintf("ramdisk: bad entry: %s (keeping the %d file%s before it)\n", err, files,
                    files == 1 ? "" : "s");
            break;
        }
        if (files == RAMDISK_MAX_FILES) {
            kprintf("ramdisk: more than %d files, ignoring the rest\n", RAMDISK_MAX_FILES);
            break;
        }
        files++;
        name_bytes += strlen(entry.name) + 1;
    }
    if (files == 0) {
        kprintf("ramdisk: no files in the archive (%zu bytes)\n", size);
        return 0;
    }

    char *block = kmalloc(files * sizeof(struct ramdisk_file) + name_bytes);
    if (!block) {
        kprintf("ramdisk: out of memory for %d file name%s\n", files, files == 1 ? "" : "s");
        return 0;
    }
    struct ramdisk_file *table = (struct ramdisk_file *)block;
    char *names = block + files * sizeof(struct ramdisk_file);
    int n = 0;
    tar_init(&reader, archive, size);
    while (n < files && tar_next(&reader, &entry, err, sizeof err) > 0) {
        size_t len = strlen(entry.name);
        memcpy(names, entry.name, len + 1);
        table[n].name = names;
        table[n].data = entry.data;
        table[n].size = entry.size;
        names += len + 1;
        n++;
    }
    ramdisk_files = table;
    ramdisk_file_count = n;
    return n;
}

int ramdisk_count(void) {
    return ramdisk_file_count;
}

const struct ramdisk_file *ramdisk_file_at(int index) {
    if (index < 0 || index >= ramdisk_file_count) return NULL;
    return &ramdisk_files[index];
}

const struct ramdisk_file *ramdisk_find(const char *name) {
    if (!name) return NULL;
    for (int i = 0; i < ramdisk_file_count; i++)
        if (strcmp(ramdisk_files[i].name, name) == 0) return &ramdisk_files[i];
    return NULL;
}
