/* platform.c - what the firmware knows that the kernel needs: the ACPI RSDP,
 * the firmware vendor and the GOP framebuffer. */
#include "boot/loader.h"

/* The kernel's console scales its font up to 4K (kernel/drivers/fbcon.c), so the
 * firmware's mode is kept unless it is larger than that or has no
 * framebuffer; switching modes is the riskier path on real machines. */
#define FB_MAX_WIDTH 3840
#define FB_MAX_HEIGHT 2160

static bool guid_equal(const EFI_GUID *a, const EFI_GUID *b) {
    const uint8_t *x = (const uint8_t *)a, *y = (const uint8_t *)b;
    for (unsigned i = 0; i < sizeof(EFI_GUID); i++) {
        if (x[i] != y[i]) return false;
    }
    return true;
}

uint64_t acpi_find_rsdp(void) {
    EFI_GUID acpi20 = ACPI_20_TABLE_GUID;
    EFI_GUID acpi10 = ACPI_TABLE_GUID;
    uint64_t rsdp1 = 0;
    for (UINTN i = 0; i < loader_st->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *table = &loader_st->ConfigurationTable[i];
        if (guid_equal(&table->VendorGuid, &acpi20)) return (uint64_t)(uintptr_t)table->VendorTable;
        if (guid_equal(&table->VendorGuid, &acpi10)) rsdp1 = (uint64_t)(uintptr_t)table->VendorTable;
    }
    return rsdp1;
}

void firmware_vendor_copy(char *out, unsigned size) {
    const CHAR16 *v = loader_st->FirmwareVendor;
    unsigned n = 0;
    for (; v && v[n] && n + 1 < size; n++) out[n] = v[n] < 0x80 ? (char)v[n] : '?';
    out[n] = 0;
}

static unsigned bits_used(uint32_t mask);

/* A mode the kernel's console can draw on: a linear framebuffer of RGB,
 * BGR or 32-bit bit-mask pixels whose scan line holds its width. */
static bool mode_usable(const EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info) {
    if (info->PixelFormat == PixelBltOnly || info->PixelFormat >= PixelFormatMax) return false;
    if (info->PixelsPerScanLine < info->HorizontalResolution) return false;
    if (info->PixelFormat == PixelBitMask) {
        const EFI_PIXEL_BITMASK *m = &info->PixelInformation;
        if (bits_used(m->RedMask | m->GreenMask | m->BlueMask | m->ReservedMask) <= 24) return false;
    }
    return true;
}

static bool mode_fits(const EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info) {
    return mode_usable(info) && info->HorizontalResolution <= FB_MAX_WIDTH &&
           info->VerticalResolution <= FB_MAX_HEIGHT;
}

/* The mode boot.cfg's video= asks for (the exact size, or the largest), else
 * the current mode if it is usable, else the largest usable mode <= 3840x2160.
 * The firmware's current mode is usually the panel's native one; under QEMU
 * it is 1280x800 when the device is set to 3840x2160 (OVMF lists the 4K
 * mode but does not start in it). */
static void choose_mode(EFI_GRAPHICS_OUTPUT_PROTOCOL *gop, const struct boot_config *cfg) {
    const EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *cur = gop->Mode->Info;
    bool wanted = cfg->video_max || cfg->video_width;
    if (!wanted && cur && mode_fits(cur)) return;
    UINT32 best = gop->Mode->Mode, exact = gop->Mode->MaxMode;
    uint64_t best_area = 0;
    for (UINT32 m = 0; m < gop->Mode->MaxMode; m++) {
        UINTN info_size = 0;
        EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info = NULL;
        if (EFI_ERROR(gop->QueryMode(gop, m, &info_size, &info)) || !info) continue;
        uint64_t area = (uint64_t)info->HorizontalResolution * info->VerticalResolution;
        if (mode_fits(info) && area > best_area) {
            best = m;
            best_area = area;
        }
        if (mode_fits(info) && info->HorizontalResolution == cfg->video_width &&
            info->VerticalResolution == cfg->video_height)
            exact = m;
        loader_bs->FreePool(info);
    }
    if (cfg->video_width && exact == gop->Mode->MaxMode) {
        log_printf("loader: no usable %ux%u screen mode (at most 3840x2160), keeping the current one\n",
                   cfg->video_width, cfg->video_height);
        if (cur && mode_fits(cur)) return;
    } else if (cfg->video_width) {
        best = exact;
        best_area = 1;
    }
    if (best_area && best != gop->Mode->Mode && EFI_ERROR(gop->SetMode(gop, best)))
        log_printf("loader: the firmware refused screen mode %u, keeping the current one\n", best);
}

static unsigned bits_used(uint32_t mask) {
    unsigned top = 0;
    while (mask) {
        top++;
        mask >>= 1;
    }
    return top;
}

void framebuffer_query(struct boot_framebuffer *fb, const struct boot_config *cfg) {
    EFI_GUID gop_guid = EFI_GRAPHICS_OUTPUT_PROTOCOL_GUID;
    EFI_GRAPHICS_OUTPUT_PROTOCOL *gop = NULL;
    mem_zero(fb, sizeof(*fb));
    fb->format = BOOT_PIXEL_NONE;
    if (EFI_ERROR(loader_bs->LocateProtocol(&gop_guid, NULL, (void **)&gop)) || !gop || !gop->Mode ||
        !gop->Mode->Info)
        return;

    choose_mode(gop, cfg);
    const EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info = gop->Mode->Info;
    if (!mode_usable(info) || gop->Mode->FrameBufferBase == 0) return;

    unsigned bytes_per_pixel = 4;
    switch (info->PixelFormat) {
    case PixelRedGreenBlueReserved8BitPerColor:
        fb->format = BOOT_PIXEL_RGBX;
        fb->red_mask = 0x000000ff;
        fb->green_mask = 0x0000ff00;
        fb->blue_mask = 0x00ff0000;
        fb->reserved_mask = 0xff000000;
        break;
    case PixelBlueGreenRedReserved8BitPerColor:
        fb->format = BOOT_PIXEL_BGRX;
        fb->red_mask = 0x00ff0000;
        fb->green_mask = 0x0000ff00;
        fb->blue_mask = 0x000000ff;
        fb->reserved_mask = 0xff000000;
        break;
    default: {
        const EFI_PIXEL_BITMASK *m = &info->PixelInformation;
        fb->format = BOOT_PIXEL_MASK;
        fb->red_mask = m->RedMask;
        fb->green_mask = m->GreenMask;
        fb->blue_mask = m->BlueMask;
        fb->reserved_mask = m->ReservedMask;
        unsigned bits = bits_used(m->RedMask | m->GreenMask | m->BlueMask | m->ReservedMask);
        bytes_per_pixel = (bits + 7) / 8;
        if (bytes_per_pixel == 0) bytes_per_pixel = 4;
        break;
    }
    }
    fb->base = gop->Mode->FrameBufferBase;
    fb->size = gop->Mode->FrameBufferSize;
    fb->width = info->HorizontalResolution;
    fb->height = info->VerticalResolution;
    fb->pitch = info->PixelsPerScanLine * bytes_per_pixel;
}
