/* pretokenize.c - pre-tokeniser regexes as hand-written matchers.
 *
 * llama.cpp applies a list of regexes one after the other: each one splits
 * every piece left by the previous one into its matches and the text between
 * them. A matcher here returns the length of the match of its regex at pos
 * (0 for none), with ECMAScript's ordered-alternation semantics. */
#include "llm/pretokenize.h"

#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/unicode.h"

#define CLASS_NONE 0xFF /* past the end of the piece */

typedef struct {
    const uint32_t *cps;
    const uint8_t *cls; /* exact or collapsed, as the regex sees them */
    size_t end;         /* the piece ends here; lookahead stops too */
} Subject;

typedef size_t (*Matcher)(const Subject *s, size_t pos);

static uint8_t class_at(const Subject *s, size_t pos) {
    return pos < s->end ? s->cls[pos] : CLASS_NONE;
}

static uint32_t cp_at(const Subject *s, size_t pos) {
    return pos < s->end ? s->cps[pos] : 0xFFFFFFFFu;
}

static int is_newline(uint32_t cp) {
    return cp == '\r' || cp == '\n';
}

static uint32_t ascii_lower(uint32_t cp) {
    return cp >= 'A' && cp <= 'Z' ? cp + 32 : cp;
}

/* 's|'t|'re|'ve|'m|'ll|'d, optionally case-insensitive. */
static size_t match_contraction(const Subject *s, size_t pos, int any_case) {
    if (cp_at(s, pos) != '\'' || pos + 1 >= s->end) return 0;
    uint32_t a = cp_at(s, pos + 1), b = cp_at(s, pos + 2);
    if (any_case) a = ascii_lower(a), b = ascii_lower(b);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return 3;
    return 0;
}

static size_t run_of_class(const Subject *s, size_t pos, uint8_t cls) {
    size_t p = pos;
    while (p < s->end && s->cls[p] == cls) p++;
    return p - pos;
}

static int is_other(uint8_t cls) {
    return cls != UNICODE_WHITESPACE && cls != UNICODE_LETTER && cls != UNICODE_NUMBER && cls != CLASS_NONE;
}

/* Whitespace at the end of an alternation: \s+(?!\S) then \s+ (a single
 * whitespace before a non-space is left alone by the regex, which the caller
 * turns into the same piece). */
static size_t match_trailing_space(const Subject *s, size_t pos) {
    size_t spaces = run_of_class(s, pos, UNICODE_WHITESPACE);
    if (spaces > 1 && pos + spaces < s->end) return spaces - 1;
    return spaces;
}

/* 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t match_gpt2(const Subject *s, size_t pos) {
    size_t n = match_contraction(s, pos, 0);
    if (n) return n;
    uint32_t cp = s->cps[pos];
    size_t lead = cp == ' ';
    uint8_t cls = class_at(s, pos + lead);
    if (cls == UNICODE_LETTER || cls == UNICODE_NUMBER) return lead + run_of_class(s, pos + lead, cls);
    if (is_other(cls)) {
        size_t p = pos + lead;
        while (is_other(class_at(s, p))) p++;
        return p - pos;
    }
    n = match_trailing_space(s, pos);
    return n ? n : 1;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,D}|
 *  ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+   (Llama 3: D = 3, Qwen2: D = 1) */
static size_t match_llama3_family(const Subject *s, size_t pos, size_t max_digits) {
    size_t n = match_contraction(s, pos, 1);
    if (n) return n;
    uint32_t cp = s->cps[pos];
    uint8_t cls = s->cls[pos];
    if (!is_newline(cp) && cls != UNICODE_NUMBER) {
        if (cls == UNICODE_LETTER || class_at(s, pos + 1) == UNICODE_LETTER)
            return 1 + run_of_class(s, pos + 1, UNICODE_LETTER);
    }
    if (cls == UNICODE_NUMBER) {
        n = run_of_class(s, pos, UNICODE_NUMBER);
        return n < max_digits ? n : max_digits;
    }
    size_t lead = cp == ' ';
    uint8_t next = class_at(s, pos + lead);
    if (is_other(next) || next == CLASS_NONE) {
        size_t p = pos + lead;
        while (is_other(class_at(s, p))) p++;
        while (p < s->end && is_newline(s->cps[p])) p++;
        return p - pos;
    }
    size_t spaces = 0, after_last_newline = 0;
    while (class_at(s, pos + spaces) == UNICODE_WHITESPACE) {
        if (is_newline(s->cps[pos + spaces])) after_last_newline = spaces + 1;
        spaces++;
    }
    if (after_last_newline) return after_last_newline;
    n = match_trailing_space(s, pos);
    return n ? n : 1;
}

