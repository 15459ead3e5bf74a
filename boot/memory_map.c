/* memory_map.c - the UEFI memory map: sizing, ExitBootServices, and the
 * conversion into boot_info regions. */
#include "boot/loader.h"

#define EBS_ATTEMPTS 8

static EFI_MEMORY_DESCRIPTOR *desc_at(const struct efi_memory_map *map, UINTN i) {
    return (EFI_MEMORY_DESCRIPTOR *)((uint8_t *)map->descs + i * map->desc_size);
}

static UINTN desc_count(const struct efi_memory_map *map) {
    return map->desc_size ? map->size / map->desc_size : 0;
}

static void map_fetch(struct efi_memory_map *map, const char *when) {
    UINTN size = map->capacity;
    EFI_STATUS status =
        loader_bs->GetMemoryMap(&size, map->descs, &map->key, &map->desc_size, &map->desc_version);
    if (EFI_ERROR(status)) fatal("GetMemoryMap failed %s (status 0x%lx)", when, (uint64_t)status);
    if (map->desc_size < sizeof(EFI_MEMORY_DESCRIPTOR))
        fatal("firmware memory descriptors are too small (%lu bytes)", (uint64_t)map->desc_size);
    map->size = size;
}

void memory_map_prepare(struct efi_memory_map *map) {
    UINTN size = 0, key = 0, desc_size = 0;
    UINT32 version = 0;
    EFI_STATUS status = loader_bs->GetMemoryMap(&size, NULL, &key, &desc_size, &version);
    if (status != EFI_BUFFER_TOO_SMALL)
        fatal("GetMemoryMap size query failed (status 0x%lx)", (uint64_t)status);
    /* Slack for the descriptors our own allocation (and firmware events
     * between now and ExitBootServices) may add. */
    uint64_t bytes = size + 32 * (desc_size ? desc_size : 48) + LOADER_PAGE_SIZE;
    uint64_t pages = PAGES_FOR(bytes);
    map->descs = (EFI_MEMORY_DESCRIPTOR *)pages_alloc(pages, "the memory map");
    map->capacity = pages * LOADER_PAGE_SIZE;
    map->size = 0;
}

void memory_map_summary(struct ram_summary *out) {
    struct efi_memory_map map;
    memory_map_prepare(&map);
    map_fetch(&map, "while sizing physical memory");
    mem_zero(out, sizeof(*out));
    for (UINTN i = 0; i < desc_count(&map); i++) {
        EFI_MEMORY_DESCRIPTOR *d = desc_at(&map, i);
        uint64_t bytes = d->NumberOfPages * LOADER_PAGE_SIZE;
        if (d->PhysicalStart + bytes > out->highest) out->highest = d->PhysicalStart + bytes;
        if (d->Type != EfiConventionalMemory) continue;
        out->free_bytes += bytes;
        if (bytes > out->largest_free) out->largest_free = bytes;
    }
    loader_bs->FreePages((EFI_PHYSICAL_ADDRESS)(uintptr_t)map.descs, map.capacity / LOADER_PAGE_SIZE);
}

void memory_map_exit_boot_services(EFI_HANDLE image, struct efi_memory_map *map) {
    /* No printing and no allocation in here: either changes the map key. */
    EFI_STATUS status = EFI_SUCCESS;
    for (int attempt = 0; attempt < EBS_ATTEMPTS; attempt++) {
        UINTN size = map->capacity;
        status = loader_bs->GetMemoryMap(&size, map->descs, &map->key, &map->desc_size, &map->desc_version);
        if (EFI_ERROR(status)) break;
        map->size = size;
        status = loader_bs->ExitBootServices(image, map->key);
        if (status == EFI_SUCCESS) return;
        if (status != EFI_INVALID_PARAMETER) break;
    }
    fatal("ExitBootServices failed (status 0x%lx)", (uint64_t)status);
}

static uint32_t region_type(UINT32 efi_type) {
    switch (efi_type) {
    case EfiConventionalMemory:
        return BOOT_MEM_USABLE;
    case EfiBootServicesCode:
    case EfiBootServicesData:
        return BOOT_MEM_RECLAIMABLE;
    case EfiLoaderCode:
    case EfiLoaderData:
        return BOOT_MEM_LOADER;
    case EfiACPIReclaimMemory:
        return BOOT_MEM_ACPI_RECLAIM;
    case EfiACPIMemoryNVS:
        return BOOT_MEM_ACPI_NVS;
    default:
        return BOOT_MEM_RESERVED;
    }
}

/* Insertion sort by base, in place (the firmware does not promise order). */
static void sort_descriptors(struct efi_memory_map *map) {
    UINTN n = desc_count(map);
    uint8_t tmp[256];
    if (map->desc_size > sizeof(tmp)) return; /* absurd descriptor size: keep firmware order */
    for (UINTN i = 1; i < n; i++) {
        mem_copy(tmp, desc_at(map, i), map->desc_size);
        uint64_t base = ((EFI_MEMORY_DESCRIPTOR *)tmp)->PhysicalStart;
        UINTN j = i;
        while (j > 0 && desc_at(map, j - 1)->PhysicalStart > base) {
            mem_copy(desc_at(map, j), desc_at(map, j - 1), map->desc_size);
            j--;
        }
        mem_copy(desc_at(map, j), tmp, map->desc_size);
    }
}

uint32_t memory_map_convert(struct efi_memory_map *map, struct boot_info *info) {
    sort_descriptors(map);
    uint32_t count = 0, dropped = 0;
    for (UINTN i = 0; i < desc_count(map); i++) {
        EFI_MEMORY_DESCRIPTOR *d = desc_at(map, i);
        if (d->NumberOfPages == 0) continue;
        uint32_t type = region_type(d->Type);
        if (count > 0) {
            struct boot_mem_region *last = &info->mem[count - 1];
            if (last->type == type && last->base + last->pages * LOADER_PAGE_SIZE == d->PhysicalStart) {
                last->pages += d->NumberOfPages;
                continue;
            }
        }
        if (count == BOOT_MAX_MEM_REGIONS) {
            dropped++;
            continue;
        }
        info->mem[count].base = d->PhysicalStart;
        info->mem[count].pages = d->NumberOfPages;
        info->mem[count].type = type;
        info->mem[count].pad = 0;
        count++;
    }
    info->mem_region_count = count;
    return dropped;
}
