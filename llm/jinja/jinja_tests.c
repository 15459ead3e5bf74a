/* jinja_tests.c - `value is test`, the tests the reference knows, with its
 * type rules. */
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

static int all_case(const JStr *s, int upper) {
    for (size_t i = 0; i < s->len; i++) {
        char c = s->s[i];
        if (upper ? (c >= 'a' && c <= 'z') : (c >= 'A' && c <= 'Z')) return 0;
    }
    return 1;
}

int run_test(Jinja *J, const char *name, JVal v, int *r) {
    if (!strcmp(name, "boolean"))
        *r = v.t == JT_BOOL;
    else if (!strcmp(name, "callable"))
        *r = v.t == JT_FUNC;
    else if (!strcmp(name, "odd") || !strcmp(name, "even")) {
        if (v.t != JT_INT) return jfail(J, "cannot %s on %s", name, type_name(v)), -1;
        *r = (v.i % 2 != 0) == (name[0] == 'o');
    } else if (!strcmp(name, "false"))
        *r = v.t == JT_BOOL && !v.b;
    else if (!strcmp(name, "true"))
        *r = v.t == JT_BOOL && v.b;
    else if (!strcmp(name, "none"))
        *r = v.t == JT_NONE;
    else if (!strcmp(name, "string"))
        *r = v.t == JT_STR;
    else if (!strcmp(name, "number"))
        *r = v.t == JT_INT || v.t == JT_FLOAT;
    else if (!strcmp(name, "integer"))
        *r = v.t == JT_INT;
    else if (!strcmp(name, "iterable"))
        *r = v.t == JT_LIST || v.t == JT_STR;
    else if (!strcmp(name, "mapping"))
        *r = is_mapping(v);
    else if (!strcmp(name, "sequence"))
        *r = is_list(v) || is_mapping(v) || v.t == JT_STR;
    else if (!strcmp(name, "lower"))
        *r = v.t == JT_STR && all_case(v.s, 0);
    else if (!strcmp(name, "upper"))
        *r = v.t == JT_STR && all_case(v.s, 1);
    else if (!strcmp(name, "defined"))
        *r = v.t != JT_UNDEF;
    else if (!strcmp(name, "undefined"))
        *r = v.t == JT_UNDEF;
    else if (!strcmp(name, "equalto") || !strcmp(name, "eq"))
        *r = v.t == JT_UNDEF; /* the reference compares with undefined */
    else
        return jfail(J, "Unknown test: %s", name), -1;
    return 0;
}
