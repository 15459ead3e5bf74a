/* loader.h - internal interfaces of the UEFI loader (GNU-EFI, MS ABI).
 *
 * The loader reads kernel.elf, the ramdisk and boot.cfg from its own
 * volume, builds handover page tables, exits boot services and jumps to
 * the kernel with a struct boot_info (see boot_info.h).
 */
#ifndef BOOT_LOADER_H
#define BOOT_LOADER_H

#include <efi.h>
#include <stdbool.h>
#include <stdint.h>

#include "boot/boot_info.h"
#include "boot/config_parse.h"

#define LOADER_PAGE_SIZE 4096ULL
#define PAGES_FOR(bytes) (((bytes) + LOADER_PAGE_SIZE - 1) / LOADER_PAGE_SIZE)

/* Firmware tables, set once at entry. */
extern EFI_SYSTEM_TABLE *loader_st;
extern EFI_BOOT_SERVICES *loader_bs;

/* ---- console.c: output on ConOut and COM1, fatal errors */
void serial_init(void);
/* Formatted message on COM1 and (while boot services run) ConOut.
 * Supports %s %c %d %u %x %lu %lx %llu %llx %lu %zu and a width like %08lx. */
void log_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* COM1 only: safe after ExitBootServices. */
void serial_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Called once boot services are gone: later output goes to COM1 only. */
void console_boot_services_exited(void);
/* Notices when the firmware already copies ConOut to a serial port, so
 * log_printf does not print every line twice on COM1. */
void console_detect_serial_mirror(void);
/* Prints "loader: error: ..." and halts forever (never returns to firmware). */
__attribute__((noreturn, format(printf, 1, 2))) void fatal(const char *fmt, ...);

/* ---- small helpers (console.c) */
uint64_t tsc_read(void);
/* TSC ticks per millisecond, measured once with Stall (0 if unknown). */
uint64_t tsc_calibrate(void);
uint64_t tsc_to_ms(uint64_t ticks);
void mem_zero(void *dst, uint64_t n);
/* Progress of a long read, paced by read_pace.h: once it has taken a
 * second, a line "loader: reading WHAT: N% (done of total MiB, MB/s, s left)",
 * then one every two seconds at most. */
struct read_progress {
    const char *what;
    uint64_t total, start_tsc, last_report_ms, reports;
};
void read_progress_start(struct read_progress *p, const char *what, uint64_t total);
void read_progress_update(struct read_progress *p, uint64_t done);
/* Bytes to ask for next (a whole number of `unit`s, at most what is left):
 * small enough that progress lines come on time, large enough for speed. */
uint64_t read_progress_request(const struct read_progress *p, uint64_t done, uint64_t unit);
void mem_copy(void *dst, const void *src, uint64_t n);

/* ---- files.c: the loader's own volume */
struct loaded_file {
    uint64_t addr; /* physical (= loader virtual) address, page aligned */
    uint64_t size; /* bytes */
};
/* Opens the root directory of the volume the loader was started from. */
EFI_FILE_HANDLE volume_open_root(EFI_HANDLE image);
/* Reads a whole file (path like L"\\kernel.elf") into freshly allocated
 * EfiLoaderData pages. Returns EFI_NOT_FOUND when the file is absent, and
 * with may_not_fit EFI_OUT_OF_RESOURCES when RAM is too small (reported);
 * other errors are fatal. An empty file yields addr 0, size 0. */
EFI_STATUS file_read_all(EFI_FILE_HANDLE root, const CHAR16 *path, struct loaded_file *out, bool may_not_fit);
/* AllocatePages(AnyPages, EfiLoaderData) or fatal(what). */
uint64_t pages_alloc(uint64_t pages, const char *what);
/* The same for `bytes`, but when RAM is short it says so plainly (needed,
 * free, largest free block) and returns false. */
bool pages_alloc_or_report(uint64_t bytes, const char *what, uint64_t *addr);

/* ---- ramdisk_partition.c: the ramdisk in its own GPT partition */
/* Looks on the boot disk for a partition of the ramdisk type (layout in
 * tools/mkimage.sh) and reads its tar into info. Returns false when there is
 * none (use the FAT file); true when there is one, even if unusable (then
 * reported, and info keeps no ramdisk). */
bool ramdisk_partition_read(EFI_HANDLE image, struct boot_info *info);

/* ---- config.c: boot.cfg (parsed by config_parse.c, warnings logged) */
/* config_parse with each warning logged as "loader: warning: boot.cfg ...". */
void config_read(const char *text, uint64_t len, struct boot_config *cfg, char *cmdline,
                 uint64_t cmdline_max);

/* ---- elf_load.c: the kernel image */
struct kernel_image {
    uint64_t phys; /* first byte of the lowest PT_LOAD page */
    uint64_t pages;
    uint64_t virt_base; /* virtual address that phys maps to (page aligned) */
    uint64_t entry;     /* virtual entry point */
};
/* Validates the ELF and returns NULL, or a one-line reason. */
const char *elf_check(const uint8_t *file, uint64_t size, uint64_t *virt_lo, uint64_t *virt_hi);
/* Validates, allocates the image pages and copies the segments (fatal on error). */
void elf_load(const uint8_t *file, uint64_t size, struct kernel_image *out);

/* ---- secure_boot.c: the loader's part of the Secure Boot chain */
/* One line: whether the firmware enforces Secure Boot, and whether this
 * loader is a signed build (one with a kernel SHA-256 built in). */
void secure_boot_report(void);
/* With a SHA-256 built in (boot/kernel_hash.h), halts with a message unless
 * the file matches it; without one (an unsigned build), returns at once. */
void kernel_check(const void *file, uint64_t size);

/* ---- page_tables.c: handover page tables */
/* Identity map and DIRECT_MAP_BASE map of [0, phys_limit), plus the kernel
 * image at its virtual base. Returns the physical address of the PML4. */
uint64_t page_tables_build(uint64_t phys_limit, const struct kernel_image *kernel);

/* ---- memory_map.c: UEFI memory map and ExitBootServices */
struct efi_memory_map {
    EFI_MEMORY_DESCRIPTOR *descs;
    UINTN size;     /* bytes currently filled */
    UINTN capacity; /* bytes allocated */
    UINTN key;
    UINTN desc_size;
    UINT32 desc_version;
};
struct ram_summary {
    uint64_t highest;      /* highest physical address (exclusive) in the map */
    uint64_t free_bytes;   /* EfiConventionalMemory, all regions */
    uint64_t largest_free; /* the biggest single free region */
};
/* The current memory map, summed up. */
void memory_map_summary(struct ram_summary *out);
/* Allocates a map buffer with slack; must be the last allocation. */
void memory_map_prepare(struct efi_memory_map *map);
/* Exits boot services using the given prepared map (fatal on failure). */
void memory_map_exit_boot_services(EFI_HANDLE image, struct efi_memory_map *map);
/* Sorts, converts and merges the final map into info->mem. Returns the
 * number of regions that did not fit (0 normally). No allocation. */
uint32_t memory_map_convert(struct efi_memory_map *map, struct boot_info *info);

/* ---- platform.c: firmware tables and the framebuffer */
uint64_t acpi_find_rsdp(void);
/* ST->FirmwareVendor as ASCII (non-ASCII characters as ?), NUL-terminated. */
void firmware_vendor_copy(char *out, unsigned size);
void framebuffer_query(struct boot_framebuffer *fb, const struct boot_config *cfg);

#endif
