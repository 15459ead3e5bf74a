/* loader.c - the UEFI loader's main flow.
 *
 * banner -> boot.cfg -> kernel.elf -> ramdisk -> GOP/ACPI -> page tables
 * -> ExitBootServices -> memory map into boot_info -> jump to the kernel
 * (System V ABI, RDI = physical address of boot_info).
 */
#include "boot/loader.h"

#define KERNEL_STACK_PAGES 16
#define MIN_MAPPED (4ULL << 30)
#define MAX_MAPPED (1ULL << 40) /* identity/direct map cap: 1 TiB */
#define GIB (1ULL << 30)
#define BOOT_CFG_MAX (64ULL << 10)

EFI_SYSTEM_TABLE *loader_st;
EFI_BOOT_SERVICES *loader_bs;

/* "name/with/slashes" -> L"\\name\\with\\slashes" */
static void volume_path(const char *name, CHAR16 *out, unsigned cap) {
    unsigned n = 0;
    out[n++] = L'\\';
    for (; *name && n + 1 < cap; name++) out[n++] = (*name == '/') ? L'\\' : (CHAR16)*name;
    out[n] = 0;
}

static void read_config(EFI_FILE_HANDLE root, struct boot_config *cfg, struct boot_info *info) {
    config_defaults(cfg);
    struct loaded_file file;
    if (file_read_all(root, L"\\boot.cfg", &file, false) == EFI_NOT_FOUND || file.size == 0) return;
    uint64_t len = file.size;
    if (len > BOOT_CFG_MAX) {
        log_printf("loader: warning: boot.cfg is %lu bytes, only the first %lu are read\n", len,
                   (uint64_t)BOOT_CFG_MAX);
        len = BOOT_CFG_MAX;
    }
    config_read((const char *)file.addr, len, cfg, info->cmdline, BOOT_CMDLINE_MAX);
    loader_bs->FreePages(file.addr, PAGES_FOR(file.size));
}

static void read_kernel(EFI_FILE_HANDLE root, struct kernel_image *kernel, struct boot_info *info) {
    struct loaded_file file;
    if (file_read_all(root, L"\\kernel.elf", &file, false) == EFI_NOT_FOUND)
        fatal("\\kernel.elf not found on the boot volume");
    if (file.size == 0) fatal("\\kernel.elf is empty");
    kernel_check((const void *)file.addr, file.size);
    elf_load((const uint8_t *)file.addr, file.size, kernel);
    info->kernel_phys = kernel->phys;
    info->kernel_pages = kernel->pages;
    info->kernel_file = file.addr;
    info->kernel_file_size = file.size;
}

/* A ramdisk partition on the boot disk wins; else the file boot.cfg names. */
static void read_ramdisk(EFI_HANDLE image, EFI_FILE_HANDLE root, const struct boot_config *cfg,
                         struct boot_info *info) {
    if (ramdisk_partition_read(image, info)) return;
    CHAR16 path[BOOT_CFG_NAME_MAX + 2];
    volume_path(cfg->ramdisk, path, sizeof(path) / sizeof(path[0]));
    struct loaded_file file;
    uint64_t start = tsc_read();
    EFI_STATUS status = file_read_all(root, path, &file, true);
    if (status == EFI_OUT_OF_RESOURCES) {
        log_printf("loader: booting without a ramdisk\n");
        return;
    }
    if (status == EFI_NOT_FOUND) {
        if (cfg->ramdisk_explicit)
            fatal("ramdisk \\%s (named in boot.cfg) not found on the boot volume", cfg->ramdisk);
        log_printf("loader: warning: no \\%s, booting without a ramdisk\n", cfg->ramdisk);
        return;
    }
    uint64_t ms = tsc_to_ms(tsc_read() - start);
    info->ramdisk = file.addr;
    info->ramdisk_size = file.size;
    if (file.size >= (4ULL << 20)) /* worth a line only when it costs time */
        log_printf("loader: ramdisk %s: %lu MiB in %lu ms\n", cfg->ramdisk, file.size >> 20, ms);
}

