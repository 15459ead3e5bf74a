/* jinja_methods.c - what values answer to: string methods (strip, split,
 * replace, startswith, ...), dict methods (get, items, keys, values,
 * dictsort), .length, and the globals range(), namespace(),
 * raise_exception() and strftime_now(). */
#include "lib/format.h"
#include "lib/string.h"
#include "lib/utf8.h"
#include "llm/jinja/jinja_case.h"
#include "llm/jinja/jinja_internal.h"

static const char *const string_methods[] = {"upper",      "lower",  "strip",   "title",
                                             "capitalize", "rstrip", "lstrip",  "startswith",
                                             "endswith",   "split",  "replace", NULL};
static const char *const dict_methods[] = {"get", "items", "keys", "values", "dictsort", NULL};

static JVal bound(Jinja *J, JVal self, const char *name) {
    JFunc *f = jalloc(J, sizeof *f);
    if (!f) return v_undef();
    f->kind = FN_METHOD;
    f->name = name;
    f->self = self;
    return (JVal){.t = JT_FUNC, .fn = f};
}

JVal member_builtin(Jinja *J, JVal obj, const char *name, size_t len) {
    if (obj.t == JT_STR) {
        if (len == 6 && !memcmp(name, "length", 6)) return v_int((int64_t)utf16_length(obj.s->s, obj.s->len));
        for (int k = 0; string_methods[k]; k++)
            if (strlen(string_methods[k]) == len && !memcmp(string_methods[k], name, len))
                return bound(J, obj, string_methods[k]);
    } else if (is_list(obj)) {
        if (len == 6 && !memcmp(name, "length", 6)) return v_int(obj.l->n);
    } else if (is_mapping(obj)) {
        for (int k = 0; dict_methods[k]; k++)
            if (strlen(dict_methods[k]) == len && !memcmp(dict_methods[k], name, len))
                return bound(J, obj, dict_methods[k]);
    }
    return v_undef();
}

/* ------------------------------------------------------------ strings */
static char upper_ascii(char c) {
    return c >= 'a' && c <= 'z' ? (char)(c - 32) : c;
}
static int word_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

JVal case_mapped(Jinja *J, const JStr *s, int upper, int first_only) {
    char *out = jalloc(J, 3 * s->len + 1);
    if (!out) return v_undef();
    return v_str(J, out, jinja_case_map(s->s, s->len, upper, first_only, out));
}

static int has_prefix(const JStr *s, const JStr *p, int at_end) {
    if (p->len > s->len) return 0;
    return memcmp(s->s + (at_end ? s->len - p->len : 0), p->s, p->len) == 0;
}

static JVal starts_or_ends(Jinja *J, const JStr *s, const JList *a, int at_end) {
    const char *m = at_end ? "endswith" : "startswith";
    if (a->n == 0) return jfail(J, "%s() requires at least one argument", m), v_undef();
    JVal p = a->v[0];
    if (p.t == JT_STR) return v_bool(has_prefix(s, p.s, at_end));
    if (is_list(p)) {
        for (int i = 0; i < p.l->n; i++) {
            if (p.l->v[i].t != JT_STR) return jfail(J, "%s() tuple elements must be strings", m), v_undef();
            if (has_prefix(s, p.l->v[i].s, at_end)) return v_bool(1);
        }
        return v_bool(0);
    }
    return jfail(J, "%s() argument must be a string or tuple of strings", m), v_undef();
}

static JVal split(Jinja *J, const JStr *s, const JList *a) {
    JVal sep = a->n > 0 ? a->v[0] : v_none(), maxv = a->n > 1 ? a->v[1] : v_int(-1);
    if (sep.t != JT_STR && sep.t != JT_NONE)
        return jfail(J, "sep argument must be a string or null"), v_undef();
    if (maxv.t != JT_INT) return jfail(J, "maxsplit argument must be a number"), v_undef();
    int64_t max = maxv.i;
    JVal out = v_list(J, JT_LIST);
    if (!out.l) return out;
    if (sep.t == JT_NONE) {
        size_t i = js_trim_start(s->s, s->len), n;
        const char *t = s->s + i;
        size_t len = s->len - i, k = 0;
        while (k < len) {
            while (k < len && (n = js_space_at(t + k, len - k)) > 0) k += n;
            if (k >= len) break;
            size_t start = k;
            while (k < len && js_space_at(t + k, len - k) == 0) k++;
            if (max != -1 && out.l->n >= max) {
                list_push(J, out.l, v_str(J, t + start, len - start));
                break;
            }
            list_push(J, out.l, v_str(J, t + start, k - start));
        }
        return out;
    }
    if (sep.s->len == 0) return jfail(J, "empty separator"), v_undef();
    size_t start = 0;
    for (size_t i = 0; i + sep.s->len <= s->len;) {
        if (memcmp(s->s + i, sep.s->s, sep.s->len) == 0) {
            if (max != -1 && out.l->n >= max) break; /* the rest joins back into one */
            list_push(J, out.l, v_str(J, s->s + start, i - start));
            i += sep.s->len;
            start = i;
        } else {
            i++;
        }
    }
    list_push(J, out.l, v_str(J, s->s + start, s->len - start));
    return out;
}

