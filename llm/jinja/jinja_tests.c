/* jinja_tests.c - `value is test`, the tests the reference knows, with its
 * type rules. */
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

/* The reference's str === str.toUpperCase() (or toLowerCase()). */
static int all_case(Jinja *J, const JStr *s, int upper) {
    JVal mapped = case_mapped(J, s, upper, 0);
    return mapped.t == JT_STR && mapped.s->len == s->len && !memcmp(mapped.s->s, s->s, s->len);
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
        *r = v.t == JT_STR && all_case(J, v.s, 0);
    else if (!strcmp(name, "upper"))
        *r = v.t == JT_STR && all_case(J, v.s, 1);
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
