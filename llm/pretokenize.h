/* pretokenize.h - the regex splits that byte-level BPE vocabularies apply
 * before merging (tokenizer.ggml.pre), written as small hand-made matchers
 * that reproduce llama.cpp's results (its hand-written gpt2/llama3 splitters,
 * and its std::regex path with collapsed Unicode classes for the others). */
#ifndef LLM_PRETOKENIZE_H
#define LLM_PRETOKENIZE_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    PRETOKENIZER_DEFAULT,        /* llama.cpp's fallback for "default" */
    PRETOKENIZER_GPT2,           /* gpt-2, mpt, olmo, jais */
    PRETOKENIZER_LLAMA3,         /* llama-bpe (Llama 3), dbrx, smaug-bpe */
    PRETOKENIZER_QWEN2,          /* qwen2, stablelm2 */
    PRETOKENIZER_STARCODER,      /* starcoder, smollm, refact, command-r, codeshell */
    PRETOKENIZER_DEEPSEEK_CODER, /* deepseek-coder */
    PRETOKENIZER_FALCON,         /* falcon */
} PretokenizerKind;

/* Maps a tokenizer.ggml.pre value (len bytes, not NUL-terminated) to its
 * splitter. Returns 0, or -1 for a name this code does not know. */
int pretokenizer_from_name(const char *name, size_t len, PretokenizerKind *out);
/* 1 when whole pre-tokenized words that are tokens skip the merges. */
int pretokenizer_ignores_merges(PretokenizerKind kind);

/* Splits the code points cps[0..count) into words: writes the end index of
 * each word to ends (room for count entries) and returns how many, or -1
 * when out of memory. */
long pretokenize(PretokenizerKind kind, const uint32_t *cps, size_t count, size_t *ends);

#endif
