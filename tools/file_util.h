/* file_util.h - reading a whole file, for the host tools (header only, like
 * thread_pool.h: every tools/NAME.c is a program of its own). */
#ifndef TOOLS_FILE_UTIL_H
#define TOOLS_FILE_UTIL_H

#include <stdio.h>
#include <stdlib.h>

/* The whole file in one malloc'd buffer with a NUL after the data (so text
 * files can be used as strings), or NULL (errno says why). Reads until EOF,
 * so pipes and files whose size changes work too. */
static inline void *file_read_all(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *data = malloc(cap + 1);
    while (data) {
        len += fread(data + len, 1, cap - len, f);
        if (len < cap) break;
        char *bigger = realloc(data, cap * 2 + 1);
        if (!bigger) free(data);
        data = bigger;
        cap *= 2;
    }
    int failed = ferror(f);
    fclose(f);
    if (!data || failed) {
        free(data);
        return NULL;
    }
    data[len] = '\0';
    *size = len;
    return data;
}

#endif
