/* jinja_parser.c - tokens to a syntax tree, with the reference's grammar
 * and precedence: if-expressions, or, and, not, comparisons and `in`,
 * + - ~, * / // %, **, `is` tests, | filters, signs, calls, members and
 * slices. Nesting is bounded (JINJA_MAX_DEPTH) to bound the C stack. */
#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

typedef struct {
    Jinja *J;
    const Token *t;
    int n, i, depth;
} Parser;

static Node *parse_any(Parser *P);
static Node *parse_expression(Parser *P);
static Node *parse_primary(Parser *P);

static Node *node(Parser *P, NodeType type) {
    Node *n = jalloc(P->J, sizeof *n);
    if (n) n->type = (uint8_t)type;
    return n;
}

static void add(Parser *P, NodeList *l, Node *n) {
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

static Node *fail(Parser *P, const char *what) {
    jfail(P->J, "syntax error: %s (token %d)", what, P->i);
    return NULL;
}

static int is(const Parser *P, TokenType t) {
    return P->i < P->n && P->t[P->i].type == t;
}
static int is2(const Parser *P, TokenType a, TokenType b) {
    return P->i + 1 < P->n && P->t[P->i].type == a && P->t[P->i + 1].type == b;
}

static int tok_is(const Token *t, const char *s) {
    size_t n = strlen(s);
    return t->len == n && memcmp(t->s, s, n) == 0;
}

static int is_ident(const Parser *P, const char *name) {
    return P->i < P->n && P->t[P->i].type == TK_IDENT && tok_is(&P->t[P->i], name);
}

static int is_statement(const Parser *P, const char *const *names) {
    if (!is2(P, TK_OPEN_STMT, TK_IDENT)) return 0;
    for (; *names; names++)
        if (tok_is(&P->t[P->i + 1], *names)) return 1;
    return 0;
}

static int expect(Parser *P, TokenType t, const char *what) {
    if (!is(P, t)) {
        fail(P, what);
        return -1;
    }
    P->i++;
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

static Node *parse_sequence(Parser *P, int primary) {
    Node *first = primary ? parse_primary(P) : parse_expression(P);
    if (!is(P, TK_COMMA)) return first;
    Node *t = node(P, N_TUPLE);
    if (!t) return NULL;
    add(P, &t->list, first);
    while (is(P, TK_COMMA) && !P->J->failed) {
        P->i++;
        add(P, &t->list, primary ? parse_primary(P) : parse_expression(P));
    }
    return t;
}

static NodeList parse_args(Parser *P, int parameters) {
    NodeList args = {0};
    if (expect(P, TK_LPAREN, "expected ( for arguments")) return args;
    int saw_keyword = 0;
    while (!is(P, TK_RPAREN) && !P->J->failed) {
        if (P->i >= P->n) {
            fail(P, "unterminated argument list");
            break;
        }
        int kw_spread = is(P, TK_POWER);
        int spread = is(P, TK_MULTIPLICATIVE) && tok_is(&P->t[P->i], "*");
        if (parameters && (kw_spread || spread)) {
            fail(P, "argument unpacking in parameters");
            break;
        }
        Node *arg;
        if (kw_spread || spread) {
            P->i++;
            arg = node(P, kw_spread ? N_KWSPREAD : N_SPREAD);
            if (arg) arg->a = parse_expression(P);
        } else {
            arg = parse_expression(P);
            if (is(P, TK_EQUALS)) {
                P->i++;
                if (!arg || arg->type != N_IDENT) {
                    fail(P, "expected an identifier for a keyword argument");
                    break;
                }
                Node *kw = node(P, N_KWARG);
                if (kw) {
                    kw->str = arg->str;
                    kw->a = parse_expression(P);
                }
                arg = kw;
                saw_keyword = 1;
            } else if (saw_keyword) {
                fail(P, "positional argument after keyword argument");
                break;
            }
            if (parameters && arg && arg->type != N_IDENT && arg->type != N_KWARG) {
                fail(P, "expected an identifier for a parameter");
                break;
            }
        }
        add(P, &args, arg);
        if (is(P, TK_COMMA)) P->i++;
    }
    expect(P, TK_RPAREN, "expected ) after arguments");
    return args;
}

static Node *parse_member(Parser *P, Node *object) {
    while ((is(P, TK_DOT) || is(P, TK_LBRACKET)) && !P->J->failed) {
        int computed = is(P, TK_LBRACKET);
        P->i++;
        Node *m = node(P, N_MEMBER);
        if (!m) return NULL;
        m->a = object;
        m->flag = (uint8_t)computed;
        if (computed) {
            Node *parts[3] = {0};
            int count = 0, slice = 0;
            while (!is(P, TK_RBRACKET) && !P->J->failed) {
                if (P->i >= P->n || count == 3) return fail(P, "bad subscript");
                if (is(P, TK_COLON)) {
                    parts[count++] = NULL;
                    P->i++;
                    slice = 1;
                } else {
                    parts[count++] = parse_expression(P);
                    if (is(P, TK_COLON)) {
                        P->i++;
                        slice = 1;
                    }
                }
            }
            if (count == 0) return fail(P, "empty subscript");
            if (slice) {
                Node *s = node(P, N_SLICE);
                if (!s) return NULL;
                s->a = parts[0];
                s->b = parts[1];
                s->c = parts[2];
                m->b = s;
            } else {
                m->b = parts[0];
            }
            if (expect(P, TK_RBRACKET, "expected ]")) return NULL;
        } else {
            m->b = parse_primary(P);
            if (m->b && m->b->type != N_IDENT && m->b->type != N_INT)
                return fail(P, "expected a name after .");
        }
        object = m;
    }
    return object;
}

static Node *parse_call(Parser *P, Node *callee) {
    Node *c = node(P, N_CALL);
    if (!c) return NULL;
    c->a = callee;
    c->list = parse_args(P, 0);
    Node *r = parse_member(P, c);
    if (is(P, TK_LPAREN)) return parse_call(P, r);
    return r;
}

static Node *parse_call_member(Parser *P) {
    Node *m = parse_member(P, parse_primary(P));
    return is(P, TK_LPAREN) ? parse_call(P, m) : m;
}

static Node *parse_sign(Parser *P) {
    if (P->i < P->n && (P->t[P->i].type == TK_UNARY || P->t[P->i].type == TK_ADDITIVE) &&
        (tok_is(&P->t[P->i], "-") || tok_is(&P->t[P->i], "+"))) {
        Node *u = node(P, N_UNARY);
        if (!u) return NULL;
        u->op = tok_is(&P->t[P->i], "-") ? OP_NEG : OP_POS;
        P->i++;
        if (++P->depth > JINJA_MAX_DEPTH) return fail(P, "nested too deep");
        u->a = parse_sign(P);
        P->depth--;
        return u;
    }
    return parse_call_member(P);
}

static Node *parse_filter(Parser *P) {
    Node *operand = parse_sign(P);
    while (is(P, TK_PIPE) && !P->J->failed) {
        P->i++;
        Node *f = parse_primary(P);
        if (!f || f->type != N_IDENT) return fail(P, "expected a filter name");
        if (is(P, TK_LPAREN)) f = parse_call(P, f);
        Node *e = node(P, N_FILTER);
        if (!e) return NULL;
        e->a = operand;
        e->b = f;
        operand = e;
    }
    return operand;
}

static Node *parse_test(Parser *P) {
    Node *operand = parse_filter(P);
    while (is_ident(P, "is") && !P->J->failed) {
        P->i++;
        int negate = is_ident(P, "not");
        if (negate) P->i++;
        Node *name = parse_primary(P);
        if (!name || name->type != N_IDENT) return fail(P, "expected a test name");
        Node *t = node(P, N_TEST);
        if (!t) return NULL;
        t->a = operand;
        t->flag = (uint8_t)negate;
        t->str = name->str;
        operand = t;
    }
    return operand;
}

static Node *binary(Parser *P, Op op, Node *l, Node *r) {
    Node *b = node(P, N_BINARY);
    if (!b) return NULL;
    b->op = (uint8_t)op;
    b->a = l;
    b->b = r;
    return b;
}

static Op op_of(const Token *t) {
    static const struct {
        const char *s;
        Op op;
    } ops[] = {{"+", OP_ADD},       {"-", OP_SUB}, {"~", OP_CONCAT}, {"*", OP_MUL}, {"/", OP_DIV},
               {"//", OP_FLOORDIV}, {"%", OP_MOD}, {"**", OP_POW},   {"==", OP_EQ}, {"!=", OP_NE},
               {"<", OP_LT},        {">", OP_GT},  {"<=", OP_LE},    {">=", OP_GE}};
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (tok_is(t, ops[k].s)) return ops[k].op;
    return OP_NONE;
}

static Node *parse_power(Parser *P) {
    Node *l = parse_test(P);
    while (is(P, TK_POWER) && !P->J->failed) {
        P->i++;
        l = binary(P, OP_POW, l, parse_test(P));
    }
    return l;
}

static Node *parse_multiplicative(Parser *P) {
    Node *l = parse_power(P);
    while (is(P, TK_MULTIPLICATIVE) && !P->J->failed) {
        Op op = op_of(&P->t[P->i++]);
        l = binary(P, op, l, parse_power(P));
    }
    return l;
}

static Node *parse_additive(Parser *P) {
    Node *l = parse_multiplicative(P);
    while (is(P, TK_ADDITIVE) && !P->J->failed) {
        Op op = op_of(&P->t[P->i++]);
        l = binary(P, op, l, parse_multiplicative(P));
    }
    return l;
}

static Node *parse_comparison(Parser *P) {
    Node *l = parse_additive(P);
    for (;;) {
        if (P->J->failed) return NULL;
        Op op;
        if (is_ident(P, "not") && P->i + 1 < P->n && P->t[P->i + 1].type == TK_IDENT &&
            tok_is(&P->t[P->i + 1], "in")) {
            op = OP_NOT_IN;
            P->i += 2;
        } else if (is_ident(P, "in")) {
            op = OP_IN;
            P->i++;
        } else if (is(P, TK_COMPARISON)) {
            op = op_of(&P->t[P->i++]);
        } else {
            return l;
        }
        l = binary(P, op, l, parse_additive(P));
    }
}

static Node *parse_not(Parser *P) {
    if (is_ident(P, "not")) {
        P->i++;
        if (++P->depth > JINJA_MAX_DEPTH) return fail(P, "nested too deep");
        Node *u = node(P, N_UNARY);
        if (u) {
            u->op = OP_NOT;
            u->a = parse_not(P);
        }
        P->depth--;
        return u;
    }
    return parse_comparison(P);
}

static Node *parse_and(Parser *P) {
    Node *l = parse_not(P);
    while (is_ident(P, "and") && !P->J->failed) {
        P->i++;
        l = binary(P, OP_AND, l, parse_not(P));
    }
    return l;
}

static Node *parse_or(Parser *P) {
    Node *l = parse_and(P);
    while (is_ident(P, "or") && !P->J->failed) {
        P->i++;
        l = binary(P, OP_OR, l, parse_and(P));
    }
    return l;
}

static Node *parse_expression(Parser *P) {
    if (++P->depth > JINJA_MAX_DEPTH) return fail(P, "nested too deep");
    Node *a = parse_or(P);
    if (is_ident(P, "if") && !P->J->failed) {
        P->i++;
        Node *test = parse_or(P);
        Node *r;
        if (is_ident(P, "else")) {
            P->i++;
            r = node(P, N_TERNARY);
            if (r) {
                r->a = test;
                r->b = a;
                r->c = parse_expression(P);
            }
        } else {
            r = node(P, N_SELECT);
            if (r) {
                r->a = a;
                r->b = test;
            }
        }
        a = r;
    }
    P->depth--;
    return a;
}

static Node *parse_primary(Parser *P) {
    if (P->i >= P->n) return fail(P, "unexpected end of template");
    if (P->J->failed) return NULL;
    const Token *t = &P->t[P->i++];
    Node *n;
    switch (t->type) {
    case TK_NUMBER: {
        char tmp[64];
        size_t len = t->len < sizeof tmp - 1 ? t->len : sizeof tmp - 1;
        memcpy(tmp, t->s, len);
        tmp[len] = '\0';
        int is_float = memchr(t->s, '.', t->len) != NULL;
        n = node(P, is_float ? N_FLOAT : N_INT);
        if (!n) return NULL;
        double d = strtod(tmp, NULL);
        if (is_float || d > 9.2e18 || d < -9.2e18) {
            n->type = N_FLOAT;
            n->fval = d;
        } else {
            n->ival = (int64_t)strtol(tmp, NULL, 10);
        }
        return n;
    }
    case TK_STRING: {
        JBuf b = {0};
        buf_put(P->J, &b, t->s, t->len);
        while (is(P, TK_STRING)) { /* adjacent literals join */
            buf_put(P->J, &b, P->t[P->i].s, P->t[P->i].len);
            P->i++;
        }
        n = node(P, N_STR);
        if (n) n->str = jstr(P->J, b.s ? b.s : "", b.len);
        return n;
    }
    case TK_IDENT:
        n = node(P, N_IDENT);
        if (n) n->str = jstr(P->J, t->s, t->len);
        return n;
    case TK_LPAREN:
        if (++P->depth > JINJA_MAX_DEPTH) return fail(P, "nested too deep");
        n = parse_sequence(P, 0);
        P->depth--;
        if (expect(P, TK_RPAREN, "expected )")) return NULL;
        return n;
    case TK_LBRACKET:
        n = node(P, N_ARRAY);
        while (n && !is(P, TK_RBRACKET) && !P->J->failed) {
            if (P->i >= P->n) return fail(P, "unterminated list");
            add(P, &n->list, parse_expression(P));
            if (is(P, TK_COMMA)) P->i++;
        }
        P->i++;
        return n;
    case TK_LBRACE:
        n = node(P, N_OBJECT);
        while (n && !is(P, TK_RBRACE) && !P->J->failed) {
            if (P->i >= P->n) return fail(P, "unterminated dict");
            add(P, &n->list, parse_expression(P));
            if (expect(P, TK_COLON, "expected : in a dict")) return NULL;
            add(P, &n->list2, parse_expression(P));
            if (is(P, TK_COMMA)) P->i++;
        }
        P->i++;
        return n;
    default:
        return fail(P, "unexpected token");
    }
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
    } else if (is_statement(P, (const char *const[]){"else", NULL})) {
        P->i += 2;
        if (expect(P, TK_CLOSE_STMT, "expected %} after else")) return NULL;
        parse_body(P, &n->list2, endif);
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
        if (is_statement(P, (const char *const[]){"else", NULL})) {
            P->i += 2;
            if (expect(P, TK_CLOSE_STMT, "expected %} after else")) return NULL;
            parse_body(P, &n->list2, endfor);
        }
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
