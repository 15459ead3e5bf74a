/* jinja_internal.h - the engine's shared types: the arena, values, tokens,
 * the syntax tree and the renderer's state. One rendering owns one Jinja
 * (struct), everything hangs off its arena. */
#ifndef LLM_JINJA_INTERNAL_H
#define LLM_JINJA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "llm/jinja/jinja.h"

#define JINJA_MAX_DEPTH 48 /* parser nesting and call depth: bounds the C stack */

/* ------------------------------------------------------------ arena */
typedef struct ArenaChunk ArenaChunk;
typedef struct {
    ArenaChunk *head;
    size_t used, limit;
} Arena;

/* ------------------------------------------------------------ values */
typedef enum {
    JT_UNDEF, /* a missing variable or attribute: prints nothing */
    JT_NONE,
    JT_BOOL,
    JT_INT,
    JT_FLOAT,
    JT_STR,
    JT_LIST,
    JT_TUPLE,  /* a list that tojson, `is iterable` and unpacking refuse, as in the reference */
    JT_DICT,   /* insertion-ordered */
    JT_NS,     /* namespace(): a dict whose attributes `set` may assign */
    JT_KWARGS, /* keyword arguments handed to a function */
    JT_FUNC,
} JType;

typedef struct JStr {
    size_t len;
    char s[]; /* NUL-terminated */
} JStr;

typedef struct JVal JVal;
typedef struct JList JList;
typedef struct JDict JDict;
typedef struct JFunc JFunc;

struct JVal {
    uint8_t t;
    union {
        int b;
        int64_t i;
        double f;
        JStr *s;
        JList *l;
        JDict *d;
        JFunc *fn;
    };
};

struct JList {
    int n, cap;
    JVal *v;
};

struct JDict {
    int n, cap;
    JStr **k;
    JVal *v;
};

typedef enum {
    FN_RANGE,
    FN_NAMESPACE,
    FN_RAISE,
    FN_STRFTIME,
    FN_METHOD, /* a string's or dict's method, bound to self */
    FN_MACRO,
} JFuncKind;

typedef struct Node Node;
struct JFunc {
    JFuncKind kind;
    const char *name; /* FN_METHOD */
    JVal self;
    const Node *macro;
};

/* ------------------------------------------------------------ tokens */
typedef enum {
    TK_TEXT,
    TK_NUMBER,
    TK_STRING,
    TK_IDENT,
    TK_EQUALS,
    TK_LPAREN,
    TK_RPAREN,
    TK_OPEN_STMT,
    TK_CLOSE_STMT,
    TK_OPEN_EXPR,
    TK_CLOSE_EXPR,
    TK_LBRACKET,
    TK_RBRACKET,
    TK_LBRACE,
    TK_RBRACE,
    TK_COMMA,
    TK_DOT,
    TK_COLON,
    TK_PIPE,
    TK_ADDITIVE,       /* + - ~ */
    TK_MULTIPLICATIVE, /* * / // % */
    TK_POWER,          /* ** */
    TK_COMPARISON,     /* < > <= >= == != */
    TK_UNARY,          /* a sign no operand precedes */
    TK_COMMENT,
} TokenType;

typedef struct {
    TokenType type;
    const char *s; /* arena text */
    size_t len;
} Token;

/* ------------------------------------------------------------ syntax tree */
typedef enum {
    /* statements */
    N_IF,
    N_FOR,
    N_BREAK,
    N_CONTINUE,
    N_SET,
    N_MACRO,
    N_COMMENT,
    N_FILTER_BLOCK,
    /* expressions */
    N_INT,
    N_FLOAT,
    N_STR, /* also template text */
    N_ARRAY,
    N_TUPLE,
    N_OBJECT, /* list: keys, list2: values */
    N_IDENT,
    N_MEMBER, /* a.b (flag 0) or a[b] (flag 1) */
    N_SLICE,  /* a, b, c: start, stop, step (NULL: absent) */
    N_CALL,   /* a(list) */
    N_UNARY,
    N_BINARY,
    N_FILTER, /* a | b, b an N_IDENT or an N_CALL */
    N_TEST,   /* a is [not](flag) str */
    N_SELECT, /* a if b */
    N_TERNARY,
    N_KWARG,  /* str = a */
    N_SPREAD, /* *a */
    N_KWSPREAD,
} NodeType;

typedef enum {
    OP_NONE,
    OP_ADD,
    OP_SUB,
    OP_CONCAT,
    OP_MUL,
    OP_DIV,
    OP_FLOORDIV,
    OP_MOD,
    OP_POW,
    OP_EQ,
    OP_NE,
    OP_LT,
    OP_GT,
    OP_LE,
    OP_GE,
    OP_IN,
    OP_NOT_IN,
    OP_AND,
    OP_OR,
    OP_NOT,
    OP_NEG,
    OP_POS,
} Op;

typedef struct {
    Node **v;
    int n;
} NodeList;

struct Node {
    uint8_t type, op, flag;
    JStr *str;
    int64_t ival;
    double fval;
    Node *a, *b, *c;
    NodeList list, list2; /* bodies, arguments, elements; list2: else / values */
};

/* ------------------------------------------------------------ renderer */
typedef struct Scope Scope;
struct Scope {
    Scope *parent;
    JDict vars;
};

typedef struct {
    char *s;
    size_t len, cap;
} JBuf;

typedef enum { CTRL_NONE, CTRL_BREAK, CTRL_CONTINUE } Ctrl;

