/* jinja_value.c - the values a template computes with: making them,
 * lists and ordered dicts, truth, JavaScript's equality, and how a value
 * prints. */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

JStr *jstr(Jinja *J, const char *s, size_t len) {
    JStr *r = jalloc(J, sizeof *r + len + 1);
    if (!r) return NULL;
    r->len = len;
    if (len) memcpy(r->s, s, len);
    r->s[len] = '\0';
    return r;
}

JVal v_undef(void) {
    JVal v = {.t = JT_UNDEF};
    return v;
}
JVal v_none(void) {
    JVal v = {.t = JT_NONE};
    return v;
}
JVal v_bool(int b) {
    JVal v = {.t = JT_BOOL, .b = !!b};
    return v;
}
JVal v_int(int64_t i) {
    JVal v = {.t = JT_INT, .i = i};
    return v;
}
JVal v_float(double f) {
    JVal v = {.t = JT_FLOAT, .f = f};
    return v;
}
JVal v_str(Jinja *J, const char *s, size_t len) {
    JVal v = {.t = JT_STR, .s = jstr(J, s, len)};
    return v.s ? v : v_undef();
}
JVal v_strz(Jinja *J, const char *s) {
    return v_str(J, s, strlen(s));
}

JVal v_list(Jinja *J, JType t) {
    JVal v = {.t = (uint8_t)t, .l = jalloc(J, sizeof(JList))};
    return v.l ? v : v_undef();
}

JVal v_dict(Jinja *J, JType t) {
    JVal v = {.t = (uint8_t)t, .d = jalloc(J, sizeof(JDict))};
    return v.d ? v : v_undef();
}

void list_push(Jinja *J, JList *l, JVal v) {
    if (!l) return;
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 4;
        JVal *nv = jalloc(J, (size_t)cap * sizeof *nv);
        if (!nv) return;
        if (l->n) memcpy(nv, l->v, (size_t)l->n * sizeof *nv);
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n++] = v;
}

JVal *dict_get(const JDict *d, const char *k, size_t len) {
    if (!d) return NULL;
    for (int i = 0; i < d->n; i++)
        if (d->k[i]->len == len && memcmp(d->k[i]->s, k, len) == 0) return &d->v[i];
    return NULL;
}

void dict_set(Jinja *J, JDict *d, JStr *k, JVal v) {
    if (!d || !k) return;
    JVal *old = dict_get(d, k->s, k->len);
    if (old) {
        *old = v;
        return;
    }
    if (d->n == d->cap) {
        int cap = d->cap ? d->cap * 2 : 4;
        JStr **nk = jalloc(J, (size_t)cap * sizeof *nk);
        JVal *nv = jalloc(J, (size_t)cap * sizeof *nv);
        if (!nk || !nv) return;
        if (d->n) {
            memcpy(nk, d->k, (size_t)d->n * sizeof *nk);
            memcpy(nv, d->v, (size_t)d->n * sizeof *nv);
        }
        d->k = nk;
        d->v = nv;
        d->cap = cap;
    }
    d->k[d->n] = k;
    d->v[d->n++] = v;
}

int is_list(JVal v) {
    return v.t == JT_LIST || v.t == JT_TUPLE;
}
int is_mapping(JVal v) {
    return v.t == JT_DICT || v.t == JT_KWARGS;
}

int truthy(JVal v) {
    switch (v.t) {
    case JT_BOOL:
        return v.b;
    case JT_INT:
        return v.i != 0;
    case JT_FLOAT:
        return v.f != 0 && v.f == v.f;
    case JT_STR:
        return v.s->len > 0;
    case JT_LIST:
    case JT_TUPLE:
        return v.l->n > 0;
    case JT_DICT:
    case JT_KWARGS:
        return v.d->n > 0;
    case JT_NS:
    case JT_FUNC:
        return 1;
    default:
        return 0;
    }
}

static int is_number(JVal v) {
    return v.t == JT_INT || v.t == JT_FLOAT || v.t == JT_BOOL;
}
static double number_of(JVal v) {
    return v.t == JT_INT ? (double)v.i : v.t == JT_FLOAT ? v.f : (double)v.b;
}

/* JavaScript's ToNumber on a string: white space around a decimal number,
 * empty is 0, anything else NaN. */
static double string_number(const JStr *s) {
    size_t a = js_trim_start(s->s, s->len), e = js_trim_end(s->s, s->len);
    if (a >= e) return 0;
    char tmp[64];
    if (e - a >= sizeof tmp) return 0.0 / 0.0;
    memcpy(tmp, s->s + a, e - a);
    tmp[e - a] = '\0';
    char *end;
    double d = strtod(tmp, &end);
    return *end ? 0.0 / 0.0 : d;
}

