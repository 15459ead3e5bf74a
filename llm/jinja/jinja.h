/* jinja.h - a Jinja engine for chat templates (tokenizer.chat_template).
 *
 * It renders the subset of Jinja that real chat templates use, with the
 * semantics of @huggingface/jinja (the renderer llama.cpp's and
 * transformers.js's users get): trim_blocks and lstrip_blocks on, JavaScript
 * number and string rules, Python-style filters and methods. Everything a
 * rendering allocates lives in one arena freed in one go; memory, steps and
 * nesting are bounded so a hostile template ends with a reason, never a hang.
 * See llm/jinja/README.md. */
#ifndef LLM_JINJA_H
#define LLM_JINJA_H

#include <stddef.h>

/* What strftime_now() formats. The kernel has no wall-clock date, so it
 * passes a fixed one (documented in the README); the host passes local time. */
typedef struct {
    int year, month, day, hour, minute; /* month 1..12 */
} JinjaDate;

typedef struct {
    size_t max_memory;       /* arena bytes (template, values, output); 0: the default */
    unsigned long max_steps; /* evaluated nodes; 0: the default */
    JinjaDate now;           /* strftime_now() */
} JinjaLimits;

#define JINJA_DEFAULT_MEMORY (64u << 20)
#define JINJA_DEFAULT_STEPS 20000000ul

JinjaLimits jinja_default_limits(void);

/* Renders `tmpl` (tmpl_len bytes) with the variables of the JSON object
 * `context` (messages, add_generation_prompt, bos_token, ...). On success
 * returns 0 and *out is a malloc'd, NUL-terminated rendering (*out_len
 * bytes); else -1 with a one-line reason in err (the template's own
 * raise_exception message, a syntax error, a limit). */
int jinja_render(const char *tmpl, size_t tmpl_len, const char *context, size_t context_len,
                 const JinjaLimits *limits, char **out, size_t *out_len, char *err, size_t err_size);

/* Appends s (len bytes) to a JSON text as a quoted, escaped string. Returns
 * the bytes it would write (writes at most room - 1 and terminates). */
size_t jinja_json_quote(const char *s, size_t len, char *dst, size_t room);

#endif
