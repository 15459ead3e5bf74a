/* secure_boot.c - the loader's part of the Secure Boot chain: it says
 * whether the firmware enforces Secure Boot, and a signed loader starts only
 * the kernel it was built with (the firmware checked the loader, the loader
 * checks the kernel). docs/hardware.md has the whole chain. */
#include "boot/kernel_hash.h"
#include "boot/loader.h"

static void digest_hex(const uint8_t digest[SHA256_DIGEST_BYTES], char out[2 * SHA256_DIGEST_BYTES + 1]) {
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < SHA256_DIGEST_BYTES; i++) {
        out[2 * i] = hex[digest[i] >> 4];
        out[2 * i + 1] = hex[digest[i] & 15];
    }
    out[2 * SHA256_DIGEST_BYTES] = 0;
}

void kernel_check(const void *file, uint64_t size) {
    if (!loader_kernel_hash.present) return; /* unsigned development build */
    uint64_t start = tsc_read();
    uint8_t digest[SHA256_DIGEST_BYTES];
    sha256(file, size, digest);
    int differs = 0;
    for (int i = 0; i < SHA256_DIGEST_BYTES; i++) differs |= digest[i] ^ loader_kernel_hash.sha256[i];
    char found[2 * SHA256_DIGEST_BYTES + 1], expected[2 * SHA256_DIGEST_BYTES + 1];
    digest_hex(digest, found);
    digest_hex(loader_kernel_hash.sha256, expected);
    if (differs)
        fatal("kernel.elf is not the kernel this signed loader was built with (SHA-256 %s, expected %s): "
              "not starting it",
              found, expected);
    log_printf("loader: kernel.elf SHA-256 %s matches the signed loader (checked in %lu ms)\n", found,
               tsc_to_ms(tsc_read() - start));
}

void secure_boot_report(void) {
    EFI_GUID global = EFI_GLOBAL_VARIABLE;
    UINT8 on = 0;
    UINTN size = sizeof on;
    EFI_STATUS status = loader_st->RuntimeServices->GetVariable(L"SecureBoot", &global, NULL, &size, &on);
    const char *signed_build = loader_kernel_hash.present ? "signed build" : "unsigned build";
    if (EFI_ERROR(status))
        log_printf("loader: Secure Boot: not supported by this firmware (%s)\n", signed_build);
    else
        log_printf("loader: Secure Boot: %s (%s)\n", on ? "on" : "off", signed_build);
}
