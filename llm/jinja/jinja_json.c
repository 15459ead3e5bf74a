/* jinja_json.c - JSON both ways: the `tojson` filter (and how containers
 * print) with JSON.stringify's escapes and the reference's spacing, and the
 * parser that turns the context (messages, options) into values. */
#include "lib/format.h"
#include "lib/stdlib.h"
#include "lib/string.h"
#include "lib/utf8.h"
#include "llm/jinja/jinja_internal.h"

static void put_escape_u(Jinja *J, JBuf *b, unsigned u) {
    char tmp[8];
    snprintf(tmp, sizeof tmp, "\\u%04x", u & 0xffff);
    buf_put(J, b, tmp, 6);
}

static size_t quote_to(Jinja *J, JBuf *b, const char *s, size_t len, int ensure_ascii) {
    buf_put(J, b, "\"", 1);
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        const char *esc = NULL;
        switch (c) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        default:
            break;
        }
        if (esc) {
            buf_putz(J, b, esc);
            i++;
        } else if (c < 0x20 || (ensure_ascii && c == 0x7f)) {
            put_escape_u(J, b, c);
            i++;
        } else if (c < 0x80 || !ensure_ascii) {
            buf_put(J, b, s + i, 1);
            i++;
        } else {
            uint32_t cp;
            int n = utf8_decode(s + i, len - i, &cp);
            if (n <= 0) { /* not UTF-8: kept as it is */
                buf_put(J, b, s + i, 1);
                i++;
                continue;
            }
            if (cp >= 0x10000) {
                put_escape_u(J, b, 0xd800 + ((cp - 0x10000) >> 10));
                put_escape_u(J, b, 0xdc00 + ((cp - 0x10000) & 0x3ff));
            } else {
                put_escape_u(J, b, cp);
            }
            i += (size_t)n;
        }
    }
    buf_put(J, b, "\"", 1);
    return b->len;
}

size_t jinja_json_quote(const char *s, size_t len, char *dst, size_t room) {
    size_t o = 0;
    char tmp[8];
#define PUT(str, n)                                                                                          \
    do {                                                                                                     \
        for (size_t k_ = 0; k_ < (n); k_++, o++)                                                             \
            if (o + 1 < room) dst[o] = (str)[k_];                                                            \
    } while (0)
    PUT("\"", 1);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)c;
            PUT(tmp, 2);
        } else if (c < 0x20) {
            snprintf(tmp, sizeof tmp, "\\u%04x", c);
            PUT(tmp, 6);
        } else {
            PUT((const char *)&s[i], 1);
        }
    }
    PUT("\"", 1);
#undef PUT
    if (room) dst[o < room ? o : room - 1] = '\0';
    return o;
}

static void put_indent(Jinja *J, JBuf *b, int indent, int depth) {
    buf_put(J, b, "\n", 1);
    for (int i = 0; i < indent * depth; i++) buf_put(J, b, " ", 1);
}

