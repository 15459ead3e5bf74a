/* jinja_parser.h - what the parser's two halves share: the parser state,
 * its small token helpers, and the expression entry points
 * (jinja_parse_expr.c) the statements (jinja_parser.c) call. */
#ifndef LLM_JINJA_PARSER_H
#define LLM_JINJA_PARSER_H

#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

typedef struct {
    Jinja *J;
    const Token *t;
    int n, i, depth;
} Parser;

static inline Node *node(Parser *P, NodeType type) {
    Node *n = jalloc(P->J, sizeof *n);
    if (n) n->type = (uint8_t)type;
    return n;
}

static inline void add(Parser *P, NodeList *l, Node *n) {
    if (!n || P->J->failed) return;
    if ((l->n & (l->n - 1)) == 0) { /* grows at powers of two */
        int cap = l->n ? l->n * 2 : 1;
        Node **nv = jalloc(P->J, (size_t)cap * sizeof *nv);
        if (!nv) return;
        if (l->n) memcpy(nv, l->v, (size_t)l->n * sizeof *nv);
        l->v = nv;
    }
    l->v[l->n++] = n;
}

static inline Node *fail(Parser *P, const char *what) {
    jfail(P->J, "syntax error: %s (token %d)", what, P->i);
    return NULL;
}

static inline int is(const Parser *P, TokenType t) {
    return P->i < P->n && P->t[P->i].type == t;
}
static inline int is2(const Parser *P, TokenType a, TokenType b) {
    return P->i + 1 < P->n && P->t[P->i].type == a && P->t[P->i + 1].type == b;
}

static inline int tok_is(const Token *t, const char *s) {
    size_t n = strlen(s);
    return t->len == n && memcmp(t->s, s, n) == 0;
}

static inline int is_ident(const Parser *P, const char *name) {
    return P->i < P->n && P->t[P->i].type == TK_IDENT && tok_is(&P->t[P->i], name);
}

static inline int expect(Parser *P, TokenType t, const char *what) {
    if (!is(P, t)) {
        fail(P, what);
        return -1;
    }
    P->i++;
    return 0;
}

/* jinja_parse_expr.c: a full expression (if-expressions down to primaries),
 * a primary alone, a comma sequence of either (a tuple when there is a
 * comma), a call's arguments after its callee (parameters: a macro's
 * definition, names with defaults), and the call itself. */
Node *parse_expression(Parser *P);
Node *parse_primary(Parser *P);
Node *parse_sequence(Parser *P, int primary);
NodeList parse_args(Parser *P, int parameters);
Node *parse_call(Parser *P, Node *callee);

#endif
