/* jinja_parser.c - tokens to a syntax tree: text, output tags and the
 * statements (if, for, set, macro, call blocks, filter blocks, ...); the
 * expressions inside them are jinja_parse_expr.c's. Nesting is bounded
 * (JINJA_MAX_DEPTH) to bound the C stack. */
#include "lib/stdlib.h"
#include "llm/jinja/jinja_parser.h"

static Node *parse_any(Parser *P);

static int is_statement(const Parser *P, const char *const *names) {
    if (!is2(P, TK_OPEN_STMT, TK_IDENT)) return 0;
    for (; *names; names++)
        if (tok_is(&P->t[P->i + 1], *names)) return 1;
    return 0;
}

static int expect_ident(Parser *P, const char *name) {
    if (!is_ident(P, name)) {
        jfail(P->J, "syntax error: expected %s", name);
        return -1;
    }
    P->i++;
    return 0;
}

static int end_tag(Parser *P, const char *name) {
    if (expect(P, TK_OPEN_STMT, "expected {%") || expect_ident(P, name) ||
        expect(P, TK_CLOSE_STMT, "expected %}"))
        return -1;
    return 0;
}

/* Statements until one of `names` opens a tag. */
static void parse_body(Parser *P, NodeList *body, const char *const *names) {
    while (!P->J->failed && !is_statement(P, names)) {
        if (P->i >= P->n) {
            jfail(P->J, "syntax error: missing {%% end... %%}");
            return;
        }
        add(P, body, parse_any(P));
    }
}

/* An {% else %} and its body up to the stop tags into list, when one comes
 * next (1; 0 when none does; -1 on an error). */
static int parse_else(Parser *P, NodeList *list, const char *const *stops) {
    if (!is_statement(P, (const char *const[]){"else", NULL})) return 0;
    P->i += 2;
    if (expect(P, TK_CLOSE_STMT, "expected %} after else")) return -1;
    parse_body(P, list, stops);
    return 1;
}

static Node *parse_if(Parser *P) {
    static const char *const stops[] = {"elif", "else", "endif", NULL};
    static const char *const endif[] = {"endif", NULL};
    Node *n = node(P, N_IF);
    if (!n) return NULL;
    n->a = parse_expression(P);
    if (expect(P, TK_CLOSE_STMT, "expected %} after if")) return NULL;
    parse_body(P, &n->list, stops);
    if (P->J->failed) return NULL;
    if (is_statement(P, (const char *const[]){"elif", NULL})) {
        P->i += 2;
        if (++P->depth > JINJA_MAX_DEPTH) return fail(P, "nested too deep");
        add(P, &n->list2, parse_if(P));
        P->depth--;
    } else if (parse_else(P, &n->list2, endif) < 0) {
        return NULL;
    }
    return n;
}

static Node *parse_statement(Parser *P) {
    P->i++; /* {% */
    if (!is(P, TK_IDENT)) return fail(P, "expected a statement name");
    const Token *name = &P->t[P->i++];
    Node *n = NULL;
    if (tok_is(name, "set")) {
        static const char *const endset[] = {"endset", NULL};
        n = node(P, N_SET);
        if (!n) return NULL;
        n->a = parse_sequence(P, 0);
        if (is(P, TK_EQUALS)) {
            P->i++;
            n->b = parse_sequence(P, 0);
        } else {
            if (expect(P, TK_CLOSE_STMT, "expected %}")) return NULL;
            parse_body(P, &n->list, endset);
            if (expect(P, TK_OPEN_STMT, "expected {%") || expect_ident(P, "endset")) return NULL;
        }
        if (expect(P, TK_CLOSE_STMT, "expected %} after set")) return NULL;
    } else if (tok_is(name, "if")) {
        n = parse_if(P);
        if (!n || end_tag(P, "endif")) return NULL;
    } else if (tok_is(name, "macro")) {
        static const char *const endmacro[] = {"endmacro", NULL};
        n = node(P, N_MACRO);
        if (!n) return NULL;
        Node *id = parse_primary(P);
        if (!id || id->type != N_IDENT) return fail(P, "expected a macro name");
        n->str = id->str;
        n->list2 = parse_args(P, 1);
        if (expect(P, TK_CLOSE_STMT, "expected %} after macro")) return NULL;
        parse_body(P, &n->list, endmacro);
        if (P->J->failed || end_tag(P, "endmacro")) return NULL;
    } else if (tok_is(name, "for")) {
        static const char *const stops[] = {"endfor", "else", NULL};
        static const char *const endfor[] = {"endfor", NULL};
        n = node(P, N_FOR);
        if (!n) return NULL;
        n->a = parse_sequence(P, 1);
        if (!n->a || (n->a->type != N_IDENT && n->a->type != N_TUPLE))
            return fail(P, "expected a loop variable");
        if (expect_ident(P, "in")) return NULL;
        n->b = parse_expression(P);
        if (expect(P, TK_CLOSE_STMT, "expected %} after for")) return NULL;
        parse_body(P, &n->list, stops);
        if (P->J->failed) return NULL;
        if (parse_else(P, &n->list2, endfor) < 0) return NULL;
        if (P->J->failed || end_tag(P, "endfor")) return NULL;
    } else if (tok_is(name, "break") || tok_is(name, "continue")) {
        n = node(P, tok_is(name, "break") ? N_BREAK : N_CONTINUE);
        if (expect(P, TK_CLOSE_STMT, "expected %}")) return NULL;
    } else if (tok_is(name, "filter")) {
        static const char *const endfilter[] = {"endfilter", NULL};
        n = node(P, N_FILTER_BLOCK);
        if (!n) return NULL;
        n->a = parse_primary(P);
        if (n->a && n->a->type == N_IDENT && is(P, TK_LPAREN)) n->a = parse_call(P, n->a);
        if (expect(P, TK_CLOSE_STMT, "expected %}")) return NULL;
        parse_body(P, &n->list, endfilter);
        if (P->J->failed || end_tag(P, "endfilter")) return NULL;
    } else {
        jfail(P->J, "syntax error: unknown statement %.*s", (int)name->len, name->s);
        return NULL;
    }
    return n;
}

static Node *parse_any(Parser *P) {
    if (++P->depth > JINJA_MAX_DEPTH) return fail(P, "nested too deep");
    const Token *t = &P->t[P->i];
    Node *n = NULL;
    switch (t->type) {
    case TK_COMMENT:
        P->i++;
        n = node(P, N_COMMENT);
        break;
    case TK_TEXT:
        P->i++;
        n = node(P, N_STR);
        if (n) n->str = jstr(P->J, t->s, t->len);
        break;
    case TK_OPEN_STMT:
        n = parse_statement(P);
        break;
    case TK_OPEN_EXPR:
        P->i++;
        n = parse_expression(P);
        if (expect(P, TK_CLOSE_EXPR, "expected }}")) n = NULL;
        break;
    default:
        n = fail(P, "unexpected token");
    }
    P->depth--;
    return n;
}

NodeList parse(Jinja *J, const Token *t, int n) {
    Parser P = {J, t, n, 0, 0};
    NodeList body = {0};
    while (P.i < P.n && !J->failed) add(&P, &body, parse_any(&P));
    return body;
}
