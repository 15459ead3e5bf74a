/* tokenizer_token_types.c - the token types llama.cpp corrects at load time.
 *
 * Converted vocabularies often store end-of-turn and fill-in-the-middle
 * markers as normal or user-defined tokens. llama.cpp's vocabulary loader
 * recognises them by their text and makes them control tokens (its
 * "control-looking token ... will be overridden" warning), so they are never
 * matched in text that is not parsed for special tokens and never printed.
 * These tables hold the same texts, so a prompt tokenises to llama.cpp's ids
 * (tests/host/test_tokenizer_differential.py checks it on real vocabularies). */
#include "lib/string.h"

#include "llm/tokenizer/tokenizer_internal.h"

/* End of turn, end of message, end of generation and fill-in-the-middle
 * markers: made control tokens. */
static const char *const control_texts[] = {"<|eot_id|>",
                                            "<|im_end|>",
                                            "<|end|>",
                                            "<|return|>",
                                            "<|call|>",
                                            "<|flush|>",
                                            "<|calls|>",
                                            "<end_of_turn>",
                                            "<|endoftext|>",
                                            "</s>",
                                            "<|eom_id|>",
                                            "<EOT>",
                                            "_<EOT>",
                                            "[EOT]",
                                            "[EOS]",
                                            "<|end_of_text|>",
                                            "<end_of_utterance>",
                                            "<eos>",
                                            "<turn|>",
                                            "<|tool_response>",
                                            "<|fim_prefix|>",
                                            "<fim-prefix>",
                                            "<fim_prefix>",
                                            "<PRE>",
                                            "<|code_prefix|>",
                                            "<|prefix|>",
                                            "<|fim_suffix|>",
                                            "<fim-suffix>",
                                            "<fim_suffix>",
                                            "<SUF>",
                                            "<|code_suffix|>",
                                            "<|suffix|>",
                                            "<|fim_middle|>",
                                            "<fim-middle>",
                                            "<fim_middle>",
                                            "<MID>",
                                            "<|code_middle|>",
                                            "<|middle|>",
                                            "<|fim_pad|>",
                                            "<fim-pad>",
                                            "<fim_pad>",
                                            "<PAD>",
                                            "[PAD]",
                                            "<|fim_repo|>",
                                            "<|repo_name|>",
                                            "<fim-repo>",
                                            "<REPO>",
                                            "<reponame>",
                                            "<|file_sep|>"};

/* gpt-oss's channel markers: always rendered, as user-defined tokens. */
static const char *const user_defined_texts[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

static int lookup_text(const Tokenizer *t, const char *text) {
    return tokenizer_lookup(t, text, strlen(text));
}

static void set_type(Tokenizer *t, const char *text, uint8_t type) {
    int id = lookup_text(t, text);
    if (id >= 0) t->token_types[id] = type;
}

void tokenizer_correct_token_types(Tokenizer *t) {
    for (size_t i = 0; i < sizeof control_texts / sizeof control_texts[0]; i++)
        set_type(t, control_texts[i], TOKEN_TYPE_CONTROL);
    for (size_t i = 0; i < sizeof user_defined_texts / sizeof user_defined_texts[0]; i++)
        set_type(t, user_defined_texts[i], TOKEN_TYPE_USER_DEFINED);
    /* The exceptions llama.cpp makes: "<|end|>" is an ordinary marker where
     * the harmony or solar-open markers exist, and "</s>" is text where
     * Gemma 4's "<|tool_response>" exists. */
    int has_return = lookup_text(t, "<|return|>") >= 0, has_call = lookup_text(t, "<|call|>") >= 0;
    int has_calls = lookup_text(t, "<|calls|>") >= 0, has_flush = lookup_text(t, "<|flush|>") >= 0;
    if ((has_return && has_call) || (has_calls && has_flush)) set_type(t, "<|end|>", TOKEN_TYPE_USER_DEFINED);
    if (lookup_text(t, "<|tool_response>") >= 0) set_type(t, "</s>", TOKEN_TYPE_NORMAL);
}
