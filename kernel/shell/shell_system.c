/* shell_system.c - shell commands about the machine: memory, files, CPU,
 * time, power and deliberate faults. */
#include <stdint.h>
#include "kernel/shell/shell.h"
#include "kernel/session/session.h"
#include "kernel/drivers/acpi.h"
#include "kernel/drivers/pci.h"
#include "kernel/net/net.h"
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/arch/smp.h"
#include "kernel/arch/apic.h"
#include "kernel/kernel.h"
#include "kernel/mm/memory.h"
#include "kernel/drivers/ramdisk.h"
#include "kernel/drivers/timer.h"
#include "kernel/session/session.h"
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/format/checkpoint.h"
#include "llm/format/gguf.h"
#include "llm/format/gguf_split.h"
#include "llm/model/kv_cache.h"
#include "llm/model/model_estimate.h"
#include "llm/tensor/quant.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"

#define MIB (1024ull * 1024ull)
#define MEM_TEST_MAX_MIB (1024ull * 1024ull) /* 1 TiB: anything more is a typo */

/* Prints bytes as MiB with one decimal, rounded, then the exact byte count
 * (leak checks compare those). */
static void print_mib(const char *label, uint64_t bytes) {
    uint64_t tenths = (bytes * 10 + MIB / 2) / MIB;
    kprintf("  %-14s %llu.%llu MiB (%llu bytes)\n", label, (unsigned long long)(tenths / 10),
            (unsigned long long)(tenths % 10), (unsigned long long)bytes);
}

static void mem_test(const char *args) {
    char *end;
    unsigned long long mib = strtoull(args, &end, 10);
    while (*end == ' ' || *end == '\t') end++;
    if (end == args || *end != '\0' || mib == 0 || mib > MEM_TEST_MAX_MIB) {
        kprintf("usage: /mem test MIB (a whole number of MiB, 1 to %llu)\n", MEM_TEST_MAX_MIB);
        return;
    }
    char report[256];
    report[0] = '\0';
    int rc = memory_selftest_high((size_t)mib, report, sizeof report);
    size_t len = strnlen(report, sizeof report);
    if (len == 0)
        kprintf("mem test: %s\n", rc == 0 ? "passed" : "failed");
    else
        kprintf("%.*s%s", (int)len, report, report[len - 1] == '\n' ? "" : "\n");
}

void shell_cmd_mem(struct session *session, const char *args) {
    if (strncmp(args, "test", 4) == 0 && (args[4] == '\0' || args[4] == ' ' || args[4] == '\t')) {
        const char *rest = args + 4;
        while (*rest == ' ' || *rest == '\t') rest++;
        mem_test(rest);
        return;
    }
    if (*args) {
        kprintf("usage: /mem [test MIB]\n");
        return;
    }
    struct memory_stats st;
    memory_get_stats(&st);
    kprintf("memory:\n");
    print_mib("total", st.total_bytes);
    print_mib("used", st.used_bytes);
    print_mib("free", st.free_bytes);
    print_mib("kernel image", st.kernel_image_bytes);
    print_mib("heap in use", st.heap_bytes);
    print_mib("heap pages", heap_pages_held() * PAGE_SIZE);
    print_mib("ramdisk", st.ramdisk_bytes);
    if (session->model.loaded) {
        /* The model's share of the heap: run state with its KV cache, of this type. */
        const Model *t = &session->model.llm.model;
        char label[24];
        snprintf(label, sizeof label, "model+kv %s", kv_type_name(model_kv_type(t)));
        print_mib(label, model_state_bytes(t));
    }
    kprintf("  %-14s 0x%llx\n", "highest phys", (unsigned long long)st.highest_phys);
}

static void print_size_mib(uint64_t bytes) {
    uint64_t tenths = (bytes * 10 + MIB / 2) / MIB;
    kprintf("%llu.%llu MiB", (unsigned long long)(tenths / 10), (unsigned long long)(tenths % 10));
}

/* Lists the ramdisk; for each model also the run state it needs at its
 * trained context and whether that fits in the RAM that is free now (the
 * weights stay in place in the ramdisk, so only the run state is
 * allocated), else the context a load lowers it to. */
