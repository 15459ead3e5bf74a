/* shell.c - reads lines with the line editor and runs them: "/name args"
 * through the command table, anything else as a prompt for the model.
 * Every command's output ends with a newline, so the "> " prompt always
 * starts a line (the test harness waits for it there). */
#include <stdint.h>
#include "kernel/shell/shell.h"
#include "kernel/console/console.h"
#include "kernel/kernel.h"
#include "kernel/arch/cpu.h"
#include "kernel/api/api.h"
#include "kernel/net/net_service.h"
#include "lib/config.h"
#include "kernel/console/line_editor.h"
#include "kernel/session/session.h"
#include "kernel/console/status.h"
#include "kernel/drivers/timer.h"
#include "lib/ctype.h"
#include "lib/string.h"

#define SHELL_PROMPT "> "

/* New commands: one line here plus the handler. */
static void shell_cmd_help(struct session *session, const char *args);
static void shell_cmd_echo(struct session *session, const char *args);
static void shell_cmd_api(struct session *session, const char *args);

static const struct shell_command shell_commands[] = {
    {"/help", "", "list the commands", shell_cmd_help},
    {"/ls", "", "files in the ramdisk with their sizes", shell_cmd_ls},
    {"/mem", "[test MIB]", "memory use; 'test N' checks N MiB of RAM above 4 GiB", shell_cmd_mem},
    {"/cpu", "", "processor, SIMD features, cores, TSC frequency", shell_cmd_cpu},
    {"/uptime", "", "time since boot", shell_cmd_uptime},
    {"/pci", "", "list PCI functions", shell_cmd_pci},
    {"/net", "", "network: card, link, address, services with their connections and errors", shell_cmd_net},
    {"/smp", "[test]", "processors online; 'test' runs a parallel sum on every core", shell_cmd_smp},
    {"/bench", "[TOKENS]", "prefill and decode speed of the loaded model on one core and on all",
     shell_cmd_bench},
    {"/model", "", "the loaded model: config, parameters, memory", shell_cmd_model},
    {"/load", "MODEL [TOKENIZER] [q8]", "switch model (q8: int8 weights, faster)", shell_cmd_load},
    {"/set", "[NAME VALUE]",
     "settings: temp topp topk minp penalty seed steps simd think kv ctx; keymap (/set lists them)",
     shell_cmd_set},
    {"/bytes", "", "the UTF-8 bytes of the last prompt the model was given, in hex", shell_cmd_bytes},
    {"/stats", "", "figures of the last answer and of all answers", shell_cmd_stats},
    {"/chat", "[off|reset|slide|tokens|template T]",
     "conversation mode: plain lines are turns, the KV cache is kept", shell_cmd_chat},
    {"/system", "[TEXT]", "the system prompt of the next /chat (restarts the current one)", shell_cmd_system},
    {"/api", "", "the OpenAI-compatible API as JSON lines on the console ('/api off' returns)",
     shell_cmd_api},
    {"/echo", "TEXT", "print TEXT", shell_cmd_echo},
    {"/fault", "KIND", "debug: raise a CPU exception (pf ud de gp stack)", shell_cmd_fault},
    {"/reboot", "", "restart the machine", shell_cmd_reboot},
    {"/poweroff", "", "switch the machine off (ACPI S5)", shell_cmd_poweroff},
};
#define SHELL_COMMAND_COUNT (sizeof shell_commands / sizeof shell_commands[0])

static struct line_editor shell_editor; /* large (history): keep it off the stack */
static char shell_line[LINE_EDITOR_MAX + 1];

static void shell_cmd_help(struct session *session, const char *args) {
    size_t width = 0;
    for (size_t i = 0; i < SHELL_COMMAND_COUNT; i++) {
        size_t w = strlen(shell_commands[i].name) + 1 + strlen(shell_commands[i].usage);
        if (w > width) width = w;
    }
    kprintf("commands:\n");
    for (size_t i = 0; i < SHELL_COMMAND_COUNT; i++) {
        const struct shell_command *c = &shell_commands[i];
        int w = (int)(strlen(c->name) + 1 + strlen(c->usage));
        kprintf("  %s %s%*s  %s\n", c->name, c->usage, (int)width - w, "", c->help);
    }
    kprintf("anything else is a prompt for the model\n");
    shell_print_keymaps();
}

