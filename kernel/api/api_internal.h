/* api_internal.h - what the API's files share. Private to kernel/api/. */
#ifndef KERNEL_API_INTERNAL_H
#define KERNEL_API_INTERNAL_H

#include "kernel/api/api.h"
#include "llm/generate/api_request.h"

/* What the console line reports about a generation. */
struct api_result {
    int tokens;
    double tokens_per_second;
};

/* api_generate.c: /v1/completions (kind API_COMPLETION) and
 * /v1/chat/completions (API_CHAT). Returns the status sent. */
int api_generate(struct session *s, enum api_kind kind, const struct api_request *r, struct api_reply *reply,
                 struct api_result *result);

#endif
