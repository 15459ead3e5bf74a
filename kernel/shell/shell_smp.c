/* shell_smp.c - /smp: the processors and the worker pool. */
#include "kernel/console/console.h"
#include "kernel/arch/cpu.h"
#include "kernel/shell/shell.h"
#include "kernel/arch/smp.h"
#include "kernel/arch/workers.h"
#include "lib/string.h"

void shell_cmd_smp(struct session *session, const char *args) {
    if (strcmp(args, "test") == 0) {
        char report[160];
        workers_selftest(report, sizeof report);
        kprintf("%s\n", report);
    } else if (strncmp(args, "fault ", 6) == 0) {
        workers_fault_test(args + 6);
    } else if (!*args) {
        kprintf("processors: %d online of %d; workers: %d, %d of them in use (measured to pay off)\n",
                smp_online_count(), cpu.logical_cores, smp_online_count(), workers_count());
        unsigned shootdowns, missed;
        smp_tlb_stats(&shootdowns, &missed);
        kprintf("tlb shootdowns: %u, missed by a CPU: %u\n", shootdowns, missed);
    } else {
        kprintf("usage: /smp [test | fault KIND] (KIND: pf, ud, de, gp, stack, ro, nx, int, hang)\n");
    }
}
