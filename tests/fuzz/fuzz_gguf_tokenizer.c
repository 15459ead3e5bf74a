/* fuzz_gguf_tokenizer.c - GGUF vocabularies (llm/tokenizer/tokenizer_gguf.c, bpe.c,
 * pretokenize.c) and chat templates (llm/generate/chat.c): loading, encoding (with
 * and without special tokens), decoding, template detection and rendering.
 *
 * Input: a raw GGUF file (starts with "GGUF"), or a compact description the
 * harness turns into one, so mutations reach the vocabulary logic instead of
 * the container format:
 *   byte 0: bit0 gpt2 (else llama/SentencePiece), bit1 add_bos, bit2
 *           add_space_prefix, bit3 scores, bit4 token types, bit5 parse
 *           specials, bit6 add_eos, bit7 no merges key
 *   byte 1: bits0-2 pre-tokenizer, bits3-4 bos id (absent/0/last/-1),
 *           bits5-6 eos id (absent/1/last/vocab: out of range)
 *   then up to four parts separated by 0x01: tokens ('\n'-separated; a
 *   leading 0x02..0x06 makes it unknown/control/user-defined/unused/byte),
 *   merges ('\n'-separated), the text to encode, tokenizer.chat_template. */
#include <stdint.h>

#include "llm/generate/chat.h"
#include "llm/format/gguf.h"
#include "llm/tokenizer/tokenizer.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/host/gguf_layout.h"

static void put_key(GgufBuf *b, const char *key, uint32_t type) {
    gguf_buf_string(b, key, strlen(key));
    gguf_buf_u32(b, type);
}

/* Splits [p, end) at sep; returns the part, advances *p past the separator. */
static size_t next_part(const uint8_t **p, const uint8_t *end, uint8_t sep, const uint8_t **part) {
    *part = *p;
    const uint8_t *hit = memchr(*p, sep, (size_t)(end - *p));
    size_t len = (size_t)((hit ? hit : end) - *p);
    *p = hit ? hit + 1 : end;
    return len;
}

static void exercise(const Tokenizer *t, const char *text, size_t len, unsigned flags) {
    size_t cap = 4 * len + 16;
    int *ids = malloc(cap * sizeof(int));
    char err[256];
    memset(err, 0x55, sizeof err);
    int n = tokenizer_encode_ex(t, text, len, flags, ids, cap, err, sizeof err);
    if (n < 0) {
        fuzz_check_reason(err, sizeof err);
    } else {
        FUZZ_ASSERT((size_t)n <= cap, "more ids than the buffer holds");
        for (int i = 0; i < n; i++) {
            FUZZ_ASSERT(ids[i] >= 0 && ids[i] < t->vocab_size, "id outside the vocabulary");
            size_t plen;
            const char *piece = tokenizer_decode(t, i ? ids[i - 1] : -1, ids[i], &plen);
            FUZZ_ASSERT(piece != NULL, "decode returned NULL");
            volatile char sink = plen ? piece[plen - 1] : 0;
            (void)sink;
        }
    }
    free(ids);
}

static void exercise_chat(const Tokenizer *t, const char *user) {
    ChatTemplate tmpl = chat_template_detect(t);
    FUZZ_ASSERT(chat_template_name(tmpl) != NULL, "template without a name");
    static char rendered[4096];
    size_t len = chat_render_turn(tmpl, "be brief", user, 1, rendered, sizeof rendered);
    FUZZ_ASSERT(len < sizeof rendered, "render overran");
    exercise(t, rendered, len, TOKENIZE_PARSE_SPECIAL);
    const char *suffix = chat_answer_suffix(tmpl);
    FUZZ_ASSERT(suffix != NULL, "no answer suffix");
    exercise(t, suffix, strlen(suffix), TOKENIZE_PARSE_SPECIAL);
    /* A whole conversation, an earlier answer with a think block included. */
    const char *conversation[] = {user, "<think>\nx\n</think>\n\nok ", user};
    ChatOptions o = chat_default_options();
    o.enable_thinking = (user[0] & 1) == 0;
    static int ids[16384];
    char err[160];
    int n = chat_encode(tmpl, &o, t, "be brief /no_think", conversation, 3, ids, 16384, err, sizeof err);
    FUZZ_ASSERT(n >= 0 || err[0], "chat_encode failed without a reason");
    for (int i = 0; i < n; i++)
        FUZZ_ASSERT(ids[i] >= 0 && ids[i] < t->vocab_size, "conversation id out of range");
}

