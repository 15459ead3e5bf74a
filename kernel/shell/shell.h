/* shell.h - the kernel's interactive shell: slash commands and prompts. */
#ifndef KERNEL_SHELL_H
#define KERNEL_SHELL_H

/* Prints the ready line, then reads and runs lines forever. */
__attribute__((noreturn)) void shell_run(void);

/* Runs one input line (a /command or a prompt for the model). */
void shell_execute(const char *line);

/* A line that is not a command: the model's prompt. The one place where
 * inference plugs into the shell. Output must end with a newline. */
void shell_prompt(const char *line);

/* A command: `args` is the text after the name, trimmed (never NULL). */
struct shell_command {
    const char *name;    /* with the slash: "/mem" */
    const char *usage;   /* arguments, "" when none */
    const char *help;    /* one line */
    void (*run)(const char *args);
};

/* Handlers by theme. shell.c: */
void shell_cmd_help(const char *args);
void shell_cmd_echo(const char *args);
/* shell_system.c: */
void shell_cmd_mem(const char *args);
void shell_cmd_ls(const char *args);
void shell_cmd_cpu(const char *args);
void shell_cmd_uptime(const char *args);
void shell_cmd_reboot(const char *args);
void shell_cmd_poweroff(const char *args);
void shell_cmd_fault(const char *args);
/* shell_smp.c: */
void shell_cmd_smp(const char *args);

#endif
