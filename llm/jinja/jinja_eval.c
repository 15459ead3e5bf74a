/* jinja_eval.c - runs the syntax tree: scopes (a for loop and a macro call
 * open one, if does not), statements writing into an output buffer, and
 * expressions with the reference's operator rules. Every node costs a step;
 * steps and call depth are bounded. */
#include "lib/format.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

#define MAX_EVAL_DEPTH 160

Scope *scope_new(Jinja *J, Scope *parent) {
    Scope *s = jalloc(J, sizeof *s);
    if (s) s->parent = parent;
    return s;
}

void scope_set(Jinja *J, Scope *sc, JStr *name, JVal v) {
    if (sc) dict_set(J, &sc->vars, name, v);
}

static JVal lookup(Scope *sc, const JStr *name) {
    for (; sc; sc = sc->parent) {
        JVal *v = dict_get(&sc->vars, name->s, name->len);
        if (v) return *v;
    }
    return v_undef();
}

static int step(Jinja *J) {
    if (J->failed) return -1;
    if (++J->steps > J->max_steps) {
        jfail(J, "the template ran more than %lu steps", J->max_steps);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ operators */
static int numeric(JVal v) {
    return v.t == JT_INT || v.t == JT_FLOAT;
}
static double num(JVal v) {
    return v.t == JT_INT ? (double)v.i : v.t == JT_FLOAT ? v.f : (double)v.b;
}

static double js_floor(double x) {
    if (!fits_int64(x)) return x; /* beyond 2^53 every double is integral */
    double t = (double)(int64_t)x;
    return t > x ? t - 1 : t;
}

static double js_fmod(double a, double b) {
    if (b == 0) return 0.0 / 0.0;
    double q = a / b;
    q = q < 0 ? -js_floor(-q) : js_floor(q); /* truncated */
    return a - q * b;
}

static double js_pow(double a, double b) {
    if (integral(b) && b >= 0 && b < 4096) {
        double r = 1;
        for (int64_t k = 0; k < (int64_t)b; k++) r *= a;
        return r;
    }
    if (integral(b) && b < 0 && b > -4096) {
        double r = 1;
        for (int64_t k = 0; k < (int64_t)-b; k++) r *= a;
        return 1 / r;
    }
    return 0.0 / 0.0; /* fractional powers: not in chat templates */
}

static JVal arith(Jinja *J, Op op, JVal l, JVal r) {
    int is_float = l.t == JT_FLOAT || r.t == JT_FLOAT;
    double a = num(l), b = num(r), res;
    if (!is_float && (op == OP_ADD || op == OP_SUB || op == OP_MUL)) {
        int64_t x;
        int over = op == OP_ADD   ? __builtin_add_overflow(l.i, r.i, &x)
                   : op == OP_SUB ? __builtin_sub_overflow(l.i, r.i, &x)
                                  : __builtin_mul_overflow(l.i, r.i, &x);
        if (!over) return v_int(x);
    }
    switch (op) {
    case OP_ADD:
        res = a + b;
        break;
    case OP_SUB:
        res = a - b;
        break;
    case OP_MUL:
        res = a * b;
        break;
    case OP_DIV:
        return v_float(a / b);
    case OP_FLOORDIV:
        if (!is_float && b != 0 && r.i != -1) { /* INT64_MIN / -1 would trap */
            int64_t q = l.i / r.i;
            if ((l.i % r.i != 0) && ((l.i < 0) != (r.i < 0))) q--;
            return v_int(q);
        }
        res = js_floor(a / b);
        break;
    case OP_MOD:
        if (!is_float && b != 0)
            return v_int(r.i == -1 ? 0 : l.i % r.i); /* JavaScript: the dividend's sign */
        res = js_fmod(a, b);
        break;
    case OP_LT:
        return v_bool(a < b);
    case OP_GT:
        return v_bool(a > b);
    case OP_LE:
        return v_bool(a <= b);
    case OP_GE:
        return v_bool(a >= b);
    default:
        return v_undef();
    }
    if (!is_float && integral(res)) return v_int((int64_t)res);
    (void)J;
    return v_float(res);
}

static const char *op_name(Op op) {
    static const char *const names[] = {"?", "+", "-",  "~",  "*",  "/",      "//",  "%",  "**",  "==", "!=",
                                        "<", ">", "<=", ">=", "in", "not in", "and", "or", "not", "-",  "+"};
    return op < sizeof names / sizeof names[0] ? names[op] : "?";
}

static JVal concat_strings(Jinja *J, JVal l, JVal r) {
    JBuf b = {0};
    value_raw_string(J, &b, l);
    value_raw_string(J, &b, r);
    return buf_value(J, &b);
}

static JVal binary(Jinja *J, const Node *n, Scope *sc) {
    Op op = (Op)n->op;
    JVal l = eval(J, n->a, sc);
    if (J->failed) return l;
    if (op == OP_AND) return truthy(l) ? eval(J, n->b, sc) : l;
    if (op == OP_OR) return truthy(l) ? l : eval(J, n->b, sc);
    JVal r = eval(J, n->b, sc);
    if (J->failed) return r;
    if (op == OP_EQ) return v_bool(loose_equal(l, r));
    if (op == OP_NE) return v_bool(!loose_equal(l, r));
    if (l.t == JT_UNDEF || r.t == JT_UNDEF) {
        if (r.t == JT_UNDEF && (op == OP_IN || op == OP_NOT_IN)) return v_bool(op == OP_NOT_IN);
        jfail(J, "Cannot perform operation %s on undefined values", op_name(op));
        return v_undef();
    }
    if (l.t == JT_NONE || r.t == JT_NONE) {
        jfail(J, "Cannot perform operation on null values");
        return v_undef();
    }
    if (op == OP_CONCAT) return concat_strings(J, l, r);
    int ln = numeric(l) || l.t == JT_BOOL, rn = numeric(r) || r.t == JT_BOOL;
    if (op == OP_POW && ln && rn) {
        double a = num(l), b = num(r);
        if (a == 0 && b < 0) {
            jfail(J, "0.0 cannot be raised to a negative power");
            return v_undef();
        }
        double res = js_pow(a, b);
        if (res != res || res - res != 0) {
            jfail(J, "Exponentiation result is not a finite real number");
            return v_undef();
        }
        if (l.t == JT_FLOAT || r.t == JT_FLOAT || b < 0 || res > 9e18 || res < -9e18) return v_float(res);
        return v_int((int64_t)res);
    }
    if (numeric(l) && numeric(r)) {
        JVal v = arith(J, op, l, r);
        if (v.t != JT_UNDEF) return v;
    } else if (is_list(l) && is_list(r)) {
        if (op == OP_ADD) {
            JVal out = v_list(J, JT_LIST);
            for (int i = 0; out.l && i < l.l->n; i++) list_push(J, out.l, l.l->v[i]);
            for (int i = 0; out.l && i < r.l->n; i++) list_push(J, out.l, r.l->v[i]);
            return out;
        }
    } else if (is_list(r)) {
        int member = 0;
        for (int i = 0; i < r.l->n && !member; i++) member = strict_equal(r.l->v[i], l);
        if (op == OP_IN) return v_bool(member);
        if (op == OP_NOT_IN) return v_bool(!member);
    }
    if ((l.t == JT_STR || r.t == JT_STR) && op == OP_ADD) return concat_strings(J, l, r);
    if (l.t == JT_STR && r.t == JT_STR && (op == OP_IN || op == OP_NOT_IN)) {
        int found = l.s->len == 0;
        for (size_t i = 0; !found && i + l.s->len <= r.s->len; i++)
            found = memcmp(r.s->s + i, l.s->s, l.s->len) == 0;
        return v_bool(op == OP_IN ? found : !found);
    }
    if (l.t == JT_STR && is_mapping(r) && (op == OP_IN || op == OP_NOT_IN)) {
        int has = dict_get(r.d, l.s->s, l.s->len) != NULL;
        return v_bool(op == OP_IN ? has : !has);
    }
    jfail(J, "Unknown operator \"%s\" between %s and %s", op_name(op), type_name(l), type_name(r));
    return v_undef();
}

static JVal unary(Jinja *J, const Node *n, Scope *sc) {
    JVal v = eval(J, n->a, sc);
    if (J->failed) return v;
    if (n->op == OP_NOT) return v_bool(!truthy(v));
    int neg = n->op == OP_NEG;
    if (v.t == JT_FLOAT) return v_float(neg ? -v.f : v.f);
    if (v.t == JT_INT) return neg && v.i == INT64_MIN ? v_float(-(double)v.i) : v_int(neg ? -v.i : v.i);
    if (v.t == JT_BOOL) return v_int(neg ? -v.b : v.b);
    jfail(J, "Unknown operator \"%s\" for %s", neg ? "-" : "+", type_name(v));
    return v_undef();
}

/* ------------------------------------------------------------ members */
static JVal slice(Jinja *J, JVal obj, const Node *s, Scope *sc) {
    if (!is_list(obj) && obj.t != JT_STR) {
        jfail(J, "Slice object must be an array or string");
        return v_undef();
    }
    JVal part[3];
    const Node *nodes[3] = {s->a, s->b, s->c};
    for (int k = 0; k < 3; k++) {
        part[k] = nodes[k] ? eval(J, nodes[k], sc) : v_undef();
        if (J->failed) return v_undef();
        if (part[k].t != JT_INT && part[k].t != JT_UNDEF) {
            jfail(J, "Slice indices must be integers");
            return v_undef();
        }
    }
    /* a string slices by code points */
    int64_t len = 0;
    size_t *at = NULL;
    if (obj.t == JT_STR) {
        at = jalloc(J, (obj.s->len + 1) * sizeof *at);
        if (!at) return v_undef();
        for (size_t i = 0; i < obj.s->len; i++)
            if (((unsigned char)obj.s->s[i] & 0xc0) != 0x80) at[len++] = i;
        at[len] = obj.s->len;
    } else {
        len = obj.l->n;
    }
    int64_t stepv = part[2].t == JT_INT ? part[2].i : 1, start, stop;
    int dir = stepv > 0 ? 1 : stepv < 0 ? -1 : 0;
    if (dir >= 0) {
        start = part[0].t == JT_INT ? part[0].i : 0;
        stop = part[1].t == JT_INT ? part[1].i : len;
        start = start < 0 ? (len + start > 0 ? len + start : 0) : (start < len ? start : len);
        stop = stop < 0 ? (len + stop > 0 ? len + stop : 0) : (stop < len ? stop : len);
    } else {
        start = part[0].t == JT_INT ? part[0].i : len - 1;
        stop = part[1].t == JT_INT ? part[1].i : -1;
        start = start < 0 ? (len + start > -1 ? len + start : -1) : (start < len - 1 ? start : len - 1);
        stop = stop < -1 ? (len + stop > -1 ? len + stop : -1) : (stop < len - 1 ? stop : len - 1);
    }
    JVal out = obj.t == JT_STR ? v_undef() : v_list(J, JT_LIST);
    JBuf b = {0};
    for (int64_t i = start; dir > 0 ? i < stop : dir < 0 && i > stop;) {
        if (step(J)) return v_undef();
        if (obj.t == JT_STR)
            buf_put(J, &b, obj.s->s + at[i], at[i + 1] - at[i]);
        else
            list_push(J, out.l, obj.l->v[i]);
        if (__builtin_add_overflow(i, stepv, &i)) break;
    }
    return obj.t == JT_STR ? buf_value(J, &b) : out;
}

/* The UTF-16 unit at index i (negative: from the end), as JavaScript's at(). */
static JVal string_at(Jinja *J, const JStr *s, int64_t i) {
    int64_t units = (int64_t)utf16_length(s->s, s->len);
    if (i < 0) i += units;
    if (i < 0 || i >= units) return v_undef();
    int64_t u = 0;
    for (size_t k = 0; k < s->len;) {
        unsigned char c = (unsigned char)s->s[k];
        size_t n = c < 0x80 ? 1 : c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
        if (k + n > s->len) n = 1;
        int w = n == 4 ? 2 : 1;
        if (i < u + w) return w == 2 ? v_str(J, "\xef\xbf\xbd", 3) : v_str(J, s->s + k, n);
        u += w;
        k += n;
    }
    return v_undef();
}

static JVal member(Jinja *J, const Node *n, Scope *sc) {
    JVal obj = eval(J, n->a, sc);
    if (J->failed) return obj;
    JVal prop;
    if (n->flag) {
        if (n->b->type == N_SLICE) return slice(J, obj, n->b, sc);
        prop = eval(J, n->b, sc);
        if (J->failed) return prop;
    } else if (n->b->type == N_INT) {
        prop = v_int(n->b->ival);
    } else {
        prop = (JVal){.t = JT_STR, .s = n->b->str};
    }
    if (is_mapping(obj) || obj.t == JT_NS) {
        if (prop.t != JT_STR) {
            jfail(J, "Cannot access property with non-string: got %s", type_name(prop));
            return v_undef();
        }
        JVal *v = dict_get(obj.d, prop.s->s, prop.s->len);
        if (v) return *v;
        return obj.t == JT_NS ? v_undef() : member_builtin(J, obj, prop.s->s, prop.s->len);
    }
    if (is_list(obj) || obj.t == JT_STR) {
        if (prop.t == JT_INT) {
            if (obj.t == JT_STR) return string_at(J, obj.s, prop.i);
            int64_t i = prop.i < 0 ? prop.i + obj.l->n : prop.i;
            return i >= 0 && i < obj.l->n ? obj.l->v[i] : v_undef();
        }
        if (prop.t == JT_STR) return member_builtin(J, obj, prop.s->s, prop.s->len);
        jfail(J, "Cannot access property with non-string/non-number: got %s", type_name(prop));
        return v_undef();
    }
    if (prop.t != JT_STR) {
        jfail(J, "Cannot access property with non-string: got %s", type_name(prop));
        return v_undef();
    }
    return v_undef();
}

/* ------------------------------------------------------------ calls */
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

static JVal call(Jinja *J, const Node *n, Scope *sc) {
    JList args = {0};
    JDict kw = {0};
    eval_args(J, &n->list, sc, &args, &kw);
    if (J->failed) return v_undef();
    if (kw.n > 0) {
        JDict *d = jalloc(J, sizeof *d);
        if (!d) return v_undef();
        *d = kw;
        list_push(J, &args, (JVal){.t = JT_KWARGS, .d = d});
    }
    JVal fn = eval(J, n->a, sc);
    if (J->failed) return fn;
    return call_function(J, fn, &args, sc);
}

static JVal test(Jinja *J, const Node *n, Scope *sc) {
    JVal v = eval(J, n->a, sc);
    if (J->failed) return v;
    int result;
    if (run_test(J, n->str->s, v, &result) != 0) return v_undef();
    return v_bool(n->flag ? !result : result);
}

JVal eval(Jinja *J, const Node *n, Scope *sc) {
    if (!n) return v_undef();
    if (step(J)) return v_undef();
    if (++J->depth > MAX_EVAL_DEPTH) {
        jfail(J, "expressions nested too deep");
        return v_undef();
    }
    JVal r = v_undef();
    switch ((NodeType)n->type) {
    case N_INT:
        r = v_int(n->ival);
        break;
    case N_FLOAT:
        r = v_float(n->fval);
        break;
    case N_STR:
        r = (JVal){.t = JT_STR, .s = n->str};
        break;
    case N_ARRAY:
    case N_TUPLE:
        r = v_list(J, n->type == N_ARRAY ? JT_LIST : JT_TUPLE);
        for (int i = 0; i < n->list.n && !J->failed; i++) list_push(J, r.l, eval(J, n->list.v[i], sc));
        break;
    case N_OBJECT:
        r = v_dict(J, JT_DICT);
        for (int i = 0; i < n->list.n && !J->failed; i++) {
            JVal k = eval(J, n->list.v[i], sc);
            if (!J->failed && k.t != JT_STR) jfail(J, "Object keys must be strings: got %s", type_name(k));
            JVal v = eval(J, n->list2.v[i], sc);
            if (!J->failed) dict_set(J, r.d, k.s, v);
        }
        break;
    case N_IDENT:
        r = lookup(sc, n->str);
        break;
    case N_MEMBER:
        r = member(J, n, sc);
        break;
    case N_CALL:
        r = call(J, n, sc);
        break;
    case N_UNARY:
        r = unary(J, n, sc);
        break;
    case N_BINARY:
        r = binary(J, n, sc);
        break;
    case N_FILTER: {
        JVal operand = eval(J, n->a, sc);
        if (!J->failed) r = apply_filter(J, operand, n->b, sc);
        break;
    }
    case N_TEST:
        r = test(J, n, sc);
        break;
    case N_SELECT: {
        JVal t = eval(J, n->b, sc);
        if (!J->failed && truthy(t)) r = eval(J, n->a, sc);
        break;
    }
    case N_TERNARY: {
        JVal t = eval(J, n->a, sc);
        if (!J->failed) r = eval(J, truthy(t) ? n->b : n->c, sc);
        break;
    }
    default:
        jfail(J, "a statement where an expression belongs");
        break;
    }
    J->depth--;
    return J->failed ? v_undef() : r;
}

/* ------------------------------------------------------------ statements */
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
        if (step(J)) break;
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