void to_json(Jinja *J, JBuf *b, JVal v, const JsonStyle *st, int depth, int undefined_as_null) {
    static const JsonStyle plain = {0, 0, 0, NULL, NULL};
    if (!st) st = &plain;
    if (J->failed) return;
    if (depth > JINJA_MAX_DEPTH) {
        jfail(J, "tojson: nested too deep");
        return;
    }
    const char *item_sep = st->item_sep ? st->item_sep : st->indent ? "," : ", ";
    const char *key_sep = st->key_sep ? st->key_sep : ": ";
    switch (v.t) {
    case JT_NONE:
        buf_putz(J, b, "null");
        return;
    case JT_UNDEF:
        buf_putz(J, b, undefined_as_null ? "null" : "undefined");
        return;
    case JT_BOOL:
    case JT_INT:
        scalar_text(J, b, v, 0);
        return;
    case JT_FLOAT:
        if (v.f != v.f || v.f - v.f != 0) /* NaN and infinities */
            buf_putz(J, b, "null");
        else
            scalar_text(J, b, v, 0);
        return;
    case JT_STR:
        quote_to(J, b, v.s->s, v.s->len, st->ensure_ascii);
        return;
    case JT_LIST:
        buf_put(J, b, "[", 1);
        for (int i = 0; i < v.l->n; i++) {
            if (i) buf_putz(J, b, item_sep);
            if (st->indent) put_indent(J, b, st->indent, depth + 1);
            to_json(J, b, v.l->v[i], st, depth + 1, undefined_as_null);
        }
        if (st->indent && v.l->n) put_indent(J, b, st->indent, depth);
        buf_put(J, b, "]", 1);
        return;
    case JT_DICT:
    case JT_NS: {
        int n = v.d->n;
        int *order = jalloc(J, (size_t)(n ? n : 1) * sizeof *order);
        if (!order) return;
        for (int i = 0; i < n; i++) order[i] = i;
        if (st->sort_keys) /* insertion sort by bytes (the reference: localeCompare) */
            for (int i = 1; i < n; i++)
                for (int j = i; j > 0; j--) {
                    const JStr *x = v.d->k[order[j - 1]], *y = v.d->k[order[j]];
                    if (strcmp(x->s, y->s) <= 0) break;
                    int t = order[j];
                    order[j] = order[j - 1];
                    order[j - 1] = t;
                }
        buf_put(J, b, "{", 1);
        for (int i = 0; i < n; i++) {
            if (i) buf_putz(J, b, item_sep);
            if (st->indent) put_indent(J, b, st->indent, depth + 1);
            const JStr *k = v.d->k[order[i]];
            quote_to(J, b, k->s, k->len, st->ensure_ascii);
            buf_putz(J, b, key_sep);
            to_json(J, b, v.d->v[order[i]], st, depth + 1, undefined_as_null);
        }
        if (st->indent && n) put_indent(J, b, st->indent, depth);
        buf_put(J, b, "}", 1);
        return;
    }
    default:
        jfail(J, "Cannot convert to JSON: %s", type_name(v));
        return;
    }
}

/* ------------------------------------------------------------ parsing */
typedef struct {
    Jinja *J;
    const char *s;
    size_t len, i;
    int depth;
} JsonIn;

static void ws(JsonIn *in) {
    while (in->i < in->len &&
           (in->s[in->i] == ' ' || in->s[in->i] == '\t' || in->s[in->i] == '\n' || in->s[in->i] == '\r'))
        in->i++;
}

static JVal bad(JsonIn *in, const char *what) {
    jfail(in->J, "context JSON: %s at byte %zu", what, in->i);
    return v_undef();
}

static int hex4(JsonIn *in, unsigned *u) {
    if (in->len - in->i < 4) return -1;
    *u = 0;
    for (int k = 0; k < 4; k++) {
        char c = in->s[in->i++];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0) return -1;
        *u = *u * 16 + (unsigned)d;
    }
    return 0;
}

