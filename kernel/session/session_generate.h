/* session_generate.h - what answering a prompt (session_answer.c) and a chat
 * turn (session_chat.c) share: the sampler from the settings, the console as
 * llm/'s output, and the figures line after an answer. Private to session/. */
#ifndef KERNEL_SESSION_GENERATE_H
#define KERNEL_SESSION_GENERATE_H

#include "kernel/session/session.h"

/* A sampler with the session's settings; 0, or -1 (reported). Free it with
 * llm/'s sampler_destroy. */
int session_sampler_create(const struct session *s, Sampler *sampler);
/* Output to the console, Ctrl-C as the stop key, the TSC clock. *column
 * tracks whether the text so far ends inside a line. */
GenerateIO session_console_io(int *column);
/* The "[N tokens, ...]" line, the history and the status line. */
void session_report_answer(struct session *s, const GenerateStats *st);

#endif