/* Everything the kernel may touch before it has its own tables. */
static uint64_t mapped_limit(const struct boot_info *info) {
    struct ram_summary ram;
    memory_map_summary(&ram);
    uint64_t limit = ram.highest;
    uint64_t fb_end = info->fb.base + info->fb.size;
    if (fb_end > limit) limit = fb_end;
    if (limit < MIN_MAPPED) limit = MIN_MAPPED;
    limit = (limit + GIB - 1) & ~(GIB - 1);
    if (limit > MAX_MAPPED) {
        log_printf("loader: warning: physical addresses above %lu GiB are not mapped\n",
                   (uint64_t)(MAX_MAPPED >> 30));
        limit = MAX_MAPPED;
    }
    return limit;
}

static __attribute__((noreturn)) void jump_to_kernel(uint64_t pml4, uint64_t entry, uint64_t info_phys,
                                                     uint64_t stack_top) {
    /* A zero return address leaves RSP as after a call (RSP+8 16-aligned). */
    __asm__ volatile("cli\n\t"
                     "cld\n\t"
                     "mov %0, %%cr3\n\t"
                     "mov %1, %%rsp\n\t"
                     "xor %%ebp, %%ebp\n\t"
                     "pushq $0\n\t"
                     "jmp *%2\n\t"
                     :
                     : "r"(pml4), "r"(stack_top), "a"(entry), "D"(info_phys)
                     : "memory");
    __builtin_unreachable();
}

/* gnu-efi crt0 calls this with the System V convention. */
EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *system_table) {
    loader_st = system_table;
    loader_bs = system_table->BootServices;
    uint64_t loader_start = tsc_read();
    serial_init();
    loader_bs->SetWatchdogTimer(0, 0, 0, NULL);
    console_detect_serial_mirror();
    log_printf("loader: LLM kernel UEFI loader\n");
    tsc_calibrate();
    secure_boot_report();

    struct boot_info *info =
        (struct boot_info *)pages_alloc(PAGES_FOR(sizeof(struct boot_info)), "boot info");
    mem_zero(info, sizeof(*info));
    info->magic = BOOT_INFO_MAGIC;
    info->version = BOOT_INFO_VERSION;
    info->size = sizeof(*info);

    EFI_FILE_HANDLE root = volume_open_root(image);
    struct boot_config cfg;
    read_config(root, &cfg, info);
    struct kernel_image kernel;
    read_kernel(root, &kernel, info);
    read_ramdisk(image, root, &cfg, info);
    root->Close(root);

    framebuffer_query(&info->fb, &cfg);
    info->acpi_rsdp = acpi_find_rsdp();
    firmware_vendor_copy(info->firmware_vendor, sizeof info->firmware_vendor);
    if (!info->acpi_rsdp) log_printf("loader: warning: no ACPI RSDP in the firmware tables\n");

    uint64_t pml4 = page_tables_build(mapped_limit(info), &kernel);
    uint64_t stack = pages_alloc(KERNEL_STACK_PAGES, "the kernel boot stack");
    /* Through the direct map, so it survives the kernel dropping identity. */
    uint64_t stack_top = DIRECT_MAP_BASE + stack + KERNEL_STACK_PAGES * LOADER_PAGE_SIZE;

    log_printf("loader: kernel %lu KiB, ramdisk %lu KiB, fb %ux%u; starting kernel after %lu ms\n",
               kernel.pages * 4, info->ramdisk_size >> 10, info->fb.width, info->fb.height,
               tsc_to_ms(tsc_read() - loader_start));

    struct efi_memory_map map;
    memory_map_prepare(&map);
    memory_map_exit_boot_services(image, &map);
    console_boot_services_exited();

    uint32_t dropped = memory_map_convert(&map, info);
    if (dropped)
        serial_printf("loader: warning: %u memory regions beyond %u dropped\n", dropped,
                      BOOT_MAX_MEM_REGIONS);
    info->loader_tsc = tsc_read();
    jump_to_kernel(pml4, kernel.entry, (uint64_t)(uintptr_t)info, stack_top);
}
