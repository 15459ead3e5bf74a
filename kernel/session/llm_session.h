/* llm_session.h - the model the shell talks to: which checkpoint and
 * tokenizer from the ramdisk are loaded, the sampling settings, and answering
 * a prompt by streaming tokens to the console. */
#ifndef KERNEL_LLM_SESSION_H
#define KERNEL_LLM_SESSION_H

/* Loads the default model named by boot.cfg (model=, tokenizer=), or the
 * first checkpoint in the ramdisk. A failure is reported; the shell still runs. */
void llm_session_init(void);

/* Streams the answer to `prompt`, then one line "[...]" with its figures.
 * In /chat mode the line is the user's next turn. */
void llm_session_answer(const char *prompt);

/* Shell commands (args trimmed, never NULL). */
void shell_cmd_model(const char *args);
void shell_cmd_load(const char *args);
void shell_cmd_set(const char *args);
void shell_cmd_stats(const char *args);
void shell_cmd_chat(const char *args);
void shell_cmd_system(const char *args);

#endif
