/* acpi.c - the ACPI facts the kernel needs: RSDP -> RSDT/XSDT (checksums
 * checked), tables by signature, enabled local APICs from the MADT, the FADT
 * power registers, and SLP_TYP for S5 decoded from the \_S5_ package of the
 * DSDT or an SSDT (the parsers are acpi_parse.c). Power off writes
 * SLP_TYP|SLP_EN to PM1a/PM1b, or to the sleep control register on
 * hardware-reduced ACPI (QEMU then exits with 0). */
#include "kernel/drivers/acpi.h"
#include "kernel/drivers/acpi_parse.h"
#include "kernel/arch/cpu.h"
#include "kernel/console/console.h"
#include "kernel/mm/memory.h"
#include "kernel/mm/paging.h"
#include "kernel/drivers/timer.h"
#include "lib/string.h"

#define MAX_TABLES 64
#define MAX_TABLE_LENGTH (16u << 20)

static const struct acpi_sdt_header *tables[MAX_TABLES];
static int table_count;
static int cpu_count = 1;
static uint32_t cpu_apic_ids[ACPI_MAX_CPUS];
static int cpu_apic_id_count;
static uint32_t max_apic_id;

static struct acpi_fadt_info fadt;
static int s5_found;
static uint8_t slp_typ_a, slp_typ_b;
static int on_qemu;
static const char *qemu_evidence = "";

static uint8_t checksum(const void *p, size_t n) {
    const uint8_t *b = p;
    uint8_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += b[i];
    return sum;
}

/* Maps and validates the table at phys; NULL (with a message) if broken. */
static const struct acpi_sdt_header *load_table(uint64_t phys) {
    if (!phys) return NULL;
    const struct acpi_sdt_header *h = paging_map_phys(phys, sizeof *h);
    uint32_t length = h->length;
    if (length < sizeof *h || length > MAX_TABLE_LENGTH) {
        kprintf("acpi: table at 0x%lx has bad length %u, skipped\n", (unsigned long)phys, length);
        return NULL;
    }
    h = paging_map_phys(phys, length);
    if (checksum(h, length) != 0) {
        kprintf("acpi: table %.4s at 0x%lx fails its checksum, skipped\n", h->signature, (unsigned long)phys);
        return NULL;
    }
    return h;
}

const void *acpi_find_table(const char signature[4]) {
    for (int i = 0; i < table_count; i++)
        if (!memcmp(tables[i]->signature, signature, 4)) return tables[i];
    return NULL;
}

uint32_t acpi_max_apic_id(void) {
    return max_apic_id;
}

int acpi_cpu_count(void) {
    return cpu_count;
}

int acpi_cpu_apic_ids(uint32_t *ids, int max) {
    int n = cpu_apic_id_count < max ? cpu_apic_id_count : max;
    for (int i = 0; i < n; i++) ids[i] = cpu_apic_ids[i];
    return n;
}

uint16_t acpi_pm_timer_port(int *bits) {
    if (bits) *bits = fadt.pm_timer_bits;
    return fadt.pm_timer;
}

static void parse_madt(const struct acpi_madt *madt) {
    struct acpi_madt_cpus cpus;
    acpi_madt_parse(madt, madt->header.length, &cpus);
    for (int i = 0; i < cpus.count; i++) cpu_apic_ids[i] = cpus.ids[i];
    cpu_apic_id_count = cpus.count;
    max_apic_id = cpus.max_id;
    if (cpus.count > 0) cpu_count = cpus.count;
    if (cpus.duplicates || cpus.absurd || cpus.bad_entries)
        kprintf("acpi: MADT: %d duplicate and %d impossible APIC ids skipped%s\n", cpus.duplicates,
                cpus.absurd, cpus.bad_entries ? ", a malformed entry ended the table" : "");
    if (cpus.over_limit)
        kprintf("acpi: MADT lists %d more processors than the %d the kernel starts\n", cpus.over_limit,
                ACPI_MAX_CPUS);
}