static JVal replace(Jinja *J, const JStr *s, const JList *a) {
    if (a->n < 2) return jfail(J, "replace() requires at least two arguments"), v_undef();
    JVal from = a->v[0], to = a->v[1], count = v_none();
    if (from.t != JT_STR || to.t != JT_STR) return jfail(J, "replace() arguments must be strings"), v_undef();
    if (a->n > 2) {
        if (a->v[2].t == JT_KWARGS) {
            JVal *c = dict_get(a->v[2].d, "count", 5);
            count = c ? *c : v_none();
        } else {
            count = a->v[2];
        }
    }
    if (count.t != JT_INT && count.t != JT_NONE && count.t != JT_UNDEF)
        return jfail(J, "replace() count argument must be a number or null"), v_undef();
    if (count.t == JT_INT && count.i == 0) return (JVal){.t = JT_STR, .s = (JStr *)s};
    int64_t left = count.t == JT_INT && count.i > 0 ? count.i : -1;
    JBuf b = {0};
    size_t i = 0;
    if (from.s->len == 0) { /* an empty pattern matches at every code point boundary */
        for (;;) {
            if (left != 0) {
                buf_put(J, &b, to.s->s, to.s->len);
                if (left > 0) left--;
            }
            if (i >= s->len) break;
            size_t n = 1;
            while (i + n < s->len && ((unsigned char)s->s[i + n] & 0xc0) == 0x80) n++;
            buf_put(J, &b, s->s + i, n);
            i += n;
        }
        return buf_value(J, &b);
    }
    while (i < s->len) {
        if (left != 0 && i + from.s->len <= s->len && memcmp(s->s + i, from.s->s, from.s->len) == 0) {
            buf_put(J, &b, to.s->s, to.s->len);
            i += from.s->len;
            if (left > 0) left--;
        } else {
            buf_put(J, &b, s->s + i, 1);
            i++;
        }
    }
    return buf_value(J, &b);
}

static JVal string_method(Jinja *J, const JStr *s, const char *name, const JList *a) {
    size_t lead = js_trim_start(s->s, s->len), end = js_trim_end(s->s, s->len);
    if (!strcmp(name, "upper")) return case_mapped(J, s, 1, 0);
    if (!strcmp(name, "lower")) return case_mapped(J, s, 0, 0);
    if (!strcmp(name, "strip")) return v_str(J, s->s + lead, lead < end ? end - lead : 0);
    if (!strcmp(name, "lstrip")) return v_str(J, s->s + lead, s->len - lead);
    if (!strcmp(name, "rstrip")) return v_str(J, s->s, end);
    if (!strcmp(name, "title")) {
        JVal r = v_str(J, s->s, s->len);
        for (size_t i = 0; r.t == JT_STR && i < r.s->len; i++)
            if (word_char(r.s->s[i]) && (i == 0 || !word_char(r.s->s[i - 1])))
                r.s->s[i] = upper_ascii(r.s->s[i]);
        return r;
    }
    if (!strcmp(name, "capitalize")) {
        /* The reference upper-cases charAt(0), a UTF-16 unit: a code point
         * past U+FFFF (a surrogate pair) stays as it is. */
        uint32_t first = 0;
        if (s->len) utf8_decode(s->s, s->len, &first);
        return first > 0xFFFF ? v_str(J, s->s, s->len) : case_mapped(J, s, 1, 1);
    }
    if (!strcmp(name, "startswith")) return starts_or_ends(J, s, a, 0);
    if (!strcmp(name, "endswith")) return starts_or_ends(J, s, a, 1);
    if (!strcmp(name, "split")) return split(J, s, a);
    if (!strcmp(name, "replace")) return replace(J, s, a);
    return v_undef();
}

