/* files.c - reading whole files from the volume the loader came from. */
#include "boot/loader.h"

uint64_t pages_alloc(uint64_t pages, const char *what) {
    EFI_PHYSICAL_ADDRESS addr = 0;
    EFI_STATUS status = loader_bs->AllocatePages(AllocateAnyPages, EfiLoaderData, pages, &addr);
    if (EFI_ERROR(status))
        fatal("out of memory: %lu KiB for %s (status 0x%lx)", pages * 4, what, (uint64_t)status);
    return addr;
}

bool pages_alloc_or_report(uint64_t bytes, const char *what, uint64_t *addr) {
    EFI_PHYSICAL_ADDRESS found = 0;
    if (!EFI_ERROR(loader_bs->AllocatePages(AllocateAnyPages, EfiLoaderData, PAGES_FOR(bytes), &found))) {
        *addr = found;
        return true;
    }
    struct ram_summary ram;
    memory_map_summary(&ram);
    log_printf(
        "loader: not enough RAM for %s: it needs %lu MiB in one piece; free RAM is %lu MiB, the largest "
        "free block %lu MiB\n",
        what, bytes >> 20, ram.free_bytes >> 20, ram.largest_free >> 20);
    return false;
}

EFI_FILE_HANDLE volume_open_root(EFI_HANDLE image) {
    EFI_GUID loaded_image_guid = EFI_LOADED_IMAGE_PROTOCOL_GUID;
    EFI_GUID fs_guid = EFI_SIMPLE_FILE_SYSTEM_PROTOCOL_GUID;
    EFI_LOADED_IMAGE *loaded_image = NULL;
    EFI_STATUS status = loader_bs->HandleProtocol(image, &loaded_image_guid, (void **)&loaded_image);
    if (EFI_ERROR(status) || !loaded_image) fatal("no LoadedImage protocol (status 0x%lx)", (uint64_t)status);

    EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *fs = NULL;
    status = loader_bs->HandleProtocol(loaded_image->DeviceHandle, &fs_guid, (void **)&fs);
    if (EFI_ERROR(status) || !fs)
        fatal("the boot volume has no file system (status 0x%lx)", (uint64_t)status);

    EFI_FILE_HANDLE root = NULL;
    status = fs->OpenVolume(fs, &root);
    if (EFI_ERROR(status) || !root) fatal("cannot open the boot volume (status 0x%lx)", (uint64_t)status);
    return root;
}

static void path_to_ascii(const CHAR16 *path, char *out, int cap) {
    int n = 0;
    for (; *path && n + 1 < cap; path++) out[n++] = (*path < 128) ? (char)*path : '?';
    out[n] = 0;
}

static uint64_t file_size(EFI_FILE_HANDLE file, const char *name) {
    EFI_GUID info_guid = EFI_FILE_INFO_ID;
    /* EFI_FILE_INFO plus room for a long file name; 8-byte aligned. */
    uint64_t storage[128];
    UINTN size = sizeof(storage);
    EFI_STATUS status = file->GetInfo(file, &info_guid, &size, storage);
    if (EFI_ERROR(status)) fatal("cannot get the size of %s (status 0x%lx)", name, (uint64_t)status);
    EFI_FILE_INFO *info = (EFI_FILE_INFO *)storage;
    if (info->Attribute & EFI_FILE_DIRECTORY) fatal("%s is a directory, not a file", name);
    return info->FileSize;
}

EFI_STATUS file_read_all(EFI_FILE_HANDLE root, const CHAR16 *path, struct loaded_file *out,
                         bool may_not_fit) {
    char name[128];
    path_to_ascii(path, name, sizeof(name));
    out->addr = 0;
    out->size = 0;

    EFI_FILE_HANDLE file = NULL;
    EFI_STATUS status = root->Open(root, &file, (CHAR16 *)path, EFI_FILE_MODE_READ, 0);
    if (status == EFI_NOT_FOUND) return EFI_NOT_FOUND;
    if (EFI_ERROR(status) || !file) fatal("cannot open %s (status 0x%lx)", name, (uint64_t)status);

    uint64_t size = file_size(file, name);
    if (size == 0) {
        file->Close(file);
        return EFI_SUCCESS;
    }
    uint64_t addr = 0;
    if (!may_not_fit) {
        addr = pages_alloc(PAGES_FOR(size), name);
    } else if (!pages_alloc_or_report(size, name, &addr)) {
        file->Close(file);
        return EFI_OUT_OF_RESOURCES;
    }

    uint64_t done = 0;
    struct read_progress progress;
    read_progress_start(&progress, name, size);
    while (done < size) {
        /* Large requests (read_pace.h), which bound what one firmware call handles too. */
        UINTN chunk = (UINTN)read_progress_request(&progress, done, 1);
        status = file->Read(file, &chunk, (void *)(addr + done));
        if (EFI_ERROR(status))
            fatal("read error in %s at byte %lu (status 0x%lx)", name, done, (uint64_t)status);
        if (chunk == 0) fatal("%s is shorter than its directory entry (%lu of %lu bytes)", name, done, size);
        done += chunk;
        read_progress_update(&progress, done);
    }
    /* Zero the tail of the last page so nothing stale follows the file. */
    mem_zero((void *)(addr + size), PAGES_FOR(size) * LOADER_PAGE_SIZE - size);
    file->Close(file);
    out->addr = addr;
    out->size = size;
    return EFI_SUCCESS;
}
