/* sbat.c - the loader's SBAT metadata (a .sbat section of CSV lines).
 *
 * shim, the Microsoft-signed first stage, starts no second stage without it:
 * SBAT lets a distribution revoke a broken generation of a boot component
 * without revoking its signing key (https://github.com/rhboot/shim/blob/main/SBAT.md).
 * Raise the llmkernel generation if a loader release must ever be revoked.
 */
static const char sbat[] __attribute__((section(".sbat"), used)) =
    "sbat,1,SBAT Version,sbat,1,https://github.com/rhboot/shim/blob/main/SBAT.md\n"
    "llmkernel,1,LLM kernel project,llmkernel-loader,1,docs/hardware.md\n";