void shell_cmd_ls(struct session *session, const char *args) {
    int count = ramdisk_count();
    if (count <= 0) {
        kprintf("ramdisk: no files\n");
        return;
    }
    struct memory_stats st;
    memory_get_stats(&st);
    uint64_t free_bytes, budget = session_state_budget(&free_bytes);
    uint64_t total = 0;
    int too_big = 0;
    for (int i = 0; i < count; i++) {
        const struct ramdisk_file *f = ramdisk_file_at(i);
        if (!f) continue;
        kprintf("  %12zu  %s", f->size, f->name);
        total += f->size;
        uint32_t piece, pieces;
        if (gguf_split_position(f->data, f->size, &piece, &pieces) && piece > 0) {
            kprintf("  (GGUF piece %u of %u: loads with the first)\n", piece + 1, pieces);
            continue;
        }
        int64_t estimate = model_state_bytes_estimate_kv(f->data, f->size, session->settings.kv_type);
        uint64_t state = estimate > 0 ? (uint64_t)estimate : 0;
        size_t len = strlen(f->name);
        int named_bin = len > 4 && strcmp(f->name + len - 4, ".bin") == 0 && !strstr(f->name, "tok");
        int gguf = gguf_is_gguf(f->data, f->size);
        ModelShape shape;
        int read = state > budget && model_shape_read(&shape, f->data, f->size) == 0;
        if (read) shape.kv_type = session->settings.kv_type;
        int fit = read ? model_ctx_that_fits(&shape, shape.trained_ctx, budget) : 0;
        int lowered =
            fit > 0 && fit >= (shape.trained_ctx < SESSION_MIN_CTX ? shape.trained_ctx : SESSION_MIN_CTX);
        if (state) {
            kprintf(gguf ? "  (GGUF model, run state " : "  (model, run state ");
            print_size_mib(state);
            if (state <= budget)
                kprintf(")");
            else if (lowered)
                kprintf(" at its trained context %d: loads with %d positions)", shape.trained_ctx, fit);
            else
                kprintf(": does not fit in free RAM)");
            too_big += state > budget && !lowered;
        } else if (gguf) {
            kprintf("  (GGUF model: unsupported or malformed)");
        } else if (named_bin) {
            char err[160] = "";
            ModelConfig c;
            Llama2cWeights w;
            checkpoint_parse(&c, &w, f->data, f->size, err, sizeof err);
            kprintf("  (not a loadable checkpoint: %s)", err);
        }
        kprintf("\n");
    }
    kprintf("%d file%s, %llu bytes", count, count == 1 ? "" : "s", (unsigned long long)total);
    if (too_big) {
        kprintf("; %d model%s too large for the ", too_big, too_big == 1 ? "" : "s");
        print_size_mib(st.free_bytes);
        kprintf(" of free RAM");
    }
    kprintf("\n");
}

void shell_cmd_cpu(struct session *session, const char *args) {
    kprintf("vendor:   %s\n", cpu.vendor);
    kprintf("brand:    %s\n", cpu.brand[0] ? cpu.brand : "(none)");
    kprintf("family %u model %u stepping %u\n", cpu.family, cpu.model, cpu.stepping);
    static const struct {
        const char *name;
        const int *flag;
    } features[] = {
        {"sse2", &cpu.sse2},
        {"sse3", &cpu.sse3},
        {"ssse3", &cpu.ssse3},
        {"sse4.1", &cpu.sse41},
        {"sse4.2", &cpu.sse42},
        {"avx", &cpu.avx},
        {"avx2", &cpu.avx2},
        {"fma", &cpu.fma},
        {"f16c", &cpu.f16c},
        {"avx512f", &cpu.avx512f},
        {"avx512bw", &cpu.avx512bw},
        {"avx512vl", &cpu.avx512vl},
        {"avx512vnni", &cpu.avx512vnni},
    };
    kprintf("simd:    ");
    int any = 0;
    for (size_t i = 0; i < sizeof features / sizeof features[0]; i++) {
        if (*features[i].flag) {
            kprintf(" %s", features[i].name);
            any = 1;
        }
    }
    kprintf("%s\n", any ? "" : " (none)");
    kprintf("avx:      %s\n",
            cpu.avx_enabled ? "enabled" : (cpu.avx ? "offered but not enabled" : "not available"));
    kprintf("cores:    %d online of %d\n", smp_online_count(), cpu.logical_cores);
    uint64_t khz = tsc_hz() / 1000;
    kprintf("tsc:      %llu.%03llu MHz (%s)\n", (unsigned long long)(khz / 1000),
            (unsigned long long)(khz % 1000), timer_source());
    kprintf("platform: %s, %s\n", cpu.hypervisor[0] ? cpu.hypervisor : "no hypervisor",
            apic_is_x2apic() ? "x2APIC" : "xAPIC");
    kprintf("x2apic:   %s\n", cpu.x2apic ? "offered by the CPU" : "not offered by the CPU");
}

void shell_cmd_uptime(struct session *session, const char *args) {
    uint64_t ms = timer_ms();
    kprintf("uptime: %llu ms (%llu.%03llu s)\n", (unsigned long long)ms, (unsigned long long)(ms / 1000),
            (unsigned long long)(ms % 1000));
}

void shell_cmd_reboot(struct session *session, const char *args) {
    kprintf("rebooting\n");
    acpi_reboot();
}

void shell_cmd_poweroff(struct session *session, const char *args) {
    kprintf("powering off\n");
    acpi_poweroff();
    kprintf("poweroff failed: no ACPI S5 or debug-exit port answered\n");
}

void shell_cmd_fault(struct session *session, const char *args) {
    if (!*args) {
        kprintf("usage: /fault KIND (pf ud de gp stack)\n");
        return;
    }
    kprintf("raising fault: %s\n", args);
    debug_fault(args); /* returns only for an unknown kind, after saying so */
}

void shell_cmd_pci(struct session *session, const char *args) {
    pci_print_devices();
}

void shell_cmd_net(struct session *session, const char *args) {
    net_print_status();
}
