/* boot_info.h - the one contract between the UEFI loader and the kernel.
 *
 * The loader fills a struct boot_info, exits boot services and jumps to the
 * kernel entry with a pointer to it in RDI (System V ABI). All addresses in
 * here are PHYSICAL; the kernel reaches them through its direct map.
 * Plain fixed-width types only: this header is compiled by the loader
 * (GNU-EFI, MS ABI) and by the freestanding kernel.
 */
#ifndef BOOT_INFO_H
#define BOOT_INFO_H

#include <stdint.h>

#define BOOT_INFO_MAGIC 0x4c4c4d4b45524e4cULL /* "LNREKMLL" */
#define BOOT_INFO_VERSION 2

/* Virtual address where the loader maps all physical memory (and where the
 * kernel keeps its own direct map). Kernel image lives at KERNEL_VIRT_BASE. */
#define DIRECT_MAP_BASE 0xffff800000000000ULL
#define KERNEL_VIRT_BASE 0xffffffff80000000ULL

/* Memory region types, reduced from the UEFI memory map by the loader. */
enum boot_mem_type {
    BOOT_MEM_USABLE = 1,       /* EfiConventionalMemory */
    BOOT_MEM_RECLAIMABLE = 2,  /* boot-services code/data: free once the kernel owns its page tables */
    BOOT_MEM_LOADER = 3,       /* loader data: kernel image, ramdisk, boot info, loader page tables */
    BOOT_MEM_ACPI_RECLAIM = 4, /* ACPI tables */
    BOOT_MEM_ACPI_NVS = 5,
    BOOT_MEM_RESERVED = 6, /* everything else (runtime services, MMIO, unusable) */
};

struct boot_mem_region {
    uint64_t base;  /* physical, page aligned */
    uint64_t pages; /* 4 KiB pages */
    uint32_t type;  /* enum boot_mem_type */
    uint32_t pad;
};

enum boot_pixel_format {
    BOOT_PIXEL_NONE = 0, /* no framebuffer */
    BOOT_PIXEL_RGBX = 1, /* byte 0 red   (PixelRedGreenBlueReserved8BitPerColor) */
    BOOT_PIXEL_BGRX = 2, /* byte 0 blue  (PixelBlueGreenRedReserved8BitPerColor) */
    BOOT_PIXEL_MASK = 3, /* PixelBitMask: see the masks */
};

struct boot_framebuffer {
    uint64_t base; /* physical; 0 when there is no GOP */
    uint64_t size; /* bytes */
    uint32_t width, height;
    uint32_t pitch;  /* bytes per scan line */
    uint32_t format; /* enum boot_pixel_format */
    uint32_t red_mask, green_mask, blue_mask, reserved_mask;
};

#define BOOT_MAX_MEM_REGIONS 512
#define BOOT_CMDLINE_MAX 1024

struct boot_info {
    uint64_t magic;   /* BOOT_INFO_MAGIC */
    uint32_t version; /* BOOT_INFO_VERSION */
    uint32_t size;    /* sizeof(struct boot_info) as the loader saw it */

    uint64_t acpi_rsdp; /* physical address of the RSDP, 0 if none */

    uint64_t kernel_phys;  /* where the kernel's PT_LOAD segments were placed */
    uint64_t kernel_pages; /* contiguous 4 KiB pages from kernel_phys */
    uint64_t kernel_file;  /* the whole kernel ELF file as read (for its symbol table) */
    uint64_t kernel_file_size;

    uint64_t ramdisk; /* the USTAR archive, read in place; 0 if none */
    uint64_t ramdisk_size;

    uint64_t loader_tsc; /* rdtsc just before the jump, for boot timing */

    struct boot_framebuffer fb;

    /* The UEFI FirmwareVendor string as ASCII ("EDK II" for OVMF), NUL-terminated. */
    char firmware_vendor[32];

    /* key=value lines from boot.cfg (NUL-terminated, '\n' separated),
     * empty when there was no boot.cfg. */
    char cmdline[BOOT_CMDLINE_MAX];

    uint32_t mem_region_count;
    uint32_t pad;
    struct boot_mem_region mem[BOOT_MAX_MEM_REGIONS];
};

#endif
