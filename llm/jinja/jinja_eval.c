/* jinja_eval.c - expressions: scopes (a for loop and a macro call open one,
 * if does not), the reference's operator rules, members and slices, and
 * eval() over an expression node. Statements are in jinja_exec.c, calls in
 * jinja_call.c. Every node costs a step; steps and call depth are bounded. */
#include "lib/format.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

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

int eval_step(Jinja *J) {
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
        if (eval_step(J)) return v_undef();
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

static JVal test(Jinja *J, const Node *n, Scope *sc) {
    JVal v = eval(J, n->a, sc);
    if (J->failed) return v;
    int result;
    if (run_test(J, n->str->s, v, &result) != 0) return v_undef();
    return v_bool(n->flag ? !result : result);
}

JVal eval(Jinja *J, const Node *n, Scope *sc) {
    if (!n) return v_undef();
    if (eval_step(J)) return v_undef();
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
        r = eval_call(J, n, sc);
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
