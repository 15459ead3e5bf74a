/* jinja_filters.c - `value | filter`, the ones the reference knows, with its
 * type rules: a filter it has no case for on a type is an error there, so it
 * is one here too (tests, `value is test`, are in jinja_tests.c). */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

static JVal fail_filter(Jinja *J, const char *name, JVal v) {
    jfail(J, "Cannot apply filter \"%s\" to type: %s", name, type_name(v));
    return v_undef();
}

static int string_cmp(const JStr *a, const JStr *b) {
    size_t n = a->len < b->len ? a->len : b->len;
    int c = memcmp(a->s, b->s, n);
    if (c) return c < 0 ? -1 : 1;
    return a->len < b->len ? -1 : a->len > b->len ? 1 : 0;
}

/* <0, 0, >0 as the reference orders a and b (numbers, then strings; UTF-8
 * bytes order as code points); fails J for values it cannot order. */
static int compare_values(Jinja *J, JVal a, JVal b) {
    if (a.t == JT_NONE && b.t == JT_NONE) return 0;
    if (a.t == JT_UNDEF && b.t == JT_UNDEF) return 0;
    if (a.t == JT_NONE || b.t == JT_NONE || a.t == JT_UNDEF || b.t == JT_UNDEF) {
        jfail(J, "Cannot compare %s with %s", type_name(a), type_name(b));
        return 0;
    }
    int an = a.t == JT_INT || a.t == JT_FLOAT || a.t == JT_BOOL,
        bn = b.t == JT_INT || b.t == JT_FLOAT || b.t == JT_BOOL;
    if (an && bn) {
        double x = a.t == JT_INT ? (double)a.i : a.t == JT_FLOAT ? a.f : a.b;
        double y = b.t == JT_INT ? (double)b.i : b.t == JT_FLOAT ? b.f : b.b;
        return x < y ? -1 : x > y ? 1 : 0;
    }
    if (a.t != b.t) {
        jfail(J, "Cannot compare different types: %s and %s", type_name(a), type_name(b));
        return 0;
    }
    if (a.t == JT_STR) return string_cmp(a.s, b.s);
    jfail(J, "Cannot compare type: %s", type_name(a));
    return 0;
}

