/* jinja_exec.c - statements: set (names, tuples, namespace attributes),
 * for loops with their loop variable, macro definitions, and eval_block,
 * which writes a body's text and values into the output buffer. */
#include "lib/format.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

static void bind_target(Jinja *J, const Node *target, JVal v, Scope *sc, const char *what) {
    if (target->type == N_IDENT) {
        scope_set(J, sc, target->str, v);
        return;
    }
    /* a tuple of names */
    if (v.t != JT_LIST && !(v.t == JT_TUPLE && what[0] == 's')) {
        jfail(J, "Cannot unpack non-iterable type: %s", type_name(v));
        return;
    }
    if (v.l->n != target->list.n) {
        jfail(J, "Too %s items to unpack", target->list.n > v.l->n ? "few" : "many");
        return;
    }
    for (int i = 0; i < target->list.n; i++) {
        if (target->list.v[i]->type != N_IDENT) {
            jfail(J, "Cannot unpack to a non-identifier");
            return;
        }
        scope_set(J, sc, target->list.v[i]->str, v.l->v[i]);
    }
}

static void exec_set(Jinja *J, const Node *n, Scope *sc) {
    JVal rhs;
    if (n->b) {
        rhs = eval(J, n->b, sc);
    } else {
        JBuf b = {0};
        eval_block(J, &n->list, sc, &b);
        rhs = buf_value(J, &b);
    }
    if (J->failed) return;
    const Node *target = n->a;
    if (target->type == N_IDENT || target->type == N_TUPLE) {
        bind_target(J, target, rhs, sc, "set");
    } else if (target->type == N_MEMBER) {
        JVal obj = eval(J, target->a, sc);
        if (J->failed) return;
        if (obj.t != JT_NS) {
            jfail(J, "cannot assign attribute on non-namespace object");
            return;
        }
        if (target->flag || target->b->type != N_IDENT) {
            jfail(J, "Cannot assign to member with non-identifier property");
            return;
        }
        dict_set(J, obj.d, target->b->str, rhs);
    } else {
        jfail(J, "Invalid left-hand side of set");
    }
}

static void exec_for(Jinja *J, const Node *n, Scope *sc, JBuf *out) {
    Scope *scope = scope_new(J, sc);
    if (!scope) return;
    const Node *src = n->b, *filter = NULL;
    if (src->type == N_SELECT) {
        filter = src->b;
        src = src->a;
    }
    JVal it = eval(J, src, scope);
    if (J->failed) return;
    if (is_mapping(it)) {
        JVal keys = v_list(J, JT_LIST);
        for (int i = 0; keys.l && i < it.d->n; i++)
            list_push(J, keys.l, (JVal){.t = JT_STR, .s = it.d->k[i]});
        it = keys;
    }
    if (!is_list(it)) {
        jfail(J, "Expected iterable or object type in for loop: got %s", type_name(it));
        return;
    }
    JList items = {0};
    for (int i = 0; i < it.l->n && !J->failed; i++) {
        JVal cur = it.l->v[i];
        if (filter) {
            Scope *ls = scope_new(J, scope);
            bind_target(J, n->a, cur, ls, "for");
            JVal t = eval(J, filter, ls);
            if (J->failed || !truthy(t)) continue;
        } else if (n->a->type == N_TUPLE) {
            if (cur.t != JT_LIST) {
                jfail(J, "Cannot unpack non-iterable type: %s", type_name(cur));
                return;
            }
            if (cur.l->n != n->a->list.n) {
                jfail(J, "Too %s items to unpack", n->a->list.n > cur.l->n ? "few" : "many");
                return;
            }
        }
        list_push(J, &items, cur);
    }
    static const char *const names[9] = {"index", "index0", "revindex", "revindex0", "first",
                                         "last",  "length", "previtem", "nextitem"};
    JStr *keys[9], *loop_name = jstr(J, "loop", 4);
    for (int k = 0; k < 9; k++) keys[k] = jstr(J, names[k], strlen(names[k]));
    int any = 0;
    for (int i = 0; i < items.n && !J->failed; i++) {
        JVal loop = v_dict(J, JT_DICT);
        if (!loop.d) return;
        JVal vals[9] = {v_int(i + 1),
                        v_int(i),
                        v_int(items.n - i),
                        v_int(items.n - i - 1),
                        v_bool(i == 0),
                        v_bool(i == items.n - 1),
                        v_int(items.n),
                        i > 0 ? items.v[i - 1] : v_undef(),
                        i < items.n - 1 ? items.v[i + 1] : v_undef()};
        for (int k = 0; k < 9; k++) dict_set(J, loop.d, keys[k], vals[k]);
        scope_set(J, scope, loop_name, loop);
        bind_target(J, n->a, items.v[i], scope, "for");
        size_t mark = out->len;
        eval_block(J, &n->list, scope, out);
        if (J->ctrl != CTRL_NONE) {
            /* the reference drops what a broken-off iteration wrote */
            out->len = mark;
            if (out->s) out->s[mark] = '\0';
            Ctrl c = J->ctrl;
            J->ctrl = CTRL_NONE;
            if (c == CTRL_BREAK) break;
            continue;
        }
        any = 1;
    }
    if (!any && !J->failed) eval_block(J, &n->list2, scope, out);
}

static void exec_macro(Jinja *J, const Node *n, Scope *sc) {
    JFunc *f = jalloc(J, sizeof *f);
    if (!f) return;
    f->kind = FN_MACRO;
    f->macro = n;
    scope_set(J, sc, n->str, (JVal){.t = JT_FUNC, .fn = f});
}

void eval_block(Jinja *J, const NodeList *body, Scope *sc, JBuf *out) {
    if (++J->depth > MAX_EVAL_DEPTH) {
        jfail(J, "blocks nested too deep");
        return;
    }
    for (int i = 0; i < body->n && !J->failed && J->ctrl == CTRL_NONE; i++) {
        const Node *n = body->v[i];
        if (eval_step(J)) break;
        switch ((NodeType)n->type) {
        case N_IF: {
            JVal t = eval(J, n->a, sc);
            if (!J->failed) eval_block(J, truthy(t) ? &n->list : &n->list2, sc, out);
            break;
        }
        case N_FOR:
            exec_for(J, n, sc, out);
            break;
        case N_BREAK:
            J->ctrl = CTRL_BREAK;
            break;
        case N_CONTINUE:
            J->ctrl = CTRL_CONTINUE;
            break;
        case N_SET:
            exec_set(J, n, sc);
            break;
        case N_MACRO:
            exec_macro(J, n, sc);
            break;
        case N_COMMENT:
            break;
        case N_FILTER_BLOCK: {
            JBuf b = {0};
            eval_block(J, &n->list, sc, &b);
            JVal v = apply_filter(J, buf_value(J, &b), n->a, sc);
            if (!J->failed) value_print(J, out, v);
            break;
        }
        case N_STR:
            buf_put(J, out, n->str->s, n->str->len);
            break;
        default: {
            JVal v = eval(J, n, sc);
            if (!J->failed) value_print(J, out, v);
        }
        }
    }
    J->depth--;
}