/* ------------------------------------------------------------ dicts */
static JVal pairs(Jinja *J, const JDict *d, int what) { /* 0 items, 1 keys, 2 values */
    JVal out = v_list(J, JT_LIST);
    for (int i = 0; out.l && i < d->n; i++) {
        JVal k = {.t = JT_STR, .s = d->k[i]};
        if (what == 1) {
            list_push(J, out.l, k);
        } else if (what == 2) {
            list_push(J, out.l, d->v[i]);
        } else {
            JVal p = v_list(J, JT_LIST);
            list_push(J, p.l, k);
            list_push(J, p.l, d->v[i]);
            list_push(J, out.l, p);
        }
    }
    return out;
}

static JVal dictsort(Jinja *J, const JDict *d, const JList *a) {
    const JDict *kw = NULL;
    int npos = a->n;
    if (npos && a->v[npos - 1].t == JT_KWARGS) kw = a->v[--npos].d;
    JVal cs = npos > 0 ? a->v[0] : v_bool(0), by = npos > 1 ? a->v[1] : v_undef(),
         rev = npos > 2 ? a->v[2] : v_bool(0);
    JVal *x;
    if (npos <= 0 && kw && (x = dict_get(kw, "case_sensitive", 14))) cs = *x;
    if (npos <= 1 && kw && (x = dict_get(kw, "by", 2))) by = *x;
    if (npos <= 2 && kw && (x = dict_get(kw, "reverse", 7))) rev = *x;
    if (cs.t != JT_BOOL) return jfail(J, "case_sensitive must be a boolean"), v_undef();
    if (by.t == JT_UNDEF) by = v_strz(J, "key");
    if (by.t != JT_STR) return jfail(J, "by must be a string"), v_undef();
    if (strcmp(by.s->s, "key") && strcmp(by.s->s, "value"))
        return jfail(J, "by must be either 'key' or 'value'"), v_undef();
    if (rev.t != JT_BOOL) return jfail(J, "reverse must be a boolean"), v_undef();
    int index = by.s->s[0] == 'v';
    JVal out = pairs(J, d, 0);
    if (!out.l) return out;
    JVal *keys = jalloc(J, (size_t)(out.l->n ? out.l->n : 1) * sizeof *keys);
    if (!keys) return v_undef();
    for (int i = 0; i < out.l->n; i++) keys[i] = out.l->v[i].l->v[index];
    sort_by_keys(J, out.l->v, out.l->n, keys, cs.b, rev.b);
    return out;
}

static JVal dict_method(Jinja *J, const JDict *d, const char *name, const JList *a) {
    if (!strcmp(name, "get")) {
        JVal key = a->n > 0 ? a->v[0] : v_undef();
        if (key.t != JT_STR)
            return jfail(J, "Object key must be a string: got %s", type_name(key)), v_undef();
        JVal *v = dict_get(d, key.s->s, key.s->len);
        if (v) return *v;
        return a->n > 1 ? a->v[1] : v_none();
    }
    if (!strcmp(name, "items")) return pairs(J, d, 0);
    if (!strcmp(name, "keys")) return pairs(J, d, 1);
    if (!strcmp(name, "values")) return pairs(J, d, 2);
    if (!strcmp(name, "dictsort")) return dictsort(J, d, a);
    return v_undef();
}

JVal call_method(Jinja *J, JFunc *fn, JList *args) {
    if (fn->self.t == JT_STR) return string_method(J, fn->self.s, fn->name, args);
    return dict_method(J, fn->self.d, fn->name, args);
}

/* ------------------------------------------------------------ globals */
static JVal range(Jinja *J, const JList *a) {
    if (a->n < 1 || a->n > 3) return jfail(J, "range() takes 1 to 3 integers"), v_undef();
    for (int i = 0; i < a->n; i++)
        if (a->v[i].t != JT_INT) return jfail(J, "range() takes integers"), v_undef();
    int64_t start = 0, stop, step = 1;
    if (a->n == 1) {
        stop = a->v[0].i;
    } else {
        start = a->v[0].i;
        stop = a->v[1].i;
        if (a->n == 3) step = a->v[2].i;
    }
    if (step == 0) return jfail(J, "range() step must not be zero"), v_undef();
    JVal out = v_list(J, JT_LIST);
    for (int64_t i = start; out.l && !J->failed && (step > 0 ? i < stop : i > stop);) {
        if (++J->steps > J->max_steps)
            return jfail(J, "the template ran more than %lu steps", J->max_steps), v_undef();
        list_push(J, out.l, v_int(i));
        if (__builtin_add_overflow(i, step, &i)) break;
    }
    return out;
}