/* \_S5_ from one DSDT or SSDT; 1 when found. */
static int find_s5_in(const struct acpi_sdt_header *t) {
    if (!t) return 0;
    uint8_t a, b;
    enum acpi_s5_result r = acpi_aml_find_s5((const uint8_t *)t + sizeof *t, t->length - sizeof *t, &a, &b);
    if (r == ACPI_S5_FOUND) {
        slp_typ_a = a, slp_typ_b = b, s5_found = 1;
        kprintf("acpi: \\_S5_ in the %.4s: SLP_TYP %u/%u\n", t->signature, a, b);
        return 1;
    }
    if (r != ACPI_S5_ABSENT)
        kprintf("acpi: %s \\_S5_ in the %.4s, ignored\n", r == ACPI_S5_TRUNCATED ? "truncated" : "malformed",
                t->signature);
    return 0;
}

/* The DSDT first, then every SSDT: some firmware defines \_S5_ in an SSDT. */
static void find_s5(void) {
    const struct acpi_sdt_header *dsdt = load_table(fadt.dsdt);
    if (dsdt && !memcmp(dsdt->signature, "DSDT", 4) && find_s5_in(dsdt)) return;
    for (int i = 0; i < table_count; i++)
        if (!memcmp(tables[i]->signature, "SSDT", 4) && find_s5_in(tables[i])) return;
}

/* QEMU's isa-debug-exit port (0xF4) means nothing on other machines, so it
 * is written only when one of these says QEMU: the hypervisor CPUID leaf
 * (TCG or KVM), QEMU's own ACPI tables (OEM "BOCHS "), or OVMF's vendor
 * "EDK II" on a CPU that says it runs under a hypervisor. */
static void detect_qemu(const char *firmware_vendor) {
    const struct acpi_sdt_header *fadt_table = acpi_find_table("FACP");
    int virtual_cpu = cpu.hypervisor[0] != 0;
    if (!strcmp(cpu.hypervisor, "TCGTCGTCGTCG") || !strcmp(cpu.hypervisor, "KVMKVMKVM"))
        qemu_evidence = cpu.hypervisor;
    else if (fadt_table && !memcmp(fadt_table->oem_id, "BOCHS ", 6))
        qemu_evidence = "ACPI OEM BOCHS";
    else if (virtual_cpu && firmware_vendor && !strcmp(firmware_vendor, "EDK II"))
        qemu_evidence = "EDK II under a hypervisor";
    on_qemu = qemu_evidence[0] != 0;
}

void acpi_init(uint64_t rsdp_phys, const char *firmware_vendor) {
    if (!rsdp_phys) {
        kprintf("acpi: no RSDP from the firmware\n");
        detect_qemu(firmware_vendor);
        return;
    }
    const struct acpi_rsdp *r = paging_map_phys(rsdp_phys, sizeof *r);
    if (memcmp(r->signature, "RSD PTR ", 8) || checksum(r, ACPI_RSDP_V1_SIZE) != 0) {
        kprintf("acpi: RSDP at 0x%lx is invalid\n", (unsigned long)rsdp_phys);
        detect_qemu(firmware_vendor);
        return;
    }
    int use_xsdt = r->revision >= 2 && r->length >= sizeof *r && r->length < 4096 &&
                   checksum(paging_map_phys(rsdp_phys, r->length), r->length) == 0 && r->xsdt_address;
    const struct acpi_sdt_header *root = load_table(use_xsdt ? r->xsdt_address : r->rsdt_address);
    if (!root) {
        kprintf("acpi: no valid RSDT/XSDT\n");
        detect_qemu(firmware_vendor);
        return;
    }
    const struct acpi_xsdt *xsdt = (const void *)root;
    const struct acpi_rsdt *rsdt = (const void *)root;
    size_t entries =
        (root->length - sizeof *root) / (use_xsdt ? sizeof xsdt->entries[0] : sizeof rsdt->entries[0]);
    for (size_t i = 0; i < entries && table_count < MAX_TABLES; i++) {
        uint64_t phys = use_xsdt ? xsdt->entries[i] : rsdt->entries[i];
        const struct acpi_sdt_header *t = load_table(phys);
        if (t) tables[table_count++] = t;
    }
    const struct acpi_madt *madt = acpi_find_table("APIC");
    if (madt) parse_madt(madt);
    const struct acpi_sdt_header *fadt_table = acpi_find_table("FACP");
    if (fadt_table) acpi_fadt_parse(fadt_table, fadt_table->length, &fadt);
    if (fadt.hardware_reduced)
        kprintf("acpi: hardware-reduced ACPI: sleep control 0x%lx, reset %s\n",
                (unsigned long)fadt.sleep_control.address, fadt.reset_supported ? "register" : "none");
    find_s5();
    if (!s5_found) kprintf("acpi: no \\_S5_ in the DSDT or SSDTs; power off will use fallbacks\n");
    detect_qemu(firmware_vendor);
    if (on_qemu) kprintf("acpi: running on QEMU (%s)\n", qemu_evidence);
}