int strict_equal(JVal a, JVal b) {
    int an = a.t == JT_INT || a.t == JT_FLOAT, bn = b.t == JT_INT || b.t == JT_FLOAT;
    if (an && bn) return number_of(a) == number_of(b);
    /* none is JavaScript's undefined in the reference, like a missing value */
    if ((a.t == JT_NONE || a.t == JT_UNDEF) && (b.t == JT_NONE || b.t == JT_UNDEF)) return 1;
    if (a.t != b.t) return 0;
    switch (a.t) {
    case JT_BOOL:
        return a.b == b.b;
    case JT_STR:
        return a.s->len == b.s->len && memcmp(a.s->s, b.s->s, a.s->len) == 0;
    case JT_LIST:
    case JT_TUPLE:
        return a.l == b.l;
    case JT_DICT:
    case JT_NS:
    case JT_KWARGS:
        return a.d == b.d;
    case JT_FUNC:
        return a.fn == b.fn;
    default:
        return 0;
    }
}

int loose_equal(JVal a, JVal b) {
    int an = a.t == JT_NONE || a.t == JT_UNDEF, bn = b.t == JT_NONE || b.t == JT_UNDEF;
    if (an || bn) return an && bn;
    if (is_number(a) && is_number(b)) return number_of(a) == number_of(b);
    if (is_number(a) && b.t == JT_STR) return number_of(a) == string_number(b.s);
    if (a.t == JT_STR && is_number(b)) return string_number(a.s) == number_of(b);
    return strict_equal(a, b);
}

const char *type_name(JVal v) {
    static const char *const names[] = {
        "UndefinedValue",        "NullValue",    "BooleanValue", "IntegerValue", "FloatValue",
        "StringValue",           "ArrayValue",   "TupleValue",   "ObjectValue",  "NamespaceValue",
        "KeywordArgumentsValue", "FunctionValue"};
    return v.t < sizeof names / sizeof names[0] ? names[v.t] : "?";
}

void buf_put(Jinja *J, JBuf *b, const char *s, size_t len) {
    if (J->failed || len == 0) return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        while (cap < b->len + len + 1) cap *= 2;
        char *ns = jalloc(J, cap);
        if (!ns) return;
        if (b->len) memcpy(ns, b->s, b->len);
        b->s = ns;
        b->cap = cap;
    }
    memcpy(b->s + b->len, s, len);
    b->len += len;
    b->s[b->len] = '\0';
}

void buf_putz(Jinja *J, JBuf *b, const char *s) {
    buf_put(J, b, s, strlen(s));
}

JVal buf_value(Jinja *J, const JBuf *b) {
    return v_str(J, b->s ? b->s : "", b->len);
}

/* Booleans, integers, floats and strings read the same wherever they are
 * printed, but for floats: {{ }} keeps Python's "1.0", JavaScript's String()
 * (~, +, tojson) writes "1". Returns 0 for other types. */
int scalar_text(Jinja *J, JBuf *b, JVal v, int python_float) {
    char num[64];
    switch (v.t) {
    case JT_BOOL:
        buf_putz(J, b, v.b ? "true" : "false");
        return 1;
    case JT_INT:
        snprintf(num, sizeof num, "%lld", (long long)v.i);
        buf_putz(J, b, num);
        return 1;
    case JT_FLOAT:
        if (python_float)
            js_float(v.f, num, sizeof num);
        else
            js_number(v.f, num, sizeof num);
        buf_putz(J, b, num);
        return 1;
    case JT_STR:
        buf_put(J, b, v.s->s, v.s->len);
        return 1;
    default:
        return 0;
    }
}

void value_print(Jinja *J, JBuf *b, JVal v) {
    if (v.t == JT_UNDEF || v.t == JT_NONE || scalar_text(J, b, v, 1)) return;
    if (v.t == JT_FUNC)
        jfail(J, "cannot print a function");
    else
        to_json(J, b, v, NULL, 0, 0);
}

void value_raw_string(Jinja *J, JBuf *b, JVal v) {
    if (scalar_text(J, b, v, 0)) return;
    switch (v.t) {
    case JT_LIST:
    case JT_TUPLE: /* a JavaScript array of objects */
        for (int i = 0; i < v.l->n; i++) buf_putz(J, b, i ? ",[object Object]" : "[object Object]");
        return;
    case JT_DICT:
    case JT_KWARGS:
    case JT_NS:
        buf_putz(J, b, "[object Map]");
        return;
    default:
        jfail(J, "cannot convert %s to a string", type_name(v));
        return;
    }
}