static uint8_t *describe(const uint8_t *data, size_t size, size_t *out_size, const uint8_t **text,
                         size_t *text_len) {
    uint8_t flags = data[0], choice = data[1];
    const uint8_t *p = data + 2, *end = data + size, *tokens, *merges, *chat;
    size_t tokens_len = next_part(&p, end, 1, &tokens);
    size_t merges_len = next_part(&p, end, 1, &merges);
    *text_len = next_part(&p, end, 1, text);
    size_t chat_len = next_part(&p, end, 1, &chat);
    int bpe = flags & 1;

    GgufBuf kv = {0}, toks = {0}, types = {0}, scores = {0};
    uint64_t n_kv = 0, vocab = 0;
    const uint8_t *q = tokens, *tend = tokens + tokens_len, *piece;
    while (q < tend && vocab < 1024) {
        size_t len = next_part(&q, tend, '\n', &piece);
        int32_t type = TOKEN_TYPE_NORMAL;
        if (len && piece[0] >= 2 && piece[0] <= 6) {
            static const int32_t marks[] = {TOKEN_TYPE_UNKNOWN, TOKEN_TYPE_CONTROL, TOKEN_TYPE_USER_DEFINED,
                                            TOKEN_TYPE_UNUSED, TOKEN_TYPE_BYTE};
            type = marks[piece[0] - 2];
            piece++, len--;
        }
        gguf_buf_string(&toks, (const char *)piece, len);
        gguf_buf_u32(&types, (uint32_t)type);
        float score = -(float)vocab;
        gguf_buf_append(&scores, &score, 4);
        vocab++;
    }
    put_key(&kv, "tokenizer.ggml.model", GGUF_TYPE_STRING);
    gguf_buf_string(&kv, bpe ? "gpt2" : "llama", bpe ? 4 : 5);
    put_key(&kv, "tokenizer.ggml.tokens", GGUF_TYPE_ARRAY);
    gguf_buf_u32(&kv, GGUF_TYPE_STRING);
    gguf_buf_u64(&kv, vocab);
    gguf_buf_append(&kv, toks.p, toks.n);
    n_kv += 2;
    if (flags & 8) {
        put_key(&kv, "tokenizer.ggml.scores", GGUF_TYPE_ARRAY);
        gguf_buf_u32(&kv, GGUF_TYPE_FLOAT32);
        gguf_buf_u64(&kv, vocab);
        gguf_buf_append(&kv, scores.p, scores.n);
        n_kv++;
    }
    if (flags & 16) {
        put_key(&kv, "tokenizer.ggml.token_type", GGUF_TYPE_ARRAY);
        gguf_buf_u32(&kv, GGUF_TYPE_INT32);
        gguf_buf_u64(&kv, vocab);
        gguf_buf_append(&kv, types.p, types.n);
        n_kv++;
    }
    if (!(flags & 128)) {
        GgufBuf m = {0};
        uint64_t count = 0;
        const uint8_t *r = merges, *mend = merges + merges_len, *line;
        while (r < mend && count < 4096) {
            size_t len = next_part(&r, mend, '\n', &line);
            gguf_buf_string(&m, (const char *)line, len);
            count++;
        }
        put_key(&kv, "tokenizer.ggml.merges", GGUF_TYPE_ARRAY);
        gguf_buf_u32(&kv, GGUF_TYPE_STRING);
        gguf_buf_u64(&kv, count);
        gguf_buf_append(&kv, m.p, m.n);
        free(m.p);
        n_kv++;
    }
    static const char *const pre[] = {NULL,     "gpt-2",          "llama-bpe", "qwen2",
                                      "falcon", "deepseek-coder", "starcoder", "default"};
    if (pre[choice & 7]) {
        put_key(&kv, "tokenizer.ggml.pre", GGUF_TYPE_STRING);
        gguf_buf_string(&kv, pre[choice & 7], strlen(pre[choice & 7]));
        n_kv++;
    }
    int32_t bos[] = {0, 0, (int32_t)vocab - 1, -1}, eos[] = {0, 1, (int32_t)vocab - 1, (int32_t)vocab};
    if ((choice >> 3) & 3) {
        put_key(&kv, "tokenizer.ggml.bos_token_id", GGUF_TYPE_INT32);
        gguf_buf_u32(&kv, (uint32_t)bos[(choice >> 3) & 3]);
        n_kv++;
    }
    if ((choice >> 5) & 3) {
        put_key(&kv, "tokenizer.ggml.eos_token_id", GGUF_TYPE_INT32);
        gguf_buf_u32(&kv, (uint32_t)eos[(choice >> 5) & 3]);
        n_kv++;
    }
    put_key(&kv, "tokenizer.ggml.add_bos_token", GGUF_TYPE_BOOL);
    gguf_buf_append(&kv, (uint8_t[]){(flags >> 1) & 1}, 1);
    put_key(&kv, "tokenizer.ggml.add_space_prefix", GGUF_TYPE_BOOL);
    gguf_buf_append(&kv, (uint8_t[]){(flags >> 2) & 1}, 1);
    n_kv += 2;
    if (chat_len) {
        put_key(&kv, "tokenizer.chat_template", GGUF_TYPE_STRING);
        gguf_buf_string(&kv, (const char *)chat, chat_len);
        n_kv++;
    }
    GgufBuf file = {0};
    gguf_buf_u32(&file, GGUF_MAGIC);
    gguf_buf_u32(&file, 3);
    gguf_buf_u64(&file, 0);
    gguf_buf_u64(&file, n_kv);
    gguf_buf_append(&file, kv.p, kv.n);
    free(kv.p), free(toks.p), free(types.p), free(scores.p);
    *out_size = file.n;
    return file.p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    uint8_t *file;
    size_t file_size;
    const uint8_t *text = (const uint8_t *)"Hello world, <|im_start|>user 123";
    size_t text_len = strlen((const char *)text);
    unsigned flags = TOKENIZE_ADD_BOS | TOKENIZE_PARSE_SPECIAL;
    if (size >= 4 && memcmp(data, "GGUF", 4) == 0) {
        file = malloc(size);
        memcpy(file, data, size);
        file_size = size;
    } else {
        file = describe(data, size, &file_size, &text, &text_len);
        flags = (data[0] & 2 ? TOKENIZE_ADD_BOS : 0) | (data[0] & 32 ? TOKENIZE_PARSE_SPECIAL : 0) |
                (data[0] & 64 ? TOKENIZE_ADD_EOS : 0);
    }
    /* The text in its own exact-size buffer, so overreads are caught. */
    char *own_text = malloc(text_len ? text_len : 1);
    memcpy(own_text, text, text_len);
    Tokenizer t;
    char err[256];
    memset(err, 0x55, sizeof err);
    if (tokenizer_create_gguf(&t, file, file_size, err, sizeof err) != 0) {
        fuzz_check_reason(err, sizeof err);
    } else {
        FUZZ_ASSERT(t.vocab_size > 0, "empty vocabulary loaded");
        exercise(&t, own_text, text_len, flags);
        exercise(&t, own_text, text_len, flags ^ TOKENIZE_PARSE_SPECIAL);
        char user[256];
        size_t n = text_len < sizeof user - 1 ? text_len : sizeof user - 1;
        memcpy(user, own_text, n);
        user[n] = '\0';
        exercise_chat(&t, user);
        tokenizer_destroy(&t);
    }
    free(own_text);
    free(file);
    return 0;
}
