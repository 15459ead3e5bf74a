/* shell.h - the kernel's interactive shell: slash commands and prompts. */
#ifndef KERNEL_SHELL_H
#define KERNEL_SHELL_H

/* Prints the ready line, then reads and runs lines forever. */
__attribute__((noreturn)) void shell_run(void);

struct session;

/* A command: `args` is the text after the name, trimmed (never NULL).
 * `session` is the shell's one model session; commands that do not use the
 * model ignore it. */
struct shell_command {
    const char *name;  /* with the slash: "/mem" */
    const char *usage; /* arguments, "" when none */
    const char *help;  /* one line */
    void (*run)(struct session *session, const char *args);
};

/* shell_system.c: */
void shell_cmd_mem(struct session *session, const char *args);
void shell_cmd_ls(struct session *session, const char *args);
void shell_cmd_cpu(struct session *session, const char *args);
void shell_cmd_uptime(struct session *session, const char *args);
void shell_cmd_reboot(struct session *session, const char *args);
void shell_cmd_poweroff(struct session *session, const char *args);
void shell_cmd_fault(struct session *session, const char *args);
void shell_cmd_pci(struct session *session, const char *args);
void shell_cmd_net(struct session *session, const char *args);
/* shell_smp.c: */
void shell_cmd_smp(struct session *session, const char *args);
/* shell_llm.c: the model, its settings and the conversation. */
void shell_cmd_model(struct session *session, const char *args);
void shell_cmd_load(struct session *session, const char *args);
void shell_cmd_stats(struct session *session, const char *args);
void shell_cmd_chat(struct session *session, const char *args);
void shell_cmd_system(struct session *session, const char *args);
/* Says a conversation has started (its template, system prompt, context). */
void shell_chat_started(const struct session *session);
/* shell_set.c: the settings, a table of them. */
void shell_cmd_set(struct session *session, const char *args);
/* shell_input.c: keyboard layouts and what the model was given. */
void shell_cmd_bytes(struct session *session, const char *args);
void shell_note_prompt(const char *prompt);
void shell_print_keymaps(void);
void shell_set_keymap(const char *name);
void shell_keymap_from_boot_cfg(void);
/* shell_bench.c: prefill and decode speed of the loaded model on one worker
 * and on all of them. */
void shell_cmd_bench(struct session *session, const char *args);

#endif
