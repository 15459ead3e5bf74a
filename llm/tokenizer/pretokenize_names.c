/* pretokenize_names.c - every tokenizer.ggml.pre value llama.cpp knows, and
 * the regex family (pretokenize.c) that splits for it.
 *
 * One row per name. `exact` is 0 where llama.cpp's regex list for the name
 * differs from the family in ways that show on some inputs (the row's note
 * says how); such a vocabulary still loads, with a warning. */
#include "lib/format.h"
#include "lib/string.h"
#include "llm/tokenizer/pretokenize.h"

typedef struct {
    const char *name;
    PretokenizerKind kind;
    unsigned char ignore_merges, exact;
    const char *note; /* what the approximation misses */
} PretokenizerName;

#define EXACT(name, kind)                                                                                    \
    { name, kind, 0, 1, NULL }
#define EXACT_WHOLE(name, kind)                                                                              \
    { name, kind, 1, 1, NULL } /* ignore_merges */
#define NEAR(name, kind, merges, note)                                                                       \
    { name, kind, merges, 0, note }

static const PretokenizerName known_names[] = {
    EXACT("default", PRETOKENIZER_DEFAULT),
    /* Llama 3's regex */
    EXACT_WHOLE("llama3", PRETOKENIZER_LLAMA3),
    EXACT_WHOLE("llama-v3", PRETOKENIZER_LLAMA3),
    EXACT_WHOLE("llama-bpe", PRETOKENIZER_LLAMA3),
    EXACT_WHOLE("falcon3", PRETOKENIZER_LLAMA3),
    EXACT_WHOLE("falcon-h1", PRETOKENIZER_LLAMA3),
    EXACT_WHOLE("pixtral", PRETOKENIZER_LLAMA3),
    EXACT_WHOLE("midm-2.0", PRETOKENIZER_LLAMA3),
    EXACT_WHOLE("lfm2", PRETOKENIZER_LLAMA3),
    EXACT_WHOLE("jina-v5-nano", PRETOKENIZER_LLAMA3),
    EXACT("dbrx", PRETOKENIZER_LLAMA3),
    EXACT("smaug-bpe", PRETOKENIZER_LLAMA3),
    EXACT("chatglm-bpe", PRETOKENIZER_LLAMA3),
    EXACT("glm4", PRETOKENIZER_LLAMA3),
    NEAR("minicpm5", PRETOKENIZER_LLAMA3, 1, "non-ASCII letters classed as std::regex sees them"),
    NEAR("jais-2", PRETOKENIZER_LLAMA3, 0, "long space runs are not cut into power-of-two pieces"),
    /* gpt2's regex */
    EXACT("gpt-2", PRETOKENIZER_GPT2),
    EXACT("gpt2", PRETOKENIZER_GPT2),
    EXACT("mpt", PRETOKENIZER_GPT2),
    EXACT("olmo", PRETOKENIZER_GPT2),
    EXACT("jais", PRETOKENIZER_GPT2),
    EXACT("trillion", PRETOKENIZER_GPT2),
    EXACT("granite-docling", PRETOKENIZER_GPT2),
    EXACT("phi-2", PRETOKENIZER_GPT2),
    EXACT("jina-es", PRETOKENIZER_GPT2),
    EXACT("jina-de", PRETOKENIZER_GPT2),
    EXACT("gigachat", PRETOKENIZER_GPT2),
    EXACT("jina-v2-es", PRETOKENIZER_GPT2),
    EXACT("jina-v2-de", PRETOKENIZER_GPT2),
    EXACT("a.x-4.0", PRETOKENIZER_GPT2),
    EXACT("mellum", PRETOKENIZER_GPT2),
    EXACT("modern-bert", PRETOKENIZER_GPT2),
    EXACT("jina-v1-en", PRETOKENIZER_GPT2),
    EXACT("jina-v2-code", PRETOKENIZER_GPT2),
    EXACT("roberta-bpe", PRETOKENIZER_GPT2),
    EXACT("exaone4", PRETOKENIZER_GPT2),
    /* \p{N}, then gpt2 */
    EXACT("starcoder", PRETOKENIZER_STARCODER),
    EXACT("refact", PRETOKENIZER_STARCODER),
    EXACT("command-r", PRETOKENIZER_STARCODER),
    EXACT("smollm", PRETOKENIZER_STARCODER),
    EXACT("codeshell", PRETOKENIZER_STARCODER),
    EXACT("exaone", PRETOKENIZER_STARCODER),
    EXACT("minerva-7b", PRETOKENIZER_STARCODER),
    EXACT("mellum2", PRETOKENIZER_STARCODER),
    NEAR("chameleon", PRETOKENIZER_STARCODER, 0, "no sentinel, image, tab/space or lone-punctuation splits"),
    /* Qwen2's regex (bailingmoe's and grok-2's spell it differently but match the same) */
    EXACT("qwen2", PRETOKENIZER_QWEN2),
    EXACT("deepseek-r1-qwen", PRETOKENIZER_QWEN2),
    EXACT("kormo", PRETOKENIZER_QWEN2),
    EXACT("f2llmv2", PRETOKENIZER_QWEN2),
    EXACT("stablelm2", PRETOKENIZER_QWEN2),
    EXACT("megrez", PRETOKENIZER_QWEN2),
    EXACT("hunyuan", PRETOKENIZER_QWEN2),
    EXACT("solar-open", PRETOKENIZER_QWEN2),
    EXACT("grok-2", PRETOKENIZER_QWEN2),
    EXACT("bailingmoe", PRETOKENIZER_QWEN2),
    EXACT("bailingmoe2", PRETOKENIZER_QWEN2),
    EXACT("llada-moe", PRETOKENIZER_QWEN2),
    NEAR("qwen35", PRETOKENIZER_QWEN2, 0, "combining marks are not joined to letters"),
    NEAR("laguna", PRETOKENIZER_QWEN2, 0, "lines are not split apart first"),
    NEAR("exaone-moe", PRETOKENIZER_QWEN2, 0, "words are not joined across single spaces"),
    NEAR("youtu", PRETOKENIZER_QWEN2, 1, "no case or CJK-script splits"),
    EXACT("seed-coder", PRETOKENIZER_SEED_CODER),
    EXACT("deepseek-coder", PRETOKENIZER_DEEPSEEK_CODER),
    EXACT("deepseek-llm", PRETOKENIZER_DEEPSEEK_LLM),
    EXACT("deepseek-v3", PRETOKENIZER_DEEPSEEK3),
    EXACT("hunyuan-dense", PRETOKENIZER_DEEPSEEK3),
    EXACT("joyai-llm", PRETOKENIZER_DEEPSEEK3),
    NEAR("afmoe", PRETOKENIZER_DEEPSEEK3, 0, "digit and Thai/Khmer/Myanmar script splits differ"),
    EXACT("falcon", PRETOKENIZER_FALCON),
    EXACT("poro-chat", PRETOKENIZER_BLOOM),
    EXACT("bloom", PRETOKENIZER_BLOOM),
    EXACT("gpt3-finnish", PRETOKENIZER_BLOOM),
    EXACT("viking", PRETOKENIZER_VIKING),
    /* gpt-4o's cased-word regex */
    EXACT("gpt-4o", PRETOKENIZER_GPT4O),
    EXACT("llama4", PRETOKENIZER_GPT4O),
    EXACT("kanana2", PRETOKENIZER_GPT4O),
    EXACT("talkie", PRETOKENIZER_GPT4O),
    EXACT("minimax-m2", PRETOKENIZER_GPT4O),
    NEAR("granite-embed-multi-97m", PRETOKENIZER_GPT4O, 1, "combining marks are not joined to letters"),
    NEAR("tiny_aya", PRETOKENIZER_GPT4O, 0, "digits are not grouped in threes from the right"),
    NEAR("cohere2moe", PRETOKENIZER_GPT4O, 0, "digits are not grouped in threes from the right"),
    NEAR("kimi-k2", PRETOKENIZER_GPT4O, 0, "Han runs are not split apart first"),
    EXACT_WHOLE("tekken", PRETOKENIZER_TEKKEN),
    NEAR("superbpe", PRETOKENIZER_DEFAULT, 0, "digits are not grouped in threes from the right"),
    /* These split raw UTF-8 rather than GPT-2 byte characters. */
    NEAR("gemma4", PRETOKENIZER_GPT2, 0, "raw-UTF-8 line splitting is not implemented"),
    NEAR("granite-embed-multi-311m", PRETOKENIZER_GPT2, 0, "raw-UTF-8 line splitting is not implemented"),
    NEAR("sarvam-moe", PRETOKENIZER_GPT2, 0, "raw-UTF-8 line splitting is not implemented"),
    NEAR("whitespace", PRETOKENIZER_GPT2, 0, "raw-UTF-8 whitespace splitting is not implemented"),
};