static size_t match_llama3(const Subject *s, size_t pos) {
    return match_llama3_family(s, pos, 3);
}

static size_t match_qwen2(const Subject *s, size_t pos) {
    return match_llama3_family(s, pos, 1);
}

/* \p{N} */
static size_t match_one_number(const Subject *s, size_t pos) {
    return s->cls[pos] == UNICODE_NUMBER;
}

/* \p{N}+ */
static size_t match_numbers(const Subject *s, size_t pos) {
    return run_of_class(s, pos, UNICODE_NUMBER);
}

/* [0-9][0-9][0-9] */
static size_t match_three_digits(const Subject *s, size_t pos) {
    for (size_t i = 0; i < 3; i++) {
        uint32_t cp = cp_at(s, pos + i);
        if (cp < '0' || cp > '9') return 0;
    }
    return 3;
}

static size_t punctuation_run(const Subject *s, size_t pos, const char *extra) {
    size_t p = pos;
    while (p < s->end) {
        uint32_t cp = s->cps[p];
        if (s->cls[p] != UNICODE_PUNCTUATION && !(cp < 128 && cp && strchr(extra, (int)cp))) break;
        p++;
    }
    return p - pos;
}

/* [\p{P}\$\+<=>\^~\|`]+ */
static size_t match_falcon_punctuation(const Subject *s, size_t pos) {
    return punctuation_run(s, pos, "$+<=>^~|`");
}

/* [\p{P}\$\+<=>\^~\|]+ */
static size_t match_default_punctuation(const Subject *s, size_t pos) {
    return punctuation_run(s, pos, "$+<=>^~|");
}

/* [\r\n] */
static size_t match_newline(const Subject *s, size_t pos) {
    return is_newline(s->cps[pos]);
}

/* \s?\p{L}+ and \s?\p{P}+ */
static size_t space_then_run(const Subject *s, size_t pos, uint8_t cls) {
    size_t lead = s->cls[pos] == UNICODE_WHITESPACE && class_at(s, pos + 1) == cls;
    size_t n = run_of_class(s, pos + lead, cls);
    return n ? lead + n : 0;
}

static size_t match_space_letters(const Subject *s, size_t pos) {
    return space_then_run(s, pos, UNICODE_LETTER);
}

static size_t match_space_punctuation(const Subject *s, size_t pos) {
    return space_then_run(s, pos, UNICODE_PUNCTUATION);
}

/* [一-龥ࠀ-一가-퟿]+ */
static size_t match_cjk(const Subject *s, size_t pos) {
    size_t p = pos;
    while (p < s->end) {
        uint32_t cp = s->cps[p];
        if (!((cp >= 0x4E00 && cp <= 0x9FA5) || (cp >= 0x0800 && cp <= 0x4E00) ||
              (cp >= 0xAC00 && cp <= 0xD7FF)))
            break;
        p++;
    }
    return p - pos;
}

typedef struct {
    Matcher match;
    int collapsed; /* sees llama.cpp's collapsed classes (std::regex with \p{..}) */
} Rule;

#define MAX_RULES 5

typedef struct {
    Rule rules[MAX_RULES];
    int count;
} RuleList;

static RuleList rules_for(PretokenizerKind kind) {
    switch (kind) {
    case PRETOKENIZER_GPT2:
        return (RuleList){{{match_gpt2, 0}}, 1};
    case PRETOKENIZER_LLAMA3:
        return (RuleList){{{match_llama3, 0}}, 1};
    case PRETOKENIZER_QWEN2:
        return (RuleList){{{match_qwen2, 1}}, 1};
    case PRETOKENIZER_STARCODER:
        return (RuleList){{{match_one_number, 1}, {match_gpt2, 0}}, 2};
    case PRETOKENIZER_DEEPSEEK_CODER:
        return (RuleList){{{match_newline, 0},
                           {match_space_letters, 1},
                           {match_space_punctuation, 1},
                           {match_cjk, 0},
                           {match_one_number, 1}},
                          5};
    case PRETOKENIZER_FALCON:
        return (RuleList){{{match_falcon_punctuation, 1}, {match_gpt2, 0}, {match_three_digits, 0}}, 3};
    case PRETOKENIZER_DEFAULT:
    default:
        return (RuleList){
            {{match_default_punctuation, 1}, {match_gpt2, 0}, {match_numbers, 1}, {match_three_digits, 0}},
            4};
    }
}

