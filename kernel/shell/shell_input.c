/* shell_input.c - the keyboard side of the shell: the layout (/set keymap,
 * boot.cfg keymap=, listed by /help) and /bytes, which shows the exact bytes
 * the model was given for the last prompt, so what the screen showed can be
 * checked against what the model read. */
#include "kernel/shell/shell.h"
#include "kernel/console/console.h"
#include "kernel/console/keymap.h"
#include "kernel/console/line_editor.h"
#include "kernel/kernel.h"
#include "lib/config.h"
#include "lib/string.h"

static char last_prompt[LINE_EDITOR_MAX + 1];

void shell_note_prompt(const char *prompt) {
    size_t n = strnlen(prompt, LINE_EDITOR_MAX);
    memcpy(last_prompt, prompt, n);
    last_prompt[n] = '\0';
}

void shell_cmd_bytes(struct session *session, const char *args) {
    size_t n = strlen(last_prompt);
    kprintf("last prompt: %zu bytes:", n);
    for (size_t i = 0; i < n; i++) kprintf(" %02x", (unsigned char)last_prompt[i]);
    kprintf("\n");
}

void shell_print_keymaps(void) {
    kprintf("keyboard layouts (/set keymap NAME, boot.cfg keymap=NAME; now %s):\n", keymap_current());
    for (int i = 0; i < keymap_count(); i++) kprintf("  %-8s %s\n", keymap_name(i), keymap_description(i));
    kprintf("  %-8s the same as se\n", "nordic");
}

void shell_set_keymap(const char *name) {
    if (!*name) {
        shell_print_keymaps();
    } else if (keymap_select(name) != 0) {
        kprintf("set: no keyboard layout '%s' (/set keymap lists them)\n", name);
    } else {
        kprintf("set: keymap %s\n", keymap_current());
    }
}

void shell_keymap_from_boot_cfg(void) {
    char name[16];
    if (config_get(boot_info->cmdline, strnlen(boot_info->cmdline, BOOT_CMDLINE_MAX), "keymap", name,
                   sizeof name) <= 0)
        return;
    if (keymap_select(name) != 0)
        kprintf("boot.cfg: no keyboard layout '%s'; keeping %s\n", name, keymap_current());
    else
        kprintf("keyboard: layout %s\n", keymap_current());
}