static JStr *json_string(JsonIn *in) {
    JBuf b = {0};
    in->i++; /* the opening quote */
    while (in->i < in->len && in->s[in->i] != '"') {
        char c = in->s[in->i++];
        if ((unsigned char)c < 0x20) {
            bad(in, "control character in a string");
            return NULL;
        }
        if (c != '\\') {
            buf_put(in->J, &b, &c, 1);
            continue;
        }
        if (in->i >= in->len) break;
        char e = in->s[in->i++];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (simple && e) {
            static const char out[] = "\"\\/\b\f\n\r\t";
            buf_put(in->J, &b, &out[simple - "\"\\/bfnrt"], 1);
            continue;
        }
        unsigned u, lo;
        if (e != 'u' || hex4(in, &u) != 0) {
            bad(in, "bad escape");
            return NULL;
        }
        uint32_t cp = u;
        if (u >= 0xd800 && u < 0xdc00 && in->len - in->i >= 6 && in->s[in->i] == '\\' &&
            in->s[in->i + 1] == 'u') {
            size_t save = in->i;
            in->i += 2;
            if (hex4(in, &lo) == 0 && lo >= 0xdc00 && lo < 0xe000)
                cp = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
            else
                in->i = save;
        }
        char enc[4];
        int n;
        if (cp >= 0xd800 && cp < 0xe000) { /* a lone surrogate: WTF-8 */
            enc[0] = (char)(0xe0 | (cp >> 12));
            enc[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
            enc[2] = (char)(0x80 | (cp & 0x3f));
            n = 3;
        } else {
            n = utf8_encode(cp, enc);
        }
        buf_put(in->J, &b, enc, (size_t)n);
    }
    if (in->i >= in->len) {
        bad(in, "unterminated string");
        return NULL;
    }
    in->i++;
    return jstr(in->J, b.s ? b.s : "", b.len);
}

static JVal json_value(JsonIn *in);

static JVal json_number(JsonIn *in) {
    char tmp[64];
    size_t n = 0;
    while (in->i < in->len && n < sizeof tmp - 1 && strchr("+-0123456789.eE", in->s[in->i]) && in->s[in->i])
        tmp[n++] = in->s[in->i++];
    tmp[n] = '\0';
    char *end;
    double d = strtod(tmp, &end);
    if (n == 0 || *end) return bad(in, "bad number");
    /* JavaScript has one number type; the reference calls integral ones integers */
    if (integral(d)) return v_int((int64_t)d);
    return v_float(d);
}

/* Past a list's or dict's opening bracket: 0 past the closing one too (it
 * is empty), else 1 (an item follows). */
static int opened(JsonIn *in, char close) {
    in->i++;
    ws(in);
    if (in->i < in->len && in->s[in->i] == close) {
        in->i++;
        return 0;
    }
    return 1;
}

/* After a list's or dict's item: 1 past a ',' (another item follows), 0
 * past the closing bracket, -1 at anything else. */
static int next_item(JsonIn *in, char close) {
    ws(in);
    if (in->i < in->len && in->s[in->i] == ',') {
        in->i++;
        return 1;
    }
    if (in->i < in->len && in->s[in->i] == close) {
        in->i++;
        return 0;
    }
    return -1;
}

static JVal json_value(JsonIn *in) {
    Jinja *J = in->J;
    ws(in);
    if (in->i >= in->len) return bad(in, "unexpected end");
    if (++in->depth > JINJA_MAX_DEPTH) return bad(in, "nested too deep");
    JVal r;
    char c = in->s[in->i];
    if (c == '{') {
        r = v_dict(J, JT_DICT);
        for (int more = opened(in, '}'); more;) {
            ws(in);
            if (in->i >= in->len || in->s[in->i] != '"') return bad(in, "expected a key");
            JStr *k = json_string(in);
            ws(in);
            if (!k || in->i >= in->len || in->s[in->i] != ':') return bad(in, "expected ':'");
            in->i++;
            JVal v = json_value(in);
            if (J->failed) return v;
            dict_set(J, r.d, k, v);
            more = next_item(in, '}');
            if (more < 0) return bad(in, "expected ',' or '}'");
        }
    } else if (c == '[') {
        r = v_list(J, JT_LIST);
        for (int more = opened(in, ']'); more;) {
            JVal v = json_value(in);
            if (J->failed) return v;
            list_push(J, r.l, v);
            more = next_item(in, ']');
            if (more < 0) return bad(in, "expected ',' or ']'");
        }
    } else if (c == '"') {
        JStr *s = json_string(in);
        r = s ? (JVal){.t = JT_STR, .s = s} : v_undef();
    } else if (in->len - in->i >= 4 && memcmp(in->s + in->i, "true", 4) == 0) {
        in->i += 4;
        r = v_bool(1);
    } else if (in->len - in->i >= 5 && memcmp(in->s + in->i, "false", 5) == 0) {
        in->i += 5;
        r = v_bool(0);
    } else if (in->len - in->i >= 4 && memcmp(in->s + in->i, "null", 4) == 0) {
        in->i += 4;
        r = v_none();
    } else {
        r = json_number(in);
    }
    in->depth--;
    return r;
}

JVal json_parse(Jinja *J, const char *s, size_t len) {
    JsonIn in = {J, s, len, 0, 0};
    JVal v = json_value(&in);
    ws(&in);
    if (!J->failed && in.i != len) return bad(&in, "trailing text");
    return v;
}
