/* jinja.c - the engine's entry point: one arena per rendering, the
 * context's JSON object as the global variables, lex, parse, run. */
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

JinjaLimits jinja_default_limits(void) {
    JinjaLimits l = {JINJA_DEFAULT_MEMORY, JINJA_DEFAULT_STEPS, {2024, 7, 26, 0, 0}};
    return l;
}

int jinja_render(const char *tmpl, size_t tmpl_len, const char *context, size_t context_len,
                 const JinjaLimits *limits, char **out, size_t *out_len, char *err, size_t err_size) {
    JinjaLimits lim = limits ? *limits : jinja_default_limits();
    Jinja J;
    memset(&J, 0, sizeof J);
    arena_init(&J.arena, lim.max_memory ? lim.max_memory : JINJA_DEFAULT_MEMORY);
    J.max_steps = lim.max_steps ? lim.max_steps : JINJA_DEFAULT_STEPS;
    J.now = lim.now;
    *out = NULL;
    if (out_len) *out_len = 0;

    Scope *globals = scope_new(&J, NULL);
    if (globals) install_globals(&J, globals);
    JVal ctx = json_parse(&J, context ? context : "{}", context ? context_len : 2);
    if (!J.failed && ctx.t != JT_DICT) jfail(&J, "the context is not a JSON object");
    for (int i = 0; !J.failed && i < ctx.d->n; i++) scope_set(&J, globals, ctx.d->k[i], ctx.d->v[i]);

    Token *tokens = NULL;
    int ntok = J.failed ? -1 : lex(&J, tmpl, tmpl_len, &tokens);
    NodeList program = {0};
    if (ntok >= 0) program = parse(&J, tokens, ntok);
    JBuf result = {0};
    if (!J.failed) eval_block(&J, &program, globals, &result);
    if (!J.failed && J.ctrl != CTRL_NONE) jfail(&J, "break or continue outside a loop");
    if (!J.failed) {
        *out = malloc(result.len + 1);
        if (!*out) {
            jfail(&J, "out of memory");
        } else {
            if (result.len) memcpy(*out, result.s, result.len);
            (*out)[result.len] = '\0';
            if (out_len) *out_len = result.len;
        }
    }
    if (J.failed && err_size) strlcpy(err, J.err, err_size);
    arena_free(&J.arena);
    return J.failed ? -1 : 0;
}