static const char *const family_names[] = {
    [PRETOKENIZER_DEFAULT] = "default",       [PRETOKENIZER_GPT2] = "gpt2",
    [PRETOKENIZER_LLAMA3] = "llama3",         [PRETOKENIZER_QWEN2] = "qwen2",
    [PRETOKENIZER_STARCODER] = "starcoder",   [PRETOKENIZER_DEEPSEEK_CODER] = "deepseek-coder",
    [PRETOKENIZER_FALCON] = "falcon",         [PRETOKENIZER_DEEPSEEK_LLM] = "deepseek-llm",
    [PRETOKENIZER_DEEPSEEK3] = "deepseek-v3", [PRETOKENIZER_BLOOM] = "bloom",
    [PRETOKENIZER_VIKING] = "viking",         [PRETOKENIZER_GPT4O] = "gpt-4o",
    [PRETOKENIZER_TEKKEN] = "tekken",         [PRETOKENIZER_SEED_CODER] = "seed-coder",
};

const char *pretokenizer_family_name(PretokenizerKind kind) {
    return (unsigned)kind < sizeof family_names / sizeof family_names[0] ? family_names[kind] : "?";
}

PretokenizerChoice pretokenizer_choose(const char *name, size_t len, char *warning, size_t warning_size) {
    if (warning_size) warning[0] = '\0';
    if (len == 0) return (PretokenizerChoice){PRETOKENIZER_DEFAULT, 0, 1};
    for (size_t i = 0; i < sizeof known_names / sizeof known_names[0]; i++) {
        const PretokenizerName *row = &known_names[i];
        if (strlen(row->name) != len || memcmp(row->name, name, len) != 0) continue;
        if (!row->exact)
            snprintf(warning, warning_size, "pre-tokenizer '%s' approximated by '%s' (%s)", row->name,
                     pretokenizer_family_name(row->kind), row->note);
        return (PretokenizerChoice){row->kind, row->ignore_merges, row->exact};
    }
    /* The closest name: the longest shared prefix of at least 4 bytes
     * ("qwen3" -> qwen2's family), else the family most recent models use. */
    const PretokenizerName *closest = NULL;
    size_t best = 3;
    for (size_t i = 0; i < sizeof known_names / sizeof known_names[0]; i++) {
        const char *known = known_names[i].name;
        size_t shared = 0;
        while (shared < len && known[shared] && known[shared] == name[shared]) shared++;
        if (shared > best) best = shared, closest = &known_names[i];
    }
    PretokenizerKind kind = closest ? closest->kind : PRETOKENIZER_LLAMA3;
    snprintf(warning, warning_size, "unknown pre-tokenizer '%.*s', splitting as '%s' instead",
             (int)(len > 40 ? 40 : len), name, pretokenizer_family_name(kind));
    return (PretokenizerChoice){kind, 0, 0};
}
