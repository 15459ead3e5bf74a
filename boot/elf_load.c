/* elf_load.c - validate kernel.elf and place its PT_LOAD segments in one
 * physically contiguous run of pages. */
#include "boot/loader.h"

#define KERNEL_VIRT_LIMIT (KERNEL_VIRT_BASE + (1ULL << 30))

/* The few ELF64 definitions we need (System V gABI, x86-64 psABI). */
struct elf64_header {
    uint8_t ident[16];
    uint16_t type;
    uint16_t machine;
    uint32_t version;
    uint64_t entry;
    uint64_t phoff;
    uint64_t shoff;
    uint32_t flags;
    uint16_t ehsize;
    uint16_t phentsize;
    uint16_t phnum;
    uint16_t shentsize;
    uint16_t shnum;
    uint16_t shstrndx;
};

struct elf64_phdr {
    uint32_t type;
    uint32_t flags;
    uint64_t offset;
    uint64_t vaddr;
    uint64_t paddr;
    uint64_t filesz;
    uint64_t memsz;
    uint64_t align;
};

#define ELF_CLASS64 2
#define ELF_DATA_LSB 1
#define ELF_TYPE_EXEC 2
#define ELF_MACHINE_X86_64 62
#define ELF_PT_LOAD 1

static const struct elf64_phdr *phdr_at(const uint8_t *file, const struct elf64_header *eh, unsigned i) {
    return (const struct elf64_phdr *)(file + eh->phoff + (uint64_t)i * eh->phentsize);
}

const char *elf_check(const uint8_t *file, uint64_t size, uint64_t *virt_lo, uint64_t *virt_hi) {
    if (size < sizeof(struct elf64_header)) return "kernel.elf is too small to be an ELF file";
    const struct elf64_header *eh = (const struct elf64_header *)file;
    if (eh->ident[0] != 0x7f || eh->ident[1] != 'E' || eh->ident[2] != 'L' || eh->ident[3] != 'F')
        return "kernel.elf is not an ELF file (bad magic)";
    if (eh->ident[4] != ELF_CLASS64 || eh->ident[5] != ELF_DATA_LSB)
        return "kernel.elf is not a little-endian ELF64 file";
    if (eh->machine != ELF_MACHINE_X86_64) return "kernel.elf is not built for x86_64";
    if (eh->type != ELF_TYPE_EXEC)
        return "kernel.elf is not an executable (ET_EXEC); relocatable or PIE kernels are not supported";
    if (eh->phentsize != sizeof(struct elf64_phdr) || eh->phnum == 0)
        return "kernel.elf has no usable program headers";
    if (eh->phoff > size || (uint64_t)eh->phnum * eh->phentsize > size - eh->phoff)
        return "kernel.elf program headers lie outside the file";

    uint64_t lo = UINT64_MAX, hi = 0;
    bool entry_ok = false;
    for (unsigned i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *ph = phdr_at(file, eh, i);
        if (ph->type != ELF_PT_LOAD || ph->memsz == 0) continue;
        if (ph->filesz > ph->memsz) return "kernel.elf segment has file size larger than memory size";
        if (ph->offset > size || ph->filesz > size - ph->offset)
            return "kernel.elf segment data lies outside the file";
        if (ph->vaddr < KERNEL_VIRT_BASE || ph->vaddr >= KERNEL_VIRT_LIMIT ||
            ph->memsz > KERNEL_VIRT_LIMIT - ph->vaddr)
            return "kernel.elf segment outside [KERNEL_VIRT_BASE, KERNEL_VIRT_BASE + 1 GiB)";
        if (ph->vaddr < lo) lo = ph->vaddr;
        if (ph->vaddr + ph->memsz > hi) hi = ph->vaddr + ph->memsz;
        if (eh->entry >= ph->vaddr && eh->entry < ph->vaddr + ph->memsz) entry_ok = true;
    }
    if (hi == 0) return "kernel.elf has no loadable segments";
    if (!entry_ok) return "kernel.elf entry point is not inside a loadable segment";
    *virt_lo = lo & ~(LOADER_PAGE_SIZE - 1);
    *virt_hi = (hi + LOADER_PAGE_SIZE - 1) & ~(LOADER_PAGE_SIZE - 1);
    return NULL;
}

void elf_load(const uint8_t *file, uint64_t size, struct kernel_image *out) {
    uint64_t lo = 0, hi = 0;
    const char *problem = elf_check(file, size, &lo, &hi);
    if (problem) fatal("%s", problem);

    const struct elf64_header *eh = (const struct elf64_header *)file;
    uint64_t pages = (hi - lo) / LOADER_PAGE_SIZE;
    uint64_t phys = pages_alloc(pages, "the kernel image");
    /* Zeroing everything first covers .bss and any gaps between segments. */
    mem_zero((void *)phys, pages * LOADER_PAGE_SIZE);
    for (unsigned i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *ph = phdr_at(file, eh, i);
        if (ph->type != ELF_PT_LOAD || ph->memsz == 0) continue;
        mem_copy((void *)(phys + (ph->vaddr - lo)), file + ph->offset, ph->filesz);
    }
    out->phys = phys;
    out->pages = pages;
    out->virt_base = lo;
    out->entry = eh->entry;
}