void sort_by_keys(Jinja *J, JVal *v, int n, const JVal *keys, int case_sensitive, int reverse) {
    int *idx = jalloc(J, (size_t)(n ? n : 1) * sizeof *idx);
    JVal *tmp = jalloc(J, (size_t)(n ? n : 1) * sizeof *tmp);
    if (!idx || !tmp) return;
    for (int i = 0; i < n; i++) idx[i] = i;
    if (!case_sensitive) { /* the reference compares toLowerCase() of both */
        JVal *lowered = jalloc(J, (size_t)(n ? n : 1) * sizeof *lowered);
        if (!lowered) return;
        for (int i = 0; i < n && !J->failed; i++)
            lowered[i] = keys[i].t == JT_STR ? case_mapped(J, keys[i].s, 0, 0) : keys[i];
        keys = lowered;
    }
    for (int i = 1; i < n && !J->failed; i++)
        for (int j = i; j > 0; j--) {
            int c = compare_values(J, keys[idx[j - 1]], keys[idx[j]]);
            if (reverse) c = -c;
            if (c <= 0 || J->failed) break;
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
    for (int i = 0; i < n; i++) tmp[i] = v[idx[i]];
    memcpy(v, tmp, (size_t)n * sizeof *v);
}

static JVal copy_list(Jinja *J, JVal l) {
    JVal out = v_list(J, JT_LIST);
    for (int i = 0; out.l && i < l.l->n; i++) list_push(J, out.l, l.l->v[i]);
    return out;
}

/* An attribute path "a.b.0" of a dict (map and sort's attribute=). */
static JVal attribute_of(JVal item, const JStr *path) {
    const char *p = path->s, *end = path->s + path->len;
    JVal v = item;
    while (p <= end) {
        const char *dot = memchr(p, '.', (size_t)(end - p));
        size_t n = dot ? (size_t)(dot - p) : (size_t)(end - p);
        if (is_mapping(v) || v.t == JT_NS) {
            JVal *x = dict_get(v.d, p, n);
            if (!x) return v_undef();
            v = *x;
        } else if (is_list(v)) {
            char tmp[24];
            if (n == 0 || n >= sizeof tmp) return v_undef();
            memcpy(tmp, p, n);
            tmp[n] = '\0';
            char *e;
            long i = strtol(tmp, &e, 10);
            if (e == tmp || i < 0 || i >= v.l->n) return v_undef();
            v = v.l->v[i];
        } else {
            return v_undef();
        }
        if (!dot) break;
        p = dot + 1;
    }
    return v;
}

/* The text JavaScript's Array.join writes for an element's value. */
static void join_item(Jinja *J, JBuf *b, JVal v) {
    if (v.t == JT_NONE || v.t == JT_UNDEF) return;
    if (is_list(v)) {
        for (int i = 0; i < v.l->n; i++) {
            if (i) buf_put(J, b, ",", 1);
            buf_putz(J, b, "[object Object]");
        }
        return;
    }
    value_raw_string(J, b, v);
}

static JVal join(Jinja *J, JVal operand, const JStr *sep) {
    JBuf b = {0};
    if (operand.t == JT_STR) { /* code point by code point */
        for (size_t i = 0; i < operand.s->len; i++) {
            unsigned char c = (unsigned char)operand.s->s[i];
            if (i && (c & 0xc0) != 0x80 && sep) buf_put(J, &b, sep->s, sep->len);
            buf_put(J, &b, operand.s->s + i, 1);
        }
        return buf_value(J, &b);
    }
    for (int i = 0; i < operand.l->n; i++) {
        if (i && sep) buf_put(J, &b, sep->s, sep->len);
        join_item(J, &b, operand.l->v[i]);
    }
    return buf_value(J, &b);
}

static JVal indent(Jinja *J, const JStr *s, int64_t width, int first, int blank) {
    JBuf b = {0};
    size_t start = 0;
    for (int line = 0;; line++) {
        const char *nl = memchr(s->s + start, '\n', s->len - start);
        size_t end = nl ? (size_t)(nl - s->s) : s->len;
        if (!((!first && line == 0) || (!blank && end == start)))
            for (int64_t k = 0; k < width && !J->failed; k++) buf_put(J, &b, " ", 1);
        buf_put(J, &b, s->s + start, end - start);
        if (!nl) break;
        buf_put(J, &b, "\n", 1);
        start = end + 1;
    }
    return buf_value(J, &b);
}

/* JavaScript's parseInt(s, 10) and parseFloat(s); NaN -> fallback. */
static JVal parse_number(Jinja *J, const JStr *s, int integer, JVal fallback) {
    size_t i = js_trim_start(s->s, s->len);
    char tmp[64];
    size_t n = 0;
    while (i < s->len && n < sizeof tmp - 1 && strchr("+-0123456789.eE", s->s[i]) && s->s[i])
        tmp[n++] = s->s[i++];
    tmp[n] = '\0';
    char *end;
    if (integer) {
        long long v = strtol(tmp, &end, 10);
        return end == tmp ? fallback : v_int(v);
    }
    while (n > 0) { /* the longest prefix that is a number */
        double d = strtod(tmp, &end);
        if (end != tmp) return v_float(d);
        tmp[--n] = '\0';
    }
    (void)J;
    return fallback;
}

static JVal kwarg(const JDict *kw, const char *name) {
    JVal *v = dict_get(kw, name, strlen(name));
    return v ? *v : v_undef();
}

static JVal arg_or(const JList *pos, int i, const JDict *kw, const char *name, JVal fallback) {
    if (i >= 0 && i < pos->n) return pos->v[i];
    JVal v = kwarg(kw, name);
    return v.t == JT_UNDEF ? fallback : v;
}

/* The filters without arguments, by the operand's type: */

static JVal list_filter(Jinja *J, JVal v, const char *name) {
    if (!strcmp(name, "list")) return v;
    if (!strcmp(name, "first")) return v.l->n ? v.l->v[0] : v_undef();
    if (!strcmp(name, "last")) return v.l->n ? v.l->v[v.l->n - 1] : v_undef();
    if (!strcmp(name, "length")) return v_int(v.l->n);
    if (!strcmp(name, "reverse")) {
        JVal out = v_list(J, JT_LIST);
        for (int i = v.l->n - 1; out.l && i >= 0; i--) list_push(J, out.l, v.l->v[i]);
        return out;
    }
    if (!strcmp(name, "sort")) {
        JVal out = copy_list(J, v);
        if (out.l) sort_by_keys(J, out.l->v, out.l->n, out.l->v, 0, 0);
        return out;
    }
    if (!strcmp(name, "join")) return join(J, v, NULL);
    if (!strcmp(name, "string")) {
        JBuf b = {0};
        to_json(J, &b, v, NULL, 0, 0);
        return buf_value(J, &b);
    }
    if (!strcmp(name, "unique")) {
        JVal out = v_list(J, JT_LIST);
        for (int i = 0; out.l && i < v.l->n; i++) {
            int seen = 0;
            for (int j = 0; j < out.l->n && !seen; j++) seen = strict_equal(out.l->v[j], v.l->v[i]);
            if (!seen) list_push(J, out.l, v.l->v[i]);
        }
        return out;
    }
    jfail(J, "Unknown ArrayValue filter: %s", name);
    return v_undef();
}

static JVal string_filter(Jinja *J, JVal v, const char *name, Scope *sc) {
    static const char *const as_method[] = {"length", "upper", "lower", "title", "capitalize", NULL};
    for (int k = 0; as_method[k]; k++)
        if (!strcmp(name, as_method[k])) {
            JVal m = member_builtin(J, v, name, strlen(name));
            if (m.t != JT_FUNC) return m;
            JList none = {0};
            return call_function(J, m, &none, sc);
        }
    if (!strcmp(name, "trim")) {
        size_t a = js_trim_start(v.s->s, v.s->len), e = js_trim_end(v.s->s, v.s->len);
        return v_str(J, v.s->s + a, a < e ? e - a : 0);
    }
    if (!strcmp(name, "indent")) return indent(J, v.s, 4, 0, 0);
    if (!strcmp(name, "join") || !strcmp(name, "string")) return v;
    if (!strcmp(name, "int")) return parse_number(J, v.s, 1, v_int(0));
    if (!strcmp(name, "float")) return parse_number(J, v.s, 0, v_float(0));
    jfail(J, "Unknown StringValue filter: %s", name);
    return v_undef();
}

static JVal number_filter(Jinja *J, JVal v, const char *name) {
    if (!strcmp(name, "abs"))
        return v.t == JT_INT ? (v.i == INT64_MIN ? v_float(-(double)v.i) : v_int(v.i < 0 ? -v.i : v.i))
                             : v_float(v.f < 0 ? -v.f : v.f);
    if (!strcmp(name, "int")) {
        if (v.t == JT_INT) return v;
        if (!fits_int64(v.f)) return jfail(J, "int: %g is out of range", v.f), v_undef();
        double t = (double)(int64_t)v.f;
        return v_int((int64_t)(t > v.f ? t - 1 : t));
    }
    if (!strcmp(name, "float")) return v_float(v.t == JT_INT ? (double)v.i : v.f);
    if (!strcmp(name, "string")) {
        JBuf b = {0};
        value_print(J, &b, v);
        return buf_value(J, &b);
    }
    jfail(J, "Unknown NumericValue filter: %s", name);
    return v_undef();
}

static JVal mapping_filter(Jinja *J, JVal v, const char *name, Scope *sc) {
    if (!strcmp(name, "length")) return v_int(v.d->n);
    JVal m = member_builtin(J, v, name, strlen(name));
    if (m.t == JT_FUNC) {
        JList none = {0};
        return call_function(J, m, &none, sc);
    }
    if (m.t != JT_UNDEF) return m;
    jfail(J, "Unknown ObjectValue filter: %s", name);
    return v_undef();
}

static JVal bool_filter(Jinja *J, JVal v, const char *name) {
    if (!strcmp(name, "bool")) return v;
    if (!strcmp(name, "int")) return v_int(v.b);
    if (!strcmp(name, "float")) return v_float(v.b);
    if (!strcmp(name, "string")) return v_strz(J, v.b ? "true" : "false");
    jfail(J, "Unknown BooleanValue filter: %s", name);
    return v_undef();
}

static JVal plain_filter(Jinja *J, JVal v, const char *name, Scope *sc) {
    if (!strcmp(name, "safe")) return v;
    if (!strcmp(name, "tojson")) {
        JBuf b = {0};
        to_json(J, &b, v, NULL, 0, 1);
        return buf_value(J, &b);
    }
    if (is_list(v)) return list_filter(J, v, name);
    if (v.t == JT_STR) return string_filter(J, v, name, sc);
    if (v.t == JT_INT || v.t == JT_FLOAT) return number_filter(J, v, name);
    if (is_mapping(v)) return mapping_filter(J, v, name, sc);
    if (v.t == JT_BOOL) return bool_filter(J, v, name);
    return fail_filter(J, name, v);
}

static JVal tojson_filter(Jinja *J, JVal v, const JDict *kw) {
    JsonStyle st = {0, 0, 0, NULL, NULL};
    JVal ind = kwarg(kw, "indent"), ascii = kwarg(kw, "ensure_ascii"), sort = kwarg(kw, "sort_keys"),
         seps = kwarg(kw, "separators");
    if (ind.t == JT_INT)
        st.indent = ind.i > 0 && ind.i < 64 ? (int)ind.i : 0;
    else if (ind.t != JT_UNDEF && ind.t != JT_NONE)
        return jfail(J, "If set, indent must be a number"), v_undef();
    if (ascii.t == JT_BOOL)
        st.ensure_ascii = ascii.b;
    else if (ascii.t != JT_UNDEF)
        return jfail(J, "If set, ensure_ascii must be a boolean"), v_undef();
    if (sort.t == JT_BOOL)
        st.sort_keys = sort.b;
    else if (sort.t != JT_UNDEF)
        return jfail(J, "If set, sort_keys must be a boolean"), v_undef();
    if (is_list(seps)) {
        if (seps.l->n != 2 || seps.l->v[0].t != JT_STR || seps.l->v[1].t != JT_STR)
            return jfail(J, "separators must be a tuple of two strings"), v_undef();
        st.item_sep = seps.l->v[0].s->s;
        st.key_sep = seps.l->v[1].s->s;
    } else if (seps.t != JT_UNDEF && seps.t != JT_NONE) {
        return jfail(J, "If set, separators must be a tuple of two strings"), v_undef();
    }
    JBuf b = {0};
    to_json(J, &b, v, &st, 0, 1);
    return buf_value(J, &b);
}

static JVal select_attr(Jinja *J, JVal v, const Node *call, JList *pos, int select) {
    for (int i = 0; i < v.l->n; i++)
        if (!is_mapping(v.l->v[i]) && v.l->v[i].t != JT_NS)
            return jfail(J, "`%sattr` can only be applied to array of objects", select ? "select" : "reject"),
                   v_undef();
    for (int i = 0; i < call->list.n; i++)
        if (call->list.v[i]->type != N_STR)
            return jfail(J, "arguments of `%sattr` must be strings", select ? "select" : "reject"), v_undef();
    if (pos->n < 1) return jfail(J, "selectattr needs an attribute"), v_undef();
    JVal out = v_list(J, JT_LIST);
    for (int i = 0; out.l && i < v.l->n && !J->failed; i++) {
        JVal *a = dict_get(v.l->v[i].d, pos->v[0].s->s, pos->v[0].s->len);
        int result = 0;
        if (a) {
            if (pos->n >= 2) {
                JVal arg = pos->n >= 3 ? pos->v[2] : v_undef();
                const char *tn = pos->v[1].s->s;
                if (!strcmp(tn, "equalto") || !strcmp(tn, "eq"))
                    result = strict_equal(*a, arg) && a->t != JT_UNDEF;
                else if (run_test(J, tn, *a, &result) != 0)
                    return v_undef();
            } else {
                result = truthy(*a);
            }
        }
        if (result == select) list_push(J, out.l, v.l->v[i]);
    }
    return out;
}

/* sort(reverse, case_sensitive, attribute): stable, keys and values moved together. */
static JVal sort_filter(Jinja *J, JVal v, const JList *pos, const JDict *kw) {
    JVal rev = arg_or(pos, 0, kw, "reverse", v_bool(0)), cs = arg_or(pos, 1, kw, "case_sensitive", v_bool(0));
    JVal attr = arg_or(pos, 2, kw, "attribute", v_none());
    if (rev.t != JT_BOOL || cs.t != JT_BOOL)
        return jfail(J, "reverse and case_sensitive must be booleans"), v_undef();
    JVal out = copy_list(J, v);
    if (!out.l) return out;
    JVal *keys = jalloc(J, (size_t)(out.l->n ? out.l->n : 1) * sizeof *keys);
    if (!keys) return v_undef();
    for (int i = 0; i < out.l->n; i++) {
        if (attr.t == JT_NONE) {
            keys[i] = out.l->v[i];
        } else {
            char tmp[24];
            JStr *path = attr.t == JT_STR ? attr.s : NULL;
            if (attr.t == JT_INT) {
                snprintf(tmp, sizeof tmp, "%lld", (long long)attr.i);
                path = jstr(J, tmp, strlen(tmp));
            }
            if (!path) return jfail(J, "attribute must be a string, integer, or null"), v_undef();
            keys[i] = attribute_of(out.l->v[i], path);
        }
    }
    sort_by_keys(J, out.l->v, out.l->n, keys, cs.b, rev.b);
    return out;
}

/* map(attribute=..., default=...): each item's attribute. */
static JVal map_filter(Jinja *J, JVal v, const JDict *kw) {
    JVal attr = kwarg(kw, "attribute");
    if (attr.t == JT_UNDEF)
        return jfail(J, "`map` expressions without `attribute` set are not currently supported."), v_undef();
    if (attr.t != JT_STR) return jfail(J, "attribute must be a string"), v_undef();
    JVal dflt = kwarg(kw, "default");
    JVal out = v_list(J, JT_LIST);
    for (int i = 0; out.l && i < v.l->n; i++) {
        JVal item = v.l->v[i];
        if (!is_mapping(item) && item.t != JT_NS)
            return jfail(J, "items in map must be an object"), v_undef();
        JVal x = attribute_of(item, attr.s);
        list_push(J, out.l, x.t == JT_UNDEF ? dflt : x);
    }
    return out;
}

static JVal call_filter(Jinja *J, JVal v, const Node *call, Scope *sc) {
    if (call->a->type != N_IDENT) return jfail(J, "Unknown filter"), v_undef();
    const char *name = call->a->str->s;
    JList pos = {0};
    JDict kw = {0};
    eval_args(J, &call->list, sc, &pos, &kw);
    if (J->failed) return v_undef();
    if (!strcmp(name, "tojson")) return tojson_filter(J, v, &kw);
    if (!strcmp(name, "join")) {
        if (v.t != JT_STR && !is_list(v)) return fail_filter(J, name, v);
        JVal sep = arg_or(&pos, 0, &kw, "separator", v_undef());
        if (sep.t != JT_STR && sep.t != JT_UNDEF) return jfail(J, "separator must be a string"), v_undef();
        return join(J, v, sep.t == JT_STR ? sep.s : NULL);
    }
    if (!strcmp(name, "int") || !strcmp(name, "float")) {
        int integer = name[0] == 'i';
        JVal dflt = arg_or(&pos, 0, &kw, "default", integer ? v_int(0) : v_float(0));
        if (v.t == JT_STR) return parse_number(J, v.s, integer, dflt);
        if (v.t == JT_INT || v.t == JT_FLOAT) return v;
        if (v.t == JT_BOOL) return integer ? v_int(v.b) : v_float(v.b);
        return fail_filter(J, name, v);
    }
    if (!strcmp(name, "default")) {
        JVal dflt = pos.n > 0 ? pos.v[0] : v_strz(J, "");
        JVal boolean = arg_or(&pos, 1, &kw, "boolean", v_bool(0));
        if (boolean.t != JT_BOOL) return jfail(J, "`default` filter flag must be a boolean"), v_undef();
        return v.t == JT_UNDEF || (boolean.b && !truthy(v)) ? dflt : v;
    }
    if (is_list(v)) {
        if (!strcmp(name, "sort")) return sort_filter(J, v, &pos, &kw);
        if (!strcmp(name, "selectattr") || !strcmp(name, "rejectattr"))
            return select_attr(J, v, call, &pos, name[0] == 's');
        if (!strcmp(name, "map")) return map_filter(J, v, &kw);
        jfail(J, "Unknown ArrayValue filter: %s", name);
        return v_undef();
    }
    if (v.t == JT_STR) {
        if (!strcmp(name, "indent")) {
            JVal w = arg_or(&pos, 0, &kw, "width", v_int(4));
            if (w.t != JT_INT) return jfail(J, "width must be a number"), v_undef();
            JVal first = arg_or(&pos, 1, &kw, "first", v_bool(0)),
                 blank = arg_or(&pos, 2, &kw, "blank", v_bool(0));
            return indent(J, v.s, w.i > 4096 ? 4096 : w.i, truthy(first), truthy(blank));
        }
        if (!strcmp(name, "replace")) {
            JVal m = member_builtin(J, v, "replace", 7);
            if (push_kwargs(J, &pos, &kw) != 0) return v_undef();
            return call_function(J, m, &pos, sc);
        }
        jfail(J, "Unknown StringValue filter: %s", name);
        return v_undef();
    }
    if (is_mapping(v)) {
        JVal m = member_builtin(J, v, name, strlen(name));
        if (m.t == JT_FUNC) {
            if (kw.n > 0 && push_kwargs(J, &pos, &kw) != 0) return v_undef();
            return call_function(J, m, &pos, sc);
        }
        jfail(J, "Unknown ObjectValue filter: %s", name);
        return v_undef();
    }
    return fail_filter(J, name, v);
}

JVal apply_filter(Jinja *J, JVal operand, const Node *filter, Scope *sc) {
    if (filter->type == N_IDENT) return plain_filter(J, operand, filter->str->s, sc);
    if (filter->type == N_CALL) return call_filter(J, operand, filter, sc);
    jfail(J, "Unknown filter");
    return v_undef();
}
