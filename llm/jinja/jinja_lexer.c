/* jinja_lexer.c - template text to tokens, the reference's way: a trailing
 * newline dropped, lstrip_blocks and trim_blocks applied to the text first,
 * {% generation %} markers removed, then text, tags and expression tokens
 * with the whitespace control of {%- -%} {{- -}} {#- -#}. */
#include "lib/string.h"
#include "llm/jinja/jinja_internal.h"

static int line_break_before(const char *s, size_t i) {
    if (i == 0) return 1;
    char c = s[i - 1];
    if (c == '\n' || c == '\r') return 1;
    /* U+2028, U+2029 end lines for JavaScript's ^ too */
    return i >= 3 && (unsigned char)s[i - 3] == 0xe2 && (unsigned char)s[i - 2] == 0x80 &&
           ((unsigned char)s[i - 1] == 0xa8 || (unsigned char)s[i - 1] == 0xa9);
}

/* lstrip_blocks: blanks from a line's start up to {% {# {- go. */
static size_t lstrip_blocks(const char *s, size_t len, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        if (line_break_before(s, i)) {
            size_t j = i;
            while (j < len && (s[j] == ' ' || s[j] == '\t')) j++;
            if (j + 1 < len && s[j] == '{' && (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) {
                i = j;
            }
            /* copy up to the next character so the check above runs once per line */
            out[o++] = s[i++];
            continue;
        }
        out[o++] = s[i++];
    }
    return o;
}

/* trim_blocks: the newline right after #} %} -} goes. */
static size_t trim_blocks(const char *s, size_t len, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        out[o++] = s[i];
        if (i + 2 < len + 0 && s[i + 1] == '}' && (s[i] == '#' || s[i] == '%' || s[i] == '-') &&
            s[i + 2] == '\n') {
            out[o++] = '}';
            i += 2;
        }
    }
    return o;
}

static size_t match_word(const char *s, size_t len, size_t i, const char *w) {
    size_t n = strlen(w);
    return len - i >= n && memcmp(s + i, w, n) == 0 ? n : 0;
}

static size_t spaces(const char *s, size_t len, size_t i) {
    size_t n, j = i;
    while ((n = js_space_at(s + j, len - j)) > 0) j += n;
    return j - i;
}

/* {% generation %} / {% endgeneration %} (with the blanks around them,
 * unless a - strips them too) are markers for training masks: removed. */
static size_t drop_generation(const char *s, size_t len, char *out) {
    size_t o = 0, i = 0, copied = 0;
    while (i < len) {
        if (!(s[i] == '{' && i + 1 < len && s[i + 1] == '%')) {
            i++;
            continue;
        }
        size_t j = i + 2;
        int lstrip = j < len && s[j] == '-';
        j += (size_t)lstrip;
        j += spaces(s, len, j);
        j += match_word(s, len, j, "end");
        size_t w = match_word(s, len, j, "generation");
        if (!w) {
            i++;
            continue;
        }
        j += w;
        j += spaces(s, len, j);
        int rstrip = j < len && s[j] == '-';
        j += (size_t)rstrip;
        if (!match_word(s, len, j, "%}")) {
            i++;
            continue;
        }
        j += 2;
        /* the blanks before, back to what was copied already */
        size_t before = i, n;
        while (before > copied && (n = js_space_before(s, before)) > 0 && before - n >= copied) before -= n;
        size_t after = j + spaces(s, len, j);
        memmove(out + o, s + copied, before - copied);
        o += before - copied;
        if (!lstrip) {
            memmove(out + o, s + before, i - before);
            o += i - before;
        }
        if (!rstrip) {
            memmove(out + o, s + j, after - j);
            o += after - j;
        }
        copied = i = after;
    }
    memmove(out + o, s + copied, len - copied);
    return o + len - copied;
}

typedef struct {
    Jinja *J;
    const char *src;
    size_t len, pos;
    Token *tok;
    int n, cap;
} Lexer;

