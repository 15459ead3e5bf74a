/* fuzz_jinja.c - the Jinja engine (llm/jinja) over arbitrary templates and
 * contexts. Input: template bytes, then optionally a NUL and the context's
 * JSON (messages and options); without the NUL a fixed conversation is the
 * context. Tight limits keep every run short; a refusal must say why. */
#include <stdint.h>

#include "llm/jinja/jinja.h"
#include "tests/fuzz/fuzz_common.h"

static const char default_context[] =
    "{\"messages\": [{\"role\": \"system\", \"content\": \"Be brief.\"}, {\"role\": \"user\", \"content\": "
    "\"Hi \\u00e9\\ud83d\\ude00\"}, {\"role\": \"assistant\", \"content\": \"\"}, {\"role\": \"user\", "
    "\"content\": \"ok\"}], \"add_generation_prompt\": true, \"bos_token\": \"<s>\", \"eos_token\": "
    "\"</s>\"}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t tmpl_len = nul ? (size_t)(nul - text) : size;
    const char *ctx = nul ? nul + 1 : default_context;
    size_t ctx_len = nul ? size - tmpl_len - 1 : sizeof default_context - 1;

    JinjaLimits limits = jinja_default_limits();
    limits.max_memory = 8u << 20;
    limits.max_steps = 200000;
    char *out = NULL, err[200];
    size_t out_len = 0;
    memset(err, 0, sizeof err);
    int rc = jinja_render(text, tmpl_len, ctx, ctx_len, &limits, &out, &out_len, err, sizeof err);
    if (rc == 0) {
        FUZZ_ASSERT(out != NULL, "success without a rendering");
        FUZZ_ASSERT(out[out_len] == '\0', "rendering not terminated");
        free(out);
    } else {
        FUZZ_ASSERT(rc == -1, "unexpected return value");
        FUZZ_ASSERT(out == NULL, "failure with a rendering");
        fuzz_check_reason(err, sizeof err);
    }
    return 0;
}