static JVal namespace_of(Jinja *J, const JList *a) {
    int npos = a->n;
    const JDict *kw = NULL;
    if (npos && a->v[npos - 1].t == JT_KWARGS) kw = a->v[--npos].d;
    if (npos > 1) return jfail(J, "namespace expected at most 1 argument, got %d", npos), v_undef();
    JVal ns = v_dict(J, JT_NS);
    if (!ns.d) return ns;
    if (npos == 1) {
        JVal src = a->v[0];
        if (is_mapping(src)) {
            for (int i = 0; i < src.d->n; i++) dict_set(J, ns.d, src.d->k[i], src.d->v[i]);
        } else if (is_list(src)) {
            for (int i = 0; i < src.l->n; i++) {
                JVal p = src.l->v[i];
                if (!is_list(p) || p.l->n != 2 || p.l->v[0].t != JT_STR)
                    return jfail(J, "namespace expected an object or an iterable of [key, value] pairs"),
                           v_undef();
                dict_set(J, ns.d, p.l->v[0].s, p.l->v[1]);
            }
        } else {
            return jfail(J, "'%s' object is not iterable", type_name(src)), v_undef();
        }
    }
    for (int i = 0; kw && i < kw->n; i++) dict_set(J, ns.d, kw->k[i], kw->v[i]);
    return ns;
}

static JVal strftime_now(Jinja *J, const JList *a) {
    static const char *const months[] = {"January",   "February", "March",    "April",
                                         "May",       "June",     "July",     "August",
                                         "September", "October",  "November", "December"};
    if (a->n < 1 || a->v[0].t != JT_STR) return jfail(J, "strftime_now() takes a format string"), v_undef();
    const JStr *f = a->v[0].s;
    const JinjaDate *d = &J->now;
    int m = d->month >= 1 && d->month <= 12 ? d->month - 1 : 0;
    JBuf b = {0};
    char tmp[16];
    for (size_t i = 0; i < f->len; i++) {
        if (f->s[i] != '%' || i + 1 >= f->len || !strchr("YmdbBHM%", f->s[i + 1]) || !f->s[i + 1]) {
            buf_put(J, &b, f->s + i, 1);
            continue;
        }
        char c = f->s[++i];
        if (c == 'Y')
            snprintf(tmp, sizeof tmp, "%d", d->year);
        else if (c == 'm')
            snprintf(tmp, sizeof tmp, "%02d", m + 1);
        else if (c == 'd')
            snprintf(tmp, sizeof tmp, "%02d", d->day);
        else if (c == 'H')
            snprintf(tmp, sizeof tmp, "%02d", d->hour);
        else if (c == 'M')
            snprintf(tmp, sizeof tmp, "%02d", d->minute);
        else if (c == 'b')
            snprintf(tmp, sizeof tmp, "%.3s", months[m]);
        else if (c == 'B')
            snprintf(tmp, sizeof tmp, "%s", months[m]);
        else
            snprintf(tmp, sizeof tmp, "%%");
        buf_putz(J, &b, tmp);
    }
    return buf_value(J, &b);
}

JVal call_global(Jinja *J, JFunc *fn, JList *args) {
    switch (fn->kind) {
    case FN_RANGE:
        return range(J, args);
    case FN_NAMESPACE:
        return namespace_of(J, args);
    case FN_STRFTIME:
        return strftime_now(J, args);
    case FN_RAISE: {
        JBuf b = {0};
        if (args->n > 0 && args->v[0].t != JT_KWARGS) value_raw_string(J, &b, args->v[0]);
        jfail(J, "raise_exception: %s", b.s ? b.s : "");
        return v_undef();
    }
    default:
        return v_undef();
    }
}

static void set_global(Jinja *J, Scope *sc, const char *name, JVal v) {
    scope_set(J, sc, jstr(J, name, strlen(name)), v);
}

static void set_function(Jinja *J, Scope *sc, const char *name, JFuncKind kind) {
    JFunc *f = jalloc(J, sizeof *f);
    if (!f) return;
    f->kind = kind;
    set_global(J, sc, name, (JVal){.t = JT_FUNC, .fn = f});
}

void install_globals(Jinja *J, Scope *sc) {
    set_global(J, sc, "true", v_bool(1));
    set_global(J, sc, "false", v_bool(0));
    set_global(J, sc, "none", v_none());
    set_global(J, sc, "True", v_bool(1));
    set_global(J, sc, "False", v_bool(0));
    set_global(J, sc, "None", v_none());
    set_function(J, sc, "namespace", FN_NAMESPACE);
    set_function(J, sc, "raise_exception", FN_RAISE);
    set_function(J, sc, "range", FN_RANGE);
    set_function(J, sc, "strftime_now", FN_STRFTIME);
}