typedef struct {
    const char *name;
    PretokenizerKind kind;
} PretokenizerName;

static const PretokenizerName known_names[] = {
    {"default", PRETOKENIZER_DEFAULT},
    {"gpt-2", PRETOKENIZER_GPT2},
    {"gpt2", PRETOKENIZER_GPT2},
    {"mpt", PRETOKENIZER_GPT2},
    {"olmo", PRETOKENIZER_GPT2},
    {"jais", PRETOKENIZER_GPT2},
    {"llama-bpe", PRETOKENIZER_LLAMA3},
    {"llama3", PRETOKENIZER_LLAMA3},
    {"llama-v3", PRETOKENIZER_LLAMA3},
    {"dbrx", PRETOKENIZER_LLAMA3},
    {"smaug-bpe", PRETOKENIZER_LLAMA3},
    {"qwen2", PRETOKENIZER_QWEN2},
    {"stablelm2", PRETOKENIZER_QWEN2},
    {"starcoder", PRETOKENIZER_STARCODER},
    {"smollm", PRETOKENIZER_STARCODER},
    {"refact", PRETOKENIZER_STARCODER},
    {"command-r", PRETOKENIZER_STARCODER},
    {"codeshell", PRETOKENIZER_STARCODER},
    {"deepseek-coder", PRETOKENIZER_DEEPSEEK_CODER},
    {"falcon", PRETOKENIZER_FALCON},
};

int pretokenizer_from_name(const char *name, size_t len, PretokenizerKind *out) {
    for (size_t i = 0; i < sizeof known_names / sizeof known_names[0]; i++) {
        if (strlen(known_names[i].name) == len && memcmp(known_names[i].name, name, len) == 0) {
            *out = known_names[i].kind;
            return 0;
        }
    }
    return -1;
}

int pretokenizer_ignores_merges(PretokenizerKind kind) {
    return kind == PRETOKENIZER_LLAMA3;
}

/* Splits [start, end) by one rule: matches and the gaps between them. */
static size_t split_piece(const Rule *rule, const uint32_t *cps, const uint8_t *cls, size_t start, size_t end,
                          size_t *out) {
    Subject s = {cps + start, cls + start, end - start};
    size_t count = 0, gap_start = 0, pos = 0;
    while (pos < s.end) {
        size_t n = rule->match(&s, pos);
        if (n == 0) {
            pos++;
            continue;
        }
        if (gap_start < pos) out[count++] = start + pos;
        pos += n;
        out[count++] = start + pos;
        gap_start = pos;
    }
    if (gap_start < s.end) out[count++] = end;
    return count;
}

long pretokenize(PretokenizerKind kind, const uint32_t *cps, size_t count, size_t *ends) {
    if (count == 0) return 0;
    /* Exact classes, collapsed classes, and a second list of piece ends. */
    void *block = malloc(2 * count + count * sizeof(size_t));
    if (!block) return -1;
    size_t *scratch = block;
    uint8_t *exact = (uint8_t *)(scratch + count);
    uint8_t *collapsed = exact + count;
    for (size_t i = 0; i < count; i++) {
        exact[i] = (uint8_t)unicode_class(cps[i]);
        collapsed[i] = (uint8_t)(cps[i] < 128 ? exact[i] : unicode_class_collapsed(cps[i]));
    }

    RuleList list = rules_for(kind);
    size_t pieces = 1;
    ends[0] = count;
    for (int r = 0; r < list.count; r++) {
        const uint8_t *cls = list.rules[r].collapsed ? collapsed : exact;
        size_t out = 0, start = 0;
        for (size_t i = 0; i < pieces; i++) {
            out += split_piece(&list.rules[r], cps, cls, start, ends[i], scratch + out);
            start = ends[i];
        }
        memcpy(ends, scratch, out * sizeof(size_t));
        pieces = out;
    }
    free(block);
    return (long)pieces;
}
