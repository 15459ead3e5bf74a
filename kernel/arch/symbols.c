/* symbols.c - function names for addresses, from the .symtab/.strtab of the
 * kernel ELF file the loader handed over. Every offset is checked against
 * the file size; the FUNC symbols and their names are copied into one sorted
 * heap block, so the file (3.8 MiB with its debug info) can be freed after. */
#include "kernel/arch/panic.h"
#include "kernel/mm/memory.h"
#include "kernel/console/console.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include <stdint.h>

extern char __text_end[]; /* linker.ld */

struct elf64_header {
    uint8_t ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf64_section {
    uint32_t name, type;
    uint64_t flags, addr, offset, size;
    uint32_t link, info;
    uint64_t addralign, entsize;
};

struct elf64_symbol {
    uint32_t name;
    uint8_t info, other;
    uint16_t shndx;
    uint64_t value, size;
};

#define SHT_SYMTAB 2
#define STT_FUNC 2

struct kernel_symbol {
    uint64_t addr, size;
    const char *name;
};

static struct kernel_symbol *symbols;
static size_t symbol_count;

static int range_ok(uint64_t offset, uint64_t length, uint64_t file_size) {
    return offset <= file_size && length <= file_size - offset;
}

static int compare_symbols(const void *a, const void *b) {
    const struct kernel_symbol *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* A named function whose name ends inside .strtab. */
static int usable_function(const struct elf64_symbol *s, const char *names, uint64_t names_size) {
    return (s->info & 0xf) == STT_FUNC && s->value && s->name < names_size &&
           memchr(names + s->name, 0, names_size - s->name);
}

int symbols_init(const void *elf_file, unsigned long size) {
    const uint8_t *file = elf_file;
    const struct elf64_header *eh = elf_file;
    if (!file || size < sizeof *eh ||
        memcmp(eh->ident,
               "\x7f"
               "ELF",
               4) ||
        eh->ident[4] != 2) {
        kprintf("symbols: kernel file missing or not ELF64; traces will show addresses only\n");
        return 0;
    }
    if (eh->shentsize != sizeof(struct elf64_section) ||
        !range_ok(eh->shoff, (uint64_t)eh->shnum * sizeof(struct elf64_section), size)) {
        kprintf("symbols: bad section header table\n");
        return 0;
    }
    const struct elf64_section *sections = (const void *)(file + eh->shoff);
    const struct elf64_section *symtab = NULL, *strtab = NULL;
    for (unsigned i = 0; i < eh->shnum; i++) {
        if (sections[i].type == SHT_SYMTAB && sections[i].link < eh->shnum) {
            symtab = &sections[i];
            strtab = &sections[sections[i].link];
            break;
        }
    }
    if (!symtab || !range_ok(symtab->offset, symtab->size, size) ||
        !range_ok(strtab->offset, strtab->size, size) || symtab->entsize != sizeof(struct elf64_symbol) ||
        (symtab->offset & 7)) {
        kprintf("symbols: no usable .symtab in the kernel file\n");
        return 0;
    }
    const struct elf64_symbol *syms = (const void *)(file + symtab->offset);
    size_t total = symtab->size / sizeof *syms;
    const char *names = (const char *)(file + strtab->offset);

    size_t funcs = 0, name_bytes = 0;
    for (size_t i = 0; i < total; i++)
        if (usable_function(&syms[i], names, strtab->size))
            funcs++, name_bytes += strlen(names + syms[i].name) + 1;
    symbols = kmalloc(funcs * sizeof *symbols + name_bytes + 1);
    if (!symbols) {
        kprintf("symbols: out of memory\n");
        return 0;
    }
    char *copy = (char *)(symbols + funcs);
    for (size_t i = 0; i < total; i++) {
        const struct elf64_symbol *s = &syms[i];
        if (!usable_function(s, names, strtab->size)) continue;
        size_t len = strlen(names + s->name) + 1;
        memcpy(copy, names + s->name, len);
        symbols[symbol_count++] = (struct kernel_symbol){s->value, s->size, copy};
        copy += len;
    }
    qsort(symbols, symbol_count, sizeof *symbols, compare_symbols);
    return (int)symbol_count;
}

const char *symbol_lookup(unsigned long addr, unsigned long *offset) {
    *offset = 0;
    if (symbol_count == 0 || addr < symbols[0].addr) return "?";
    size_t lo = 0, hi = symbol_count; /* last symbol with addr <= target */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (symbols[mid].addr <= addr)
            lo = mid;
        else
            hi = mid;
    }
    const struct kernel_symbol *s = &symbols[lo];
    /* Sized symbols must contain addr; unsized ones (asm) cover up to the
     * next symbol but never past the end of the code. */
    if (s->size ? addr >= s->addr + s->size : addr >= (unsigned long)__text_end) return "?";
    *offset = addr - s->addr;
    return s->name;
}
