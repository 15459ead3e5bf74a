/* pretokenize.c - pre-tokeniser regexes as hand-written matchers.
 *
 * llama.cpp applies a list of regexes one after the other: each one splits
 * every piece left by the previous one into its matches and the text between
 * them. A matcher here returns the length of the match of its regex at pos
 * (0 for none), with ECMAScript's ordered-alternation semantics. */
#include "llm/tokenizer/pretokenize.h"

#include "lib/stdlib.h"
#include "lib/string.h"
#include "llm/tokenizer/unicode.h"

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

/* The alternatives after the words in the Llama 3 / gpt-4o shapes:
 *  \p{N}{1,D}| ?[^\s\p{L}\p{N}]+T*|\s*[\r\n]+|\s+(?!\S)|\s+
 * where T is a newline, or also '/' (slash_tail), or nothing (no_tail). */
typedef struct {
    size_t max_digits;
    unsigned char slash_tail, no_tail;
} WordTail;

static int in_punctuation_tail(const WordTail *w, uint32_t cp) {
    return !w->no_tail && (is_newline(cp) || (w->slash_tail && cp == '/'));
}

static size_t match_after_words(const Subject *s, size_t pos, const WordTail *w) {
    uint32_t cp = s->cps[pos];
    if (s->cls[pos] == UNICODE_NUMBER) {
        size_t n = run_of_class(s, pos, UNICODE_NUMBER);
        return n < w->max_digits ? n : w->max_digits;
    }
    size_t lead = cp == ' ';
    uint8_t next = class_at(s, pos + lead);
    if (is_other(next) || next == CLASS_NONE) {
        size_t p = pos + lead;
        while (is_other(class_at(s, p))) p++;
        while (p < s->end && in_punctuation_tail(w, s->cps[p])) p++;
        return p - pos;
    }
    size_t spaces = 0, after_last_newline = 0;
    while (class_at(s, pos + spaces) == UNICODE_WHITESPACE) {
        if (is_newline(s->cps[pos + spaces])) after_last_newline = spaces + 1;
        spaces++;
    }
    if (after_last_newline) return after_last_newline;
    size_t n = match_trailing_space(s, pos);
    return n ? n : 1;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|<match_after_words>
 * (Llama 3: D = 3; Qwen2: D = 1; Seed-Coder: D = 1, no newlines after
 * punctuation) */
static size_t match_llama3_family(const Subject *s, size_t pos, const WordTail *w) {
    size_t n = match_contraction(s, pos, 1);
    if (n) return n;
    uint32_t cp = s->cps[pos];
    uint8_t cls = s->cls[pos];
    if (!is_newline(cp) && cls != UNICODE_NUMBER) {
        if (cls == UNICODE_LETTER || class_at(s, pos + 1) == UNICODE_LETTER)
            return 1 + run_of_class(s, pos + 1, UNICODE_LETTER);
    }
    return match_after_words(s, pos, w);
}

static size_t match_llama3(const Subject *s, size_t pos) {
    static const WordTail tail = {3, 0, 0};
    return match_llama3_family(s, pos, &tail);
}

static size_t match_qwen2(const Subject *s, size_t pos) {
    static const WordTail tail = {1, 0, 0};
    return match_llama3_family(s, pos, &tail);
}

static size_t match_seed_coder(const Subject *s, size_t pos) {
    static const WordTail tail = {1, 0, 1};
    return match_llama3_family(s, pos, &tail);
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

static int in_range(uint32_t cp, uint32_t first, uint32_t last) {
    return cp >= first && cp <= last;
}

/* ---- gpt-4o and Tekken: words split where the case changes (ASCII case
 * only: the regex's [^a-z] and [^A-Z]). */

static int letter_not_lower(const Subject *s, size_t p) {
    return class_at(s, p) == UNICODE_LETTER && !in_range(s->cps[p], 'a', 'z');
}

static int letter_not_upper(const Subject *s, size_t p) {
    return class_at(s, p) == UNICODE_LETTER && !in_range(s->cps[p], 'A', 'Z');
}

static size_t run_while(const Subject *s, size_t p, int (*pred)(const Subject *, size_t)) {
    size_t n = 0;
    while (pred(s, p + n)) n++;
    return n;
}

/* [^\r\n\p{L}\p{N}]?(U*L+|U+L*) with U = letter not a-z, L = letter not A-Z,
 * backtracking as ECMAScript does; then an optional contraction. */
static size_t cased_word(const Subject *s, size_t pos, int contractions) {
    uint8_t cls = s->cls[pos];
    size_t lead = cls != UNICODE_LETTER && cls != UNICODE_NUMBER && !is_newline(s->cps[pos]);
    size_t p = pos + lead, upper = run_while(s, p, letter_not_lower), n = 0;
    for (size_t k = upper + 1; k-- > 0;) {
        if (letter_not_upper(s, p + k)) {
            n = k + run_while(s, p + k, letter_not_upper);
            break;
        }
    }
    if (!n && upper) n = upper + run_while(s, p + upper, letter_not_upper);
    if (!n) return 0;
    return lead + n + (contractions ? match_contraction(s, p + n, 1) : 0);
}

static size_t match_gpt4o(const Subject *s, size_t pos) {
    static const WordTail tail = {3, 1, 0};
    size_t n = cased_word(s, pos, 1);
    return n ? n : match_after_words(s, pos, &tail);
}

static size_t match_tekken(const Subject *s, size_t pos) {
    static const WordTail tail = {1, 1, 0};
    size_t n = cased_word(s, pos, 0);
    return n ? n : match_after_words(s, pos, &tail);
}

/* ---- BLOOM, Poro, GPT-3 Finnish, Viking: " ?[^(\s|.,!?…。，、।۔،)]+" */
static int bloom_stop(const Subject *s, size_t p) {
    uint32_t cp = s->cps[p];
    if (s->cls[p] == UNICODE_WHITESPACE) return 1;
    if (cp < 128) return cp && strchr("(|.,!?)", (int)cp) != NULL;
    return cp == 0x2026 || cp == 0x3002 || cp == 0xFF0C || cp == 0x3001 || cp == 0x0964 || cp == 0x06D4 ||
           cp == 0x060C;
}

static size_t match_bloom(const Subject *s, size_t pos) {
    size_t lead = s->cps[pos] == ' ', p = pos + lead;
    while (p < s->end && !bloom_stop(s, p)) p++;
    return p > pos + lead ? p - pos : 0;
}

/* ---- DeepSeek LLM: its letter class lists the cased scripts (Latin,
 * Greek, Cyrillic, Armenian, Georgian, Cherokee, Glagolitic, Coptic,
 * Deseret...), here as blocks intersected with \p{L}. */
static int deepseek_cased_letter(const Subject *s, size_t p) {
    if (class_at(s, p) != UNICODE_LETTER) return 0;
    uint32_t cp = s->cps[p];
    static const uint32_t blocks[][2] = {
        {'A', 'Z'},         {'a', 'z'},         {0xB5, 0xB5},       {0xC0, 0x2AF},      {0x370, 0x52F},
        {0x531, 0x556},     {0x10A0, 0x10FF},   {0x13A0, 0x13FD},   {0x1C90, 0x1CBF},   {0x1D00, 0x1D2B},
        {0x1D6B, 0x1D9A},   {0x1E00, 0x1FFC},   {0x2102, 0x2184},   {0x2C00, 0x2CEE},   {0xA640, 0xA69B},
        {0xA722, 0xA78E},   {0xAB70, 0xABBF},   {0xFB00, 0xFB17},   {0xFF21, 0xFF3A},   {0xFF41, 0xFF5A},
        {0x10400, 0x1044F}, {0x104B0, 0x104FB}, {0x10C80, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
    };
    for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
        if (in_range(cp, blocks[i][0], blocks[i][1])) return 1;
    return 0;
}

/* [!-/:-~！-／：-～‘-‟　-。] */
static int deepseek_punctuation(const Subject *s, size_t p) {
    if (p >= s->end) return 0;
    uint32_t cp = s->cps[p];
    return in_range(cp, '!', '/') || in_range(cp, ':', '~') || in_range(cp, 0xFF01, 0xFF0F) ||
           in_range(cp, 0xFF1A, 0xFF5E) || in_range(cp, 0x2018, 0x201F) || in_range(cp, 0x3000, 0x3002);
}

/* \s?X+ for a character predicate X */
static size_t space_then(const Subject *s, size_t pos, int (*pred)(const Subject *, size_t)) {
    size_t lead = s->cls[pos] == UNICODE_WHITESPACE && pred(s, pos + 1);
    size_t n = run_while(s, pos + lead, pred);
    return n ? lead + n : 0;
}

static size_t match_deepseek_letters(const Subject *s, size_t pos) {
    return space_then(s, pos, deepseek_cased_letter);
}

static size_t match_deepseek_punctuation(const Subject *s, size_t pos) {
    return space_then(s, pos, deepseek_punctuation);
}

/* \s+$ */
static size_t match_final_space(const Subject *s, size_t pos) {
    size_t n = run_of_class(s, pos, UNICODE_WHITESPACE);
    return pos + n == s->end ? n : 0;
}

/* ---- DeepSeek V3: \p{N}{1,3}, [一-龥぀-ゟ゠-ヿ]+, then
 * [!-/:-@[-`{-~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
 * ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ (on collapsed classes marks count as letters, symbols as
 * "other"). */
static size_t match_digit_triples(const Subject *s, size_t pos) {
    size_t n = run_of_class(s, pos, UNICODE_NUMBER);
    return n < 3 ? n : 3;
}

static size_t match_cjk_kana(const Subject *s, size_t pos) {
    size_t p = pos;
    while (p < s->end && (in_range(s->cps[p], 0x4E00, 0x9FA5) || in_range(s->cps[p], 0x3040, 0x30FF))) p++;
    return p - pos;
}

static int ascii_letter(uint32_t cp) {
    return in_range(ascii_lower(cp), 'a', 'z');
}

static size_t match_deepseek3_words(const Subject *s, size_t pos) {
    static const WordTail tail = {3, 0, 0};
    uint32_t cp = s->cps[pos];
    uint8_t cls = s->cls[pos];
    if (cp < 128 && cp > ' ' && cp != 0x7F && !ascii_letter(cp) && !in_range(cp, '0', '9') &&
        ascii_letter(cp_at(s, pos + 1))) {
        size_t p = pos + 1;
        while (ascii_letter(cp_at(s, p))) p++;
        return p - pos;
    }
    if (cls == UNICODE_LETTER) return run_of_class(s, pos, UNICODE_LETTER);
    int may_lead = cls == UNICODE_NUMBER || (cls == UNICODE_WHITESPACE && !is_newline(cp));
    if (may_lead && class_at(s, pos + 1) == UNICODE_LETTER)
        return 1 + run_of_class(s, pos + 1, UNICODE_LETTER);
    if (cls == UNICODE_NUMBER) return 0;
    return match_after_words(s, pos, &tail);
}

typedef struct {
    Matcher match;
    int collapsed; /* sees llama.cpp's collapsed classes (std::regex with \p{..}) */
} Rule;

#define MAX_RULES 6

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
    case PRETOKENIZER_QWEN2: /* exact classes, as llama.cpp's own Qwen2 splitter: " 🦙." is one piece */
        return (RuleList){{{match_qwen2, 0}}, 1};
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
    case PRETOKENIZER_SEED_CODER:
        return (RuleList){{{match_seed_coder, 1}}, 1};
    case PRETOKENIZER_GPT4O:
        return (RuleList){{{match_gpt4o, 1}}, 1};
    case PRETOKENIZER_TEKKEN:
        return (RuleList){{{match_tekken, 1}}, 1};
    case PRETOKENIZER_BLOOM:
        return (RuleList){{{match_bloom, 0}}, 1};
    case PRETOKENIZER_VIKING:
        return (RuleList){{{match_bloom, 0}, {match_one_number, 1}}, 2};
    case PRETOKENIZER_DEEPSEEK_LLM:
        return (RuleList){{{match_newline, 0},
                           {match_deepseek_letters, 0},
                           {match_deepseek_punctuation, 0},
                           {match_final_space, 0},
                           {match_cjk, 0},
                           {match_numbers, 1}},
                          6};
    case PRETOKENIZER_DEEPSEEK3:
        return (RuleList){{{match_digit_triples, 1}, {match_cjk_kana, 0}, {match_deepseek3_words, 1}}, 3};
    case PRETOKENIZER_DEFAULT:
    default:
        return (RuleList){
            {{match_default_punctuation, 1}, {match_gpt2, 0}, {match_numbers, 1}, {match_three_digits, 0}},
            4};
    }
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