typedef struct Jinja {
    Arena arena;
    int failed;
    char err[200];
    unsigned long steps, max_steps;
    int depth;
    Ctrl ctrl;
    JinjaDate now;
} Jinja;

/* Whether d converts to int64_t without undefined behaviour. */
static inline int fits_int64(double d) {
    return d > -9.2e18 && d < 9.2e18;
}
/* d as an integer, when it is one that fits. */
static inline int integral(double d) {
    return fits_int64(d) && d == (double)(int64_t)d;
}

/* jinja_arena.c */
void arena_init(Arena *a, size_t limit);
void arena_free(Arena *a);
void *jalloc(Jinja *J, size_t size); /* zeroed; NULL (and J failed) past the limit */
void jfail(Jinja *J, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* jinja_text.c: UTF-8 text with JavaScript's rules */
size_t js_space_at(const char *s, size_t len);     /* bytes of the \s character at s, 0 if none */
size_t js_space_before(const char *s, size_t len); /* bytes of the \s character ending at s+len */
size_t js_trim_start(const char *s, size_t len);   /* bytes of leading \s */
size_t js_trim_end(const char *s, size_t len);     /* length without trailing \s */
size_t utf16_length(const char *s, size_t len);
void js_number(double v, char *out, size_t size); /* String(v) */
void js_float(double v, char *out, size_t size);  /* FloatValue: 1.0, -0.0, 0.5 */

/* jinja_value.c */
JStr *jstr(Jinja *J, const char *s, size_t len);
JVal v_undef(void);
JVal v_none(void);
JVal v_bool(int b);
JVal v_int(int64_t i);
JVal v_float(double f);
JVal v_str(Jinja *J, const char *s, size_t len);
JVal v_strz(Jinja *J, const char *s);
JVal v_list(Jinja *J, JType t);
JVal v_dict(Jinja *J, JType t);
void list_push(Jinja *J, JList *l, JVal v);
JVal *dict_get(const JDict *d, const char *k, size_t len);
void dict_set(Jinja *J, JDict *d, JStr *k, JVal v);
int is_list(JVal v);    /* list or tuple */
int is_mapping(JVal v); /* dict or kwargs */
int truthy(JVal v);
int loose_equal(JVal a, JVal b);  /* JavaScript's == on the values */
int strict_equal(JVal a, JVal b); /* JavaScript's === */
const char *type_name(JVal v);
void buf_put(Jinja *J, JBuf *b, const char *s, size_t len);
void buf_putz(Jinja *J, JBuf *b, const char *s);
JVal buf_value(Jinja *J, const JBuf *b);
int scalar_text(Jinja *J, JBuf *b, JVal v, int python_float); /* bool, int, float, string */
void value_print(Jinja *J, JBuf *b, JVal v);                  /* as {{ v }} prints it */
void value_raw_string(Jinja *J, JBuf *b, JVal v);             /* JavaScript's value.toString() (~ and +) */

/* jinja_json.c */
typedef struct {
    int indent; /* 0: none */
    int ensure_ascii, sort_keys;
    const char *item_sep, *key_sep; /* NULL: the defaults */
} JsonStyle;
void to_json(Jinja *J, JBuf *b, JVal v, const JsonStyle *st, int depth, int undefined_as_null);
JVal json_parse(Jinja *J, const char *s, size_t len);

/* jinja_lexer.c */
int lex(Jinja *J, const char *src, size_t len, Token **out);

/* jinja_parser.c */
NodeList parse(Jinja *J, const Token *t, int n);

/* The deepest nesting of evaluations and calls (bounds the C stack). */
#define MAX_EVAL_DEPTH 160
/* jinja_eval.c: expressions and scopes. eval_step counts a node against the
 * step budget: non-zero when the run must stop (failed, or over budget). */
JVal eval(Jinja *J, const Node *n, Scope *sc);
int eval_step(Jinja *J);
Scope *scope_new(Jinja *J, Scope *parent);
void scope_set(Jinja *J, Scope *sc, JStr *name, JVal v);
/* jinja_call.c: calls. */
JVal eval_call(Jinja *J, const Node *n, Scope *sc);
JVal call_function(Jinja *J, JVal fn, JList *args, Scope *caller);
void eval_args(Jinja *J, const NodeList *args, Scope *sc, JList *pos, JDict *kw);
/* Appends kw to args as call_function takes keyword arguments (one JT_KWARGS
 * value, last); 0, or -1 out of memory. */
int push_kwargs(Jinja *J, JList *args, const JDict *kw);
/* jinja_exec.c: statements. */
void eval_block(Jinja *J, const NodeList *body, Scope *sc, JBuf *out);

/* jinja_filters.c */
JVal apply_filter(Jinja *J, JVal operand, const Node *filter, Scope *sc);
int run_test(Jinja *J, const char *name, JVal v, int *result);
/* Sorts v[0..n) by keys[i] (stable, as the reference's Array sort);
 * case-insensitive string keys compare lower-cased. */
void sort_by_keys(Jinja *J, JVal *v, int n, const JVal *keys, int case_sensitive, int reverse);
/* The upper (or lower) case of s, as JavaScript maps it (jinja_case.h); of
 * its first code point only when `first_only`. */
JVal case_mapped(Jinja *J, const JStr *s, int upper, int first_only);

/* jinja_methods.c */
JVal member_builtin(Jinja *J, JVal obj, const char *name, size_t len); /* undefined if none */
JVal call_method(Jinja *J, JFunc *fn, JList *args);
JVal call_global(Jinja *J, JFunc *fn, JList *args);
void install_globals(Jinja *J, Scope *sc);

#endif
