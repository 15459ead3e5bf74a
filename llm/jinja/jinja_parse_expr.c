/* jinja_parse_expr.c - expressions, with the reference's grammar and
 * precedence: if-expressions, or, and, not, comparisons and `in`, + - ~,
 * * / // %, **, `is` tests, | filters, signs, calls, members and slices.
 * Nesting is bounded (JINJA_MAX_DEPTH) to bound the C stack. */
#include "lib/stdlib.h"
#include "llm/jinja/jinja_parser.h"

Node *parse_sequence(Parser *P, int primary) {
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

NodeList parse_args(Parser *P, int parameters) {
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

Node *parse_call(Parser *P, Node *callee) {
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

/* operand (op operand)*, left-associative, op any operator of the token type. */
static Node *parse_left_chain(Parser *P, TokenType op_type, Node *(*operand)(Parser *)) {
    Node *l = operand(P);
    while (is(P, op_type) && !P->J->failed) {
        Op op = op_of(&P->t[P->i++]);
        l = binary(P, op, l, operand(P));
    }
    return l;
}

static Node *parse_power(Parser *P) {
    return parse_left_chain(P, TK_POWER, parse_test);
}

static Node *parse_multiplicative(Parser *P) {
    return parse_left_chain(P, TK_MULTIPLICATIVE, parse_power);
}

static Node *parse_additive(Parser *P) {
    return parse_left_chain(P, TK_ADDITIVE, parse_multiplicative);
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

Node *parse_expression(Parser *P) {
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

Node *parse_primary(Parser *P) {
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