static void wait_ms(uint64_t ms) {
    if (tsc_hz())
        timer_sleep_us(ms * 1000);
    else
        for (volatile uint64_t i = 0; i < ms * 100000; i++) {
        }
}

static void write_register(const struct acpi_register *r, uint8_t value) {
    if (r->space == ACPI_SPACE_IO)
        outb((uint16_t)r->address, value);
    else
        *(volatile uint8_t *)paging_map_mmio(r->address, 1) = value;
}

/* S5 through the PM1 control blocks (SLP_TYP bits 10-12, SLP_EN bit 13). */
static void sleep_through_pm1(void) {
    uint16_t pm1a = fadt.pm1a_cnt, pm1b = fadt.pm1b_cnt;
    /* Firmware normally leaves ACPI mode on; switch it on if not (SCI_EN). */
    if (!(inw(pm1a) & 1) && fadt.smi_cmd && fadt.acpi_enable) {
        outb(fadt.smi_cmd, fadt.acpi_enable);
        for (int i = 0; i < 300 && !(inw(pm1a) & 1); i++) wait_ms(1);
    }
    outw(pm1a, (uint16_t)((inw(pm1a) & ~(7u << 10)) | (slp_typ_a << 10) | (1u << 13)));
    if (pm1b) outw(pm1b, (uint16_t)((inw(pm1b) & ~(7u << 10)) | (slp_typ_b << 10) | (1u << 13)));
}

/* Hardware-reduced ACPI: the sleep control register (SLP_TYP bits 2-4,
 * SLP_EN bit 5), after clearing WAK_STS (bit 7) in the status register. */
static void sleep_through_sleep_registers(void) {
    if (fadt.sleep_status.address) write_register(&fadt.sleep_status, 0x80);
    write_register(&fadt.sleep_control, (uint8_t)(((slp_typ_a & 7) << 2) | (1u << 5)));
}

void acpi_poweroff(void) {
    int can_sleep =
        s5_found && (fadt.hardware_reduced ? fadt.sleep_control.address != 0 : fadt.pm1a_cnt != 0);
    if (can_sleep) {
        if (fadt.hardware_reduced)
            sleep_through_sleep_registers();
        else
            sleep_through_pm1();
        wait_ms(500);
        kprintf("acpi: S5 power off did not take effect\n");
    }
    if (on_qemu) {
        outl(0xf4, 0); /* QEMU isa-debug-exit: exits with status 1 */
        wait_ms(100);
    }
}

__attribute__((noreturn)) void acpi_reboot(void) {
    if (fadt.reset_supported) {
        write_register(&fadt.reset, fadt.reset_value);
        wait_ms(100);
    }
    outb(0xCF9, 0x06); /* PCI reset control: full reset */
    wait_ms(100);
    for (int i = 0; i < 100000 && (inb(0x64) & 2); i++) cpu_relax();
    outb(0x64, 0xFE); /* keyboard controller: pulse reset line */
    wait_ms(100);
    /* Last resort: an empty IDT turns the breakpoint into a triple fault. */
    struct __attribute__((packed)) {
        uint16_t limit;
        uint64_t base;
    } empty = {0, 0};
    __asm__ volatile("lidt %0; int3" ::"m"(empty));
    cpu_halt_forever();
}