static void push(Lexer *L, TokenType t, const char *s, size_t len) {
    if (L->n == L->cap) {
        int cap = L->cap ? L->cap * 2 : 256;
        Token *nt = jalloc(L->J, (size_t)cap * sizeof *nt);
        if (!nt) return;
        if (L->n) memcpy(nt, L->tok, (size_t)L->n * sizeof *nt);
        L->tok = nt;
        L->cap = cap;
    }
    L->tok[L->n++] = (Token){t, s, len};
}

static TokenType last_type(const Lexer *L) {
    return L->n ? L->tok[L->n - 1].type : (TokenType)-1;
}

static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
static int is_digit(char c) {
    return c >= '0' && c <= '9';
}

static int hexval(char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* A quoted string with the reference's escapes; pos is past the quote. */
static int lex_string(Lexer *L, char quote) {
    JBuf b = {0};
    for (;;) {
        if (L->pos >= L->len) {
            jfail(L->J, "syntax error: unexpected end of input in a string");
            return -1;
        }
        char c = L->src[L->pos];
        if (c == quote) break;
        if (c == '\\') {
            if (++L->pos >= L->len) {
                jfail(L->J, "syntax error: unexpected end of input");
                return -1;
            }
            char e = L->src[L->pos++];
            if (e == 'x' || e == 'u') {
                size_t n = e == 'x' ? 2 : 4;
                unsigned u = 0;
                for (size_t k = 0; k < n; k++) {
                    int d = L->pos + k < L->len ? hexval(L->src[L->pos + k]) : -1;
                    if (d < 0) {
                        jfail(L->J, "syntax error: invalid hexadecimal escape sequence");
                        return -1;
                    }
                    u = u * 16 + (unsigned)d;
                }
                L->pos += n;
                char enc[4];
                size_t m;
                if (u < 0x80)
                    enc[0] = (char)u, m = 1;
                else if (u < 0x800)
                    enc[0] = (char)(0xc0 | (u >> 6)), enc[1] = (char)(0x80 | (u & 0x3f)), m = 2;
                else
                    enc[0] = (char)(0xe0 | (u >> 12)), enc[1] = (char)(0x80 | ((u >> 6) & 0x3f)),
                    enc[2] = (char)(0x80 | (u & 0x3f)), m = 3;
                buf_put(L->J, &b, enc, m);
                continue;
            }
            const char *from = "ntrbfv'\"\\", *to = "\n\t\r\b\f\v'\"\\";
            const char *p = e ? strchr(from, e) : NULL;
            if (!p) {
                jfail(L->J, "syntax error: unexpected escaped character: %c", e);
                return -1;
            }
            buf_put(L->J, &b, &to[p - from], 1);
            continue;
        }
        buf_put(L->J, &b, &c, 1);
        if (++L->pos >= L->len) {
            jfail(L->J, "syntax error: unexpected end of input in a string");
            return -1;
        }
    }
    L->pos++; /* the closing quote */
    JStr *s = jstr(L->J, b.s ? b.s : "", b.len);
    if (s) push(L, TK_STRING, s->s, s->len);
    return 0;
}

static size_t digits_at(const Lexer *L, size_t i) {
    size_t j = i;
    while (j < L->len && is_digit(L->src[j])) j++;
    return j - i;
}

/* An integer or decimal number at pos, with an optional sign at sign_at. */
static void lex_number(Lexer *L, size_t start, int allow_fraction) {
    L->pos += digits_at(L, L->pos);
    if (allow_fraction && L->pos + 1 < L->len && L->src[L->pos] == '.' && is_digit(L->src[L->pos + 1])) {
        L->pos++;
        L->pos += digits_at(L, L->pos);
    }
    push(L, TK_NUMBER, L->src + start, L->pos - start);
}

static const struct {
    const char *s;
    TokenType t;
} fixed[] = {
    {"{%", TK_OPEN_STMT},     {"%}", TK_CLOSE_STMT},
    {"{{", TK_OPEN_EXPR},     {"}}", TK_CLOSE_EXPR},
    {"(", TK_LPAREN},         {")", TK_RPAREN},
    {"{", TK_LBRACE},         {"}", TK_RBRACE},
    {"[", TK_LBRACKET},       {"]", TK_RBRACKET},
    {",", TK_COMMA},          {".", TK_DOT},
    {":", TK_COLON},          {"|", TK_PIPE},
    {"<=", TK_COMPARISON},    {">=", TK_COMPARISON},
    {"==", TK_COMPARISON},    {"!=", TK_COMPARISON},
    {"<", TK_COMPARISON},     {">", TK_COMPARISON},
    {"+", TK_ADDITIVE},       {"-", TK_ADDITIVE},
    {"~", TK_ADDITIVE},       {"**", TK_POWER},
    {"*", TK_MULTIPLICATIVE}, {"//", TK_MULTIPLICATIVE},
    {"/", TK_MULTIPLICATIVE}, {"%", TK_MULTIPLICATIVE},
    {"=", TK_EQUALS},
};

static void strip_trailing_text(Lexer *L) {
    if (L->n && L->tok[L->n - 1].type == TK_TEXT) {
        Token *t = &L->tok[L->n - 1];
        t->len = js_trim_end(t->s, t->len);
        if (t->len == 0) L->n--;
    }
}

static void skip_leading_space(Lexer *L) {
    L->pos += spaces(L->src, L->len, L->pos);
}

/* The steps of lex_tokens: each returns 1 when it consumed input (or failed:
 * J->failed is then set), 0 when the input at L->pos is not its kind. */

/* Text between tags, where the last token closed a tag (or at the start). */
static int lex_text(Lexer *L) {
    const char *s = L->src;
    TokenType last = last_type(L);
    if (!(L->n == 0 || last == TK_CLOSE_STMT || last == TK_CLOSE_EXPR || last == TK_COMMENT)) return 0;
    size_t start = L->pos;
    while (L->pos < L->len && !(s[L->pos] == '{' && L->pos + 1 < L->len &&
                                (s[L->pos + 1] == '%' || s[L->pos + 1] == '{' || s[L->pos + 1] == '#')))
        L->pos++;
    if (L->pos == start) return 0;
    push(L, TK_TEXT, s + start, L->pos - start);
    return 1;
}

/* {# ... #}, with its whitespace control. */
static int lex_comment(Lexer *L) {
    const char *s = L->src;
    if (!(s[L->pos] == '{' && L->pos + 1 < L->len && s[L->pos + 1] == '#')) return 0;
    L->pos += 2;
    int strip_before = L->pos < L->len && s[L->pos] == '-';
    L->pos += (size_t)strip_before;
    size_t start = L->pos;
    while (!(L->pos + 1 < L->len && s[L->pos] == '#' && s[L->pos + 1] == '}')) {
        if (L->pos + 2 >= L->len) {
            jfail(L->J, "syntax error: missing end of comment tag");
            return 1;
        }
        L->pos++;
    }
    int strip_after = L->pos > start && s[L->pos - 1] == '-';
    if (strip_before) strip_trailing_text(L);
    push(L, TK_COMMENT, s + start, L->pos - start - (size_t)strip_after);
    L->pos += 2;
    if (strip_after) skip_leading_space(L);
    return 1;
}

/* The tags that strip the text before ({%- {{-, `opening`) or after (-%}
 * -}}) them: the opening ones are looked for before blanks are skipped,
 * the closing ones after, as the reference does. */
static int lex_stripping_tag(Lexer *L, int opening, int *brace_depth) {
    static const struct {
        const char *s;
        TokenType t;
        int opens;
    } tags[] = {{"{%-", TK_OPEN_STMT, 1},
                {"{{-", TK_OPEN_EXPR, 1},
                {"-%}", TK_CLOSE_STMT, 0},
                {"-}}", TK_CLOSE_EXPR, 0}};
    for (size_t k = 0; k < sizeof tags / sizeof tags[0]; k++) {
        if (tags[k].opens != opening || !match_word(L->src, L->len, L->pos, tags[k].s)) continue;
        if (tags[k].opens) {
            strip_trailing_text(L);
            push(L, tags[k].t, tags[k].s, 2);
            if (tags[k].t == TK_OPEN_EXPR) *brace_depth = 0;
            L->pos += 3;
        } else {
            push(L, tags[k].t, tags[k].s + 1, 2);
            L->pos += 3;
            skip_leading_space(L);
        }
        return 1;
    }
    return 0;
}

/* The reference's consumeWhile: blanks that run to the end are an error. */
static int skip_blanks(Lexer *L) {
    const char *s = L->src;
    while (L->pos < L->len && js_space_at(s + L->pos, L->len - L->pos)) {
        L->pos += js_space_at(s + L->pos, L->len - L->pos);
        if (L->pos >= L->len) {
            jfail(L->J, "syntax error: unexpected end of input");
            return -1;
        }
    }
    return 0;
}

/* A sign where no operand precedes it: unary, or part of a number. */
static int lex_sign(Lexer *L) {
    const char *s = L->src;
    char c = s[L->pos];
    if (c != '-' && c != '+') return 0;
    TokenType lt = last_type(L);
    if (lt == TK_TEXT || L->n == 0) {
        jfail(L->J, "syntax error: unexpected character: %c", c);
        return 1;
    }
    if (lt == TK_IDENT || lt == TK_NUMBER || lt == TK_STRING || lt == TK_RPAREN || lt == TK_RBRACKET)
        return 0;
    size_t start = L->pos++;
    if (digits_at(L, L->pos) > 0)
        lex_number(L, start, 1);
    else
        push(L, TK_UNARY, s + start, 1);
    return 1;
}

/* Operators and punctuation (the `fixed` table); "}}" closes the
 * expression only outside a dict literal's braces. */
static int lex_fixed(Lexer *L, int *brace_depth) {
    for (size_t k = 0; k < sizeof fixed / sizeof fixed[0]; k++) {
        if (fixed[k].t == TK_CLOSE_EXPR && *brace_depth > 0) continue;
        size_t n = match_word(L->src, L->len, L->pos, fixed[k].s);
        if (!n) continue;
        push(L, fixed[k].t, L->src + L->pos, n);
        if (fixed[k].t == TK_OPEN_EXPR) *brace_depth = 0;
        if (fixed[k].t == TK_LBRACE) ++*brace_depth;
        if (fixed[k].t == TK_RBRACE) --*brace_depth;
        L->pos += n;
        return 1;
    }
    return 0;
}

/* Strings, numbers and names. */
static int lex_literal_or_name(Lexer *L) {
    const char *s = L->src;
    char c = s[L->pos];
    if (c == '\'' || c == '"') {
        L->pos++;
        lex_string(L, c);
        return 1;
    }
    if (is_digit(c)) {
        lex_number(L, L->pos, last_type(L) != TK_DOT);
        return 1;
    }
    if (!is_word(c)) return 0;
    size_t start = L->pos;
    while (L->pos < L->len && is_word(s[L->pos])) L->pos++;
    push(L, TK_IDENT, s + start, L->pos - start);
    return 1;
}

static int lex_tokens(Lexer *L) {
    int brace_depth = 0;
    while (L->pos < L->len && !L->J->failed) {
        if (lex_text(L) || lex_comment(L) || lex_stripping_tag(L, 1, &brace_depth)) continue;
        if (skip_blanks(L) != 0) return -1;
        if (lex_stripping_tag(L, 0, &brace_depth) || lex_sign(L) || lex_fixed(L, &brace_depth) ||
            lex_literal_or_name(L))
            continue;
        jfail(L->J, "syntax error: unexpected character: %c", L->src[L->pos]);
        return -1;
    }
    return L->J->failed ? -1 : 0;
}

int lex(Jinja *J, const char *src, size_t len, Token **out) {
    if (len && src[len - 1] == '\n') len--;
    char *a = jalloc(J, len + 1), *b = jalloc(J, len + 1);
    if (!a || !b) return -1;
    size_t n = lstrip_blocks(src, len, a);
    n = trim_blocks(a, n, b);
    n = drop_generation(b, n, a);
    Lexer L = {J, a, n, 0, NULL, 0, 0};
    if (lex_tokens(&L) != 0) return -1;
    *out = L.tok;
    return L.n;
}