static void shell_cmd_api(struct session *session, const char *args) {
    if (*args) {
        kprintf("usage: /api (then \"/api off\" to come back)\n");
        return;
    }
    api_serial_run(session);
}

static void shell_cmd_echo(struct session *session, const char *args) {
    kprintf("%s\n", args);
}

static const struct shell_command *find_command(const char *name, size_t len) {
    for (size_t i = 0; i < SHELL_COMMAND_COUNT; i++)
        if (strlen(shell_commands[i].name) == len && strncmp(shell_commands[i].name, name, len) == 0)
            return &shell_commands[i];
    return NULL;
}

static void shell_execute(struct session *session, const char *line) {
    while (isspace((unsigned char)*line)) line++;
    size_t len = strlen(line);
    while (len > 0 && isspace((unsigned char)line[len - 1])) len--;
    if (len == 0) return;
    if (len > LINE_EDITOR_MAX) len = LINE_EDITOR_MAX;
    memmove(shell_line, line, len); /* line may already be shell_line */
    shell_line[len] = '\0';

    if (shell_line[0] != '/') {
        shell_note_prompt(shell_line);
        session_answer(session, shell_line); /* output ends with a newline */
        return;
    }
    size_t name_len = 0;
    while (name_len < len && !isspace((unsigned char)shell_line[name_len])) name_len++;
    const char *args = shell_line + name_len;
    while (isspace((unsigned char)*args)) args++;
    const struct shell_command *cmd = find_command(shell_line, name_len);
    if (!cmd) {
        kprintf("unknown command: %.*s (try /help)\n", (int)name_len, shell_line);
        return;
    }
    cmd->run(session, args);
}

static void editor_write(void *ctx, const char *s, size_t n) {
    (void)ctx;
    console_write(s, n);
}

static uint64_t boot_ms(void) {
    uint64_t hz = tsc_hz();
    if (hz < 1000) return 0;
    return (rdtsc() - kernel_entry_tsc) / (hz / 1000);
}

/* With the network up (boot.cfg net=dhcp|static), the HTTP API on port 8080
 * (api_key=KEY guards it); api=serial starts in the JSON-lines mode. */
static void start_api(struct session *session) {
    const char *cfg = boot_info->cmdline;
    size_t len = strnlen(cfg, BOOT_CMDLINE_MAX);
    char value[256], key[256] = "";
    if (net_is_up()) { /* an address within the boot's wait; a network that did not start said so already */
        if (config_get(cfg, len, "api_key", key, sizeof key) == CONFIG_TRUNCATED) {
            kprintf("api: api_key is longer than %zu bytes: the HTTP API is off\n", sizeof key - 1);
        } else if (api_http_start(key) == 0) {
            kprintf("api: HTTP on port 8080%s\n", key[0] ? ", API key required" : "");
        }
    }
    if (config_get(cfg, len, "api", value, sizeof value) == CONFIG_FOUND && strcmp(value, "serial") == 0)
        api_serial_run(session);
}

/* The next key; meanwhile queued API requests are answered, one at a
 * time, and the prompt is shown again after each (the line typed so far is
 * kept: it goes on after the request's console line). */
static int wait_key_serving_api(struct session *session) {
    for (;;) {
        int key = console_poll_key();
        if (key != KEY_NONE) return key;
        if (api_poll(session) && shell_editor.len == 0) line_editor_begin(&shell_editor, SHELL_PROMPT);
        cpu_relax();
    }
}

void shell_run(void) {
    static struct session session; /* the one model session; large: off the stack */
    session_init(&session);
    kprintf("kernel: ready in %llu ms\n", (unsigned long long)boot_ms());
    shell_keymap_from_boot_cfg();
    line_editor_init(&shell_editor, editor_write, NULL);
    start_api(&session);
    for (;;) {
        status_refresh(); /* memory figures after each command */
        line_editor_begin(&shell_editor, SHELL_PROMPT);
        int status;
        do status = line_editor_feed(&shell_editor, wait_key_serving_api(&session));
        while (status == LINE_EDITOR_EDITING);
        if (status == LINE_EDITOR_CANCELLED) {
            console_flush_input();
            continue;
        }
        shell_execute(&session, line_editor_line(&shell_editor));
    }
}
