/* fuzz_tokenizer.c - tokenizer_create, then encode/decode of a text.
 * Input: flags byte, uint16 LE tokenizer length, tokenizer bytes, text. */
#include <stdint.h>

#include "llm/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    int flags = data[0];
    size_t tok_len = (size_t)data[1] | (size_t)data[2] << 8;
    data += 3;
    size -= 3;
    if (tok_len > size) tok_len = size;
    /* vocab_size <= 0 means "every entry"; otherwise ask for 20 * k entries. */
    int vocab_size = (flags & 4) ? (flags >> 3) * 20 : 0;

    uint8_t *tok_bytes = malloc(tok_len ? tok_len : 1);
    memcpy(tok_bytes, data, tok_len);
    size_t text_len = size - tok_len;
    char *text = malloc(text_len + 1);
    memcpy(text, data + tok_len, text_len);
    text[text_len] = '\0';

    Tokenizer t;
    char err[256];
    memset(err, 0x55, sizeof err);
    int rc = tokenizer_create(&t, tok_bytes, tok_len, vocab_size, err, sizeof err);
    /* Strings are copied: the buffer may go now. */
    memset(tok_bytes, 0xAA, tok_len);
    free(tok_bytes);
    if (rc != 0) {
        fuzz_check_reason(err, sizeof err);
        free(text);
        return 0;
    }
    FUZZ_ASSERT(t.vocab_size > 0, "loaded an empty vocabulary");
    FUZZ_ASSERT(vocab_size <= 0 || t.vocab_size == vocab_size, "vocab_size not honoured");
    FUZZ_ASSERT(t.bytes_read <= tok_len, "read past the tokenizer bytes");

    size_t cap = tokenizer_max_tokens(strlen(text));
    int *tokens = malloc(cap * sizeof(int));
    memset(err, 0x55, sizeof err);
    int n = tokenizer_encode(&t, text, flags & 1, flags & 2, tokens, cap, err, sizeof err);
    if (n < 0) {
        fuzz_check_reason(err, sizeof err);
    } else {
        FUZZ_ASSERT((size_t)n <= cap, "encode wrote past its capacity");
        int prev = TOKEN_BOS;
        for (int i = 0; i < n; i++) {
            FUZZ_ASSERT(tokens[i] >= 0 && tokens[i] < t.vocab_size, "encode produced an out-of-range id");
            size_t len;
            const char *piece = tokenizer_decode(&t, prev, tokens[i], &len);
            FUZZ_ASSERT(piece != NULL, "decode returned NULL");
            if (len) FUZZ_ASSERT(memchr(piece, '\0', len) == NULL || len == 1, "decoded piece holds a NUL");
            prev = tokens[i];
        }
        /* A too-small buffer must be refused, not overrun. */
        if (cap > 1) {
            memset(err, 0x55, sizeof err);
            FUZZ_ASSERT(tokenizer_encode(&t, text, 1, 1, tokens, cap - 1, err, sizeof err) < 0,
                        "encode accepted a short buffer");
            fuzz_check_reason(err, sizeof err);
        }
    }
    size_t len;
    tokenizer_decode(&t, 0, -1, &len);
    tokenizer_decode(&t, TOKEN_BOS, t.vocab_size, &len);
    tokenizer_decode(&t, TOKEN_BOS, t.vocab_size - 1, &len);
    FUZZ_ASSERT(tokenizer_piece(&t, -5)[0] == '\0', "piece of a bad id is not empty");
    tokenizer_lookup(&t, text, strlen(text));
    free(tokens);
    free(text);
    tokenizer_destroy(&t);
    return 0;
}
