/* jinja_call.c - calls: arguments (positional, keyword, spread), macros
 * with their own scope and caller(), globals, filters' and methods' callees.
 * Call depth is bounded (MAX_EVAL_DEPTH). */
#include "lib/format.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

void eval_args(Jinja *J, const NodeList *args, Scope *sc, JList *pos, JDict *kw) {
    for (int k = 0; k < args->n && !J->failed; k++) {
        const Node *a = args->v[k];
        if (a->type == N_SPREAD) {
            JVal v = eval(J, a->a, sc);
            if (J->failed) return;
            if (!is_list(v)) {
                jfail(J, "Cannot unpack non-iterable type: %s", type_name(v));
                return;
            }
            for (int i = 0; i < v.l->n; i++) list_push(J, pos, v.l->v[i]);
        } else if (a->type != N_KWARG && a->type != N_KWSPREAD) {
            list_push(J, pos, eval(J, a, sc));
        }
    }
    for (int k = 0; k < args->n && !J->failed; k++) {
        const Node *a = args->v[k];
        if (a->type == N_KWARG) {
            if (dict_get(kw, a->str->s, a->str->len)) {
                jfail(J, "Got multiple values for keyword argument '%s'", a->str->s);
                return;
            }
            dict_set(J, kw, a->str, eval(J, a->a, sc));
        } else if (a->type == N_KWSPREAD) {
            JVal v = eval(J, a->a, sc);
            if (J->failed) return;
            if (!is_mapping(v)) {
                jfail(J, "Argument after ** must be a mapping, not %s", type_name(v));
                return;
            }
            for (int i = 0; i < v.d->n; i++) {
                if (dict_get(kw, v.d->k[i]->s, v.d->k[i]->len)) {
                    jfail(J, "Got multiple values for keyword argument '%s'", v.d->k[i]->s);
                    return;
                }
                dict_set(J, kw, v.d->k[i], v.d->v[i]);
            }
        }
    }
}

static JVal call_macro(Jinja *J, const Node *m, JList *args, Scope *caller) {
    Scope *sc = scope_new(J, caller);
    if (!sc) return v_undef();
    int npos = args->n;
    JDict *kw = NULL;
    if (npos && args->v[npos - 1].t == JT_KWARGS) kw = args->v[--npos].d;
    const NodeList *params = &m->list2;
    /* defaults are evaluated after every parameter is bound; on the arena, not the (kernel) stack */
    const Node **pending = jalloc(J, (size_t)(params->n ? params->n : 1) * sizeof *pending);
    int npending = 0;
    if (!pending) return v_undef();
    for (int i = 0; i < params->n; i++) {
        const Node *p = params->v[i];
        JStr *name = p->str;
        JVal v = i < npos ? args->v[i] : v_undef();
        int given = i < npos;
        if (!given && kw) {
            JVal *k = dict_get(kw, name->s, name->len);
            if (k) {
                v = *k;
                given = 1;
                /* taken: removed from the keyword arguments */
                for (int j = 0; j < kw->n; j++)
                    if (kw->k[j] == name ||
                        (kw->k[j]->len == name->len && !memcmp(kw->k[j]->s, name->s, name->len))) {
                        memmove(&kw->k[j], &kw->k[j + 1], (size_t)(kw->n - j - 1) * sizeof *kw->k);
                        memmove(&kw->v[j], &kw->v[j + 1], (size_t)(kw->n - j - 1) * sizeof *kw->v);
                        kw->n--;
                        break;
                    }
            }
        }
        if (!given && p->type == N_KWARG) pending[npending++] = p;
        scope_set(J, sc, name, v);
    }
    if (kw && kw->n > 0) {
        jfail(J, "macro '%s' takes no keyword argument '%s'", m->str->s, kw->k[0]->s);
        return v_undef();
    }
    if (npos > params->n) {
        jfail(J, "macro '%s' takes not more than %d argument(s)", m->str->s, params->n);
        return v_undef();
    }
    for (int i = 0; i < npending; i++) scope_set(J, sc, pending[i]->str, eval(J, pending[i]->a, sc));
    JBuf out = {0};
    eval_block(J, &m->list, sc, &out);
    return buf_value(J, &out);
}

JVal call_function(Jinja *J, JVal fn, JList *args, Scope *caller) {
    if (fn.t != JT_FUNC) {
        jfail(J, "Cannot call something that is not a function: got %s", type_name(fn));
        return v_undef();
    }
    if (++J->depth > MAX_EVAL_DEPTH) {
        jfail(J, "calls nested too deep");
        return v_undef();
    }
    JVal r;
    if (fn.fn->kind == FN_MACRO)
        r = call_macro(J, fn.fn->macro, args, caller);
    else if (fn.fn->kind == FN_METHOD)
        r = call_method(J, fn.fn, args);
    else
        r = call_global(J, fn.fn, args);
    J->depth--;
    return r;
}

int push_kwargs(Jinja *J, JList *args, const JDict *kw) {
    JDict *d = jalloc(J, sizeof *d);
    if (!d) return -1;
    *d = *kw;
    list_push(J, args, (JVal){.t = JT_KWARGS, .d = d});
    return 0;
}

JVal eval_call(Jinja *J, const Node *n, Scope *sc) {
    JList args = {0};
    JDict kw = {0};
    eval_args(J, &n->list, sc, &args, &kw);
    if (J->failed) return v_undef();
    if (kw.n > 0 && push_kwargs(J, &args, &kw) != 0) return v_undef();
    JVal fn = eval(J, n->a, sc);
    if (J->failed) return fn;
    return call_function(J, fn, &args, sc);
}
