/* pretokenize.h - the regex splits that byte-level BPE vocabularies apply
 * before merging (tokenizer.ggml.pre), written as small hand-made matchers
 * that reproduce llama.cpp's results (its hand-written gpt2/llama3 splitters,
 * and its std::regex path with collapsed Unicode classes for the others). */
#ifndef LLM_PRETOKENIZE_H
#define LLM_PRETOKENIZE_H

#include <stddef.h>
#include <stdint.h>

/* The regex families: each is one list of regexes from llama.cpp's
 * llm_tokenizer_bpe, shared by every tokenizer.ggml.pre name that uses it
 * (the name table is in pretokenize_names.c). */
typedef enum {
    PRETOKENIZER_DEFAULT,        /* llama.cpp's fallback: punctuation, gpt2, numbers, 3 digits */
    PRETOKENIZER_GPT2,           /* 's|'t|.. ?\p{L}+| ?\p{N}+|.. */
    PRETOKENIZER_LLAMA3,         /* Llama 3: letters with one leading non-letter, \p{N}{1,3} */
    PRETOKENIZER_QWEN2,          /* the Llama 3 shape with single digits */
    PRETOKENIZER_STARCODER,      /* \p{N}, then gpt2 */
    PRETOKENIZER_DEEPSEEK_CODER, /* newlines, \s?\p{L}+, \s?\p{P}+, CJK, \p{N} */
    PRETOKENIZER_FALCON,         /* punctuation runs, gpt2, 3 digits */
    PRETOKENIZER_DEEPSEEK_LLM,   /* newlines, cased letters, ASCII/CJK punctuation, CJK, \p{N}+ */
    PRETOKENIZER_DEEPSEEK3,      /* \p{N}{1,3}, CJK and kana, then letters+marks / punct+symbols */
    PRETOKENIZER_BLOOM,          /* " ?[^(\s|.,!?...)]+" */
    PRETOKENIZER_VIKING,         /* bloom, then \p{N} */
    PRETOKENIZER_GPT4O,          /* cased words (CamelCase splits), \p{N}{1,3}, punct[\r\n/]* */
    PRETOKENIZER_TEKKEN,         /* gpt-4o's shape without contractions, single digits */
    PRETOKENIZER_SEED_CODER,     /* the Qwen2 shape, no newlines after punctuation */
} PretokenizerKind;

/* What a tokenizer.ggml.pre name asks for. */
typedef struct {
    PretokenizerKind kind;
    int ignore_merges; /* a pre-tokenised word that is a token skips the merges */
    int exact;         /* 0: the name is unknown, or its regexes are only approximated */
} PretokenizerChoice;

/* Looks up a tokenizer.ggml.pre value (len bytes, not NUL-terminated; len 0
 * = no key). Never refuses: an unknown name, or one whose regexes this code
 * only approximates, gets the closest family and a one-line warning in
 * warning (warning[0] == 0 otherwise). */
PretokenizerChoice pretokenizer_choose(const char *name, size_t len, char *warning, size_t warning_size);
/* The family's name, for messages. */
const char *pretokenizer_family_name(PretokenizerKind kind);

/* Splits the code points cps[0..count) into words: writes the end index of
 * each word to ends (room for count entries) and returns how many, or -1
 * when out of memory. */
long pretokenize(PretokenizerKind kind, const uint32_t *cps, size_t count, size_t *ends);

#endif
