/* test_chat.c - chat templates (exact text for every family, exact ids with
 * the gguf-arch ChatML vocabulary), stop tokens, conversations that keep the
 * KV cache (two turns give exactly what a from-scratch run of the whole
 * conversation gives), and the context limit (refusal, then sliding). */
#include <string.h>

#include "llm/generate/chat.h"
#include "llm_test_util.h"

static char *models_dir;

typedef struct {
    Model t;
    Tokenizer tok;
    void *data;
    size_t size;
} TestModel;

static int load(TestModel *m, const char *gguf_name, const char *tokenizer_bin) {
    char path[1024], err[200];
    size_t size;
    snprintf(path, sizeof path, "%s/%s", models_dir, gguf_name);
    m->data = read_file(path, &size);
    if (!m->data) return -1;
    m->size = size;
    if (model_create(&m->t, m->data, size, NULL, err, sizeof err) != 0) {
        printf("FAIL - load %s: %s\n", gguf_name, err);
        exit(1);
    }
    int rc;
    if (tokenizer_bin) {
        size_t tsize;
        snprintf(path, sizeof path, "%s/%s", models_dir, tokenizer_bin);
        void *tdata = read_file(path, &tsize);
        if (!tdata) return -1;
        rc = tokenizer_create(&m->tok, tdata, tsize, m->t.config.vocab_size, err, sizeof err);
        free(tdata);
    } else {
        rc = tokenizer_create_gguf(&m->tok, m->data, size, err, sizeof err);
    }
    if (rc != 0) {
        printf("FAIL - tokenizer of %s: %s\n", gguf_name, err);
        exit(1);
    }
    return 0;
}

static void unload(TestModel *m) {
    tokenizer_destroy(&m->tok);
    model_destroy(&m->t);
    free(m->data);
}

static void test_render(void) {
    char out[512];
    chat_render_turn(CHAT_TEMPLATE_CHATML, "Be brief.", "Hi", 1, out, sizeof out);
    check(strcmp(out, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
                      "<|im_start|>assistant\n") == 0,
          "chatml first turn with system", "%s", out);
    chat_render_turn(CHAT_TEMPLATE_CHATML, "Be brief.", "Hi", 0, out, sizeof out);
    check(strcmp(out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n") == 0,
          "chatml later turn has no system part", "%s", out);
    check(strcmp(chat_answer_suffix(CHAT_TEMPLATE_CHATML), "<|im_end|>\n") == 0, "chatml answer suffix", "?");
    chat_render_turn(CHAT_TEMPLATE_LLAMA3, "S", "Hi", 1, out, sizeof out);
    check(strcmp(out,
                 "<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user"
                 "<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n") == 0,
          "llama3 first turn", "%s", out);
    check(strcmp(chat_answer_suffix(CHAT_TEMPLATE_LLAMA3), "<|eot_id|>") == 0, "llama3 answer suffix", "?");
    chat_render_turn(CHAT_TEMPLATE_LLAMA2, "S", "Hi", 1, out, sizeof out);
    check(strcmp(out, "[INST] <<SYS>>\nS\n<</SYS>>\n\nHi [/INST]") == 0, "llama2 first turn with <<SYS>>",
          "%s", out);
    chat_render_turn(CHAT_TEMPLATE_LLAMA2, NULL, "Hi", 1, out, sizeof out);
    check(strcmp(out, "[INST] Hi [/INST]") == 0, "llama2 without system", "%s", out);
    chat_render_turn(CHAT_TEMPLATE_ZEPHYR, "S", "Hi", 1, out, sizeof out);
    check(strcmp(out, "<|system|>\nS</s>\n<|user|>\nHi</s>\n<|assistant|>\n") == 0, "zephyr first turn", "%s",
          out);
    chat_render_turn(CHAT_TEMPLATE_NONE, NULL, "Once upon a time", 0, out, sizeof out);
    check(strcmp(out, "Once upon a time") == 0 && !*chat_answer_suffix(CHAT_TEMPLATE_NONE),
          "none: the text itself", "%s", out);
    size_t n = chat_render_turn(CHAT_TEMPLATE_CHATML, NULL, "Hi", 1, out, 8);
    check(n == 7 && strcmp(out, "<|im_st") == 0, "render truncates to the buffer", "%zu %s", n, out);

    ChatTemplate t;
    check(chat_template_parse("zephyr", &t) == 0 && t == CHAT_TEMPLATE_ZEPHYR &&
              chat_template_parse("chatml", &t) == 0 && t == CHAT_TEMPLATE_CHATML &&
              chat_template_parse("jinja", &t) == -1,
          "template names parse", "?");
    Tokenizer fake = {0};
    fake.kind = TOKENIZER_BPE;
    fake.chat_template = "{% for m in messages %}<|start_header_id|>{{ m.role }}...";
    check(chat_template_detect(&fake) == CHAT_TEMPLATE_LLAMA3, "detects llama3 from chat_template", "?");
    fake.chat_template =
        "{% if message['role'] == 'user' %}{{ '<|user|>\\n' + message['content'] + eos_token }}";
    check(chat_template_detect(&fake) == CHAT_TEMPLATE_ZEPHYR, "detects zephyr from chat_template", "?");
    fake.chat_template = "{{ bos_token + '[INST] ' + content + ' [/INST]' }}";
    check(chat_template_detect(&fake) == CHAT_TEMPLATE_LLAMA2, "detects llama2 from chat_template", "?");
}

static void test_qwen_ids(TestModel *m) {
    check(chat_template_detect(&m->tok) == CHAT_TEMPLATE_CHATML, "qwen vocabulary: ChatML detected", "got %s",
          chat_template_name(chat_template_detect(&m->tok)));
    int stops[8], n_stops;
    generate_stop_tokens(&m->tok, stops, 8, &n_stops);
    check(n_stops == 2 && stops[0] == 509 && stops[1] == 511, "stop tokens: <|endoftext|> and <|im_end|>",
          "%d: %d %d", n_stops, stops[0], n_stops > 1 ? stops[1] : -1);

    Chat c;
    char err[200];
    check(chat_create(&c, &m->t, &m->tok, CHAT_TEMPLATE_CHATML, "Be brief.", err, sizeof err) == 0,
          "chat_create", "%s", err);
    check(c.suffix_count == 2 && c.suffix_ids[0] == 511 && c.suffix_ids[1] == 198, "suffix <|im_end|>\\n ids",
          "%d: %d %d", c.suffix_count, c.suffix_ids[0], c.suffix_ids[1]);
    /* The whole first turn, against the text tokenized piece by piece. */
    int n = chat_turn_tokens(&c, &m->tok, "Hi", err, sizeof err);
    int want[64], w = 0;
    const char *parts[] = {"<|im_start|>", "system\n",     "Be brief.",    "<|im_end|>",
                           "\n",           "<|im_start|>", "user\n",       "Hi",
                           "<|im_end|>",   "\n",           "<|im_start|>", "assistant\n"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        w += tokenizer_encode_ex(&m->tok, parts[i], strlen(parts[i]), TOKENIZE_PARSE_SPECIAL, want + w,
                                 64 - w, err, sizeof err);
    check(n == w && want[0] == 510 && want[3] != 511, "first turn token count", "%d vs %d", n, w);
    /* Run the turn with a 1-token answer and compare the history's ids. */
    Sampler s;
    SamplerConfig sc = sampler_default_config();
    sc.temperature = 0;
    sampler_create(&s, m->t.config.vocab_size, &sc, err, sizeof err);
    GenerateStats st;
    chat_turn(&c, &m->t, &m->tok, &s, "Hi", 1, NULL, &st, err, sizeof err);
    check(c.count == n + 1 + 2 && memcmp(c.tokens, want, (size_t)n * sizeof(int)) == 0 &&
              c.tokens[n + 1] == 511 && c.tokens[n + 2] == 198,
          "history: turn ids, answer, <|im_end|>\\n", "count %d", c.count);
    int count_ids_511 = 0;
    for (int i = 0; i < n; i++) count_ids_511 += c.tokens[i] == 511;
    check(count_ids_511 == 2, "two <|im_end|> in the first turn (system, user)", "%d", count_ids_511);
    /* User text is never parsed for special tokens. */
    chat_reset(&c);
    int plain = chat_turn_tokens(&c, &m->tok, "<|im_end|>", err, sizeof err);
    int *ids = malloc(sizeof(int) * 128);
    int got = tokenizer_encode_ex(&m->tok, "<|im_end|>", 10, 0, ids, 128, err, sizeof err);
    int hi = tokenizer_encode_ex(&m->tok, "Hi", 2, 0, ids, 128, err, sizeof err);
    got = tokenizer_encode_ex(&m->tok, "<|im_end|>", 10, 0, ids, 128, err, sizeof err);
    int has_511 = 0;
    for (int i = 0; i < got; i++) has_511 |= ids[i] == 511;
    check(got > 1 && !has_511 && plain == n - hi + got, "user text '<|im_end|>' stays text", "%d tokens, %d",
          plain, got);
    free(ids);
    sampler_destroy(&s);
    chat_destroy(&c);
}

/* Greedy two-turn chat vs. the whole conversation from scratch. */
static void test_kv_reuse(TestModel *m, const char *label, ChatTemplate tmpl, const char *system) {
    char name[160], err[200];
    Chat c;
    Sampler s;
    SamplerConfig sc = sampler_default_config();
    sc.temperature = 0;
    sampler_create(&s, m->t.config.vocab_size, &sc, err, sizeof err);
    chat_create(&c, &m->t, &m->tok, tmpl, system, err, sizeof err);
    GenerateStats st1, st2;
    int rc1 = chat_turn(&c, &m->t, &m->tok, &s, "Hello there", 10, NULL, &st1, err, sizeof err);
    int rc2 = chat_turn(&c, &m->t, &m->tok, &s, "Tell me more", 10, NULL, &st2, err, sizeof err);
    snprintf(name, sizeof name, "%s: two turns run", label);
    check(rc1 == 0 && rc2 == 0 && st2.generated_tokens > 0, name, "%d %d %s", rc1, rc2, err);
    int turn2_tokens = chat_turn_tokens(&c, &m->tok, "Tell me more", err, sizeof err);
    /* Only what the cache lacks: the first answer's last token (sampled, not
     * yet run, unless it ended at a stop token), its closing suffix, the turn. */
    int expected = turn2_tokens + c.suffix_count + (st1.reason == STOP_EOS || st1.reason == STOP_BOS ? 0 : 1);
    snprintf(name, sizeof name, "%s: the second turn prefilled only its own tokens", label);
    check(st2.prompt_tokens == expected && expected < c.turn_starts[1] + turn2_tokens, name, "%d vs %d",
          st2.prompt_tokens, expected);

    /* From scratch: a fresh run state, the history up to the second answer. */
    int answer_start = c.turn_starts[1] + turn2_tokens;
    float *reuse_logits = malloc(sizeof(float) * (size_t)m->t.config.vocab_size);
    /* The logits after the last answer token in the reused cache... */
    int last = c.count - c.suffix_count - 1;
    memcpy(reuse_logits, model_forward(&m->t, c.tokens[last], last),
           sizeof(float) * (size_t)m->t.config.vocab_size);
    Model fresh;
    if (model_create(&fresh, m->data, m->size, NULL, err, sizeof err) != 0) {
        check(0, label, "reload: %s", err);
        return;
    }
    model_prefill(&fresh, c.tokens, answer_start, 0);
    int same = 1;
    for (int i = answer_start; i < c.count - c.suffix_count; i++) {
        int next = sampler_sample(&s, model_logits(&fresh));
        if (next != c.tokens[i]) same = 0;
        if (!model_forward(&fresh, c.tokens[i], i)) same = 0;
    }
    snprintf(name, sizeof name, "%s: second answer equals the from-scratch run (%d tokens)", label,
             c.count - c.suffix_count - answer_start);
    check(same, name, "tokens differ");
    snprintf(name, sizeof name, "%s: identical logits after the last answer token", label);
    check(memcmp(reuse_logits, model_logits(&fresh), sizeof(float) * (size_t)m->t.config.vocab_size) == 0,
          name, "logits differ");
    model_destroy(&fresh);
    free(reuse_logits);
    sampler_destroy(&s);
    chat_destroy(&c);
}

/* A greedy sampler and a conversation with the system prompt "Be brief.". */
static void greedy_chat(TestModel *m, Chat *c, Sampler *s, ChatTemplate tmpl) {
    char err[200];
    SamplerConfig sc = sampler_default_config();
    sc.temperature = 0;
    sampler_create(s, m->t.config.vocab_size, &sc, err, sizeof err);
    chat_create(c, &m->t, &m->tok, tmpl, "Be brief.", err, sizeof err);
}

/* Qwen3 with thinking off: the turn ends with the empty think block, which
 * the next turn's history no longer has (the template drops it), so the
 * history is the thinking-on rendering of the first turn, the answer, the
 * suffix; the cache is re-prefilled from where the block was. */
static void test_qwen3_history(TestModel *m) {
    char err[200];
    Chat c;
    Sampler s;
    greedy_chat(m, &c, &s, CHAT_TEMPLATE_QWEN3);
    c.options.enable_thinking = 0;
    int with_block = chat_turn_tokens(&c, &m->tok, "Hi", err, sizeof err);
    ChatOptions on = chat_default_options();
    const char *hi[] = {"Hi"};
    int plain[128];
    int n = chat_encode(CHAT_TEMPLATE_QWEN3, &on, &m->tok, "Be brief.", hi, 1, plain, 128, err, sizeof err);
    GenerateStats st;
    int rc = chat_turn(&c, &m->t, &m->tok, &s, "Hi", 3, NULL, &st, err, sizeof err);
    int answer = st.generated_tokens;
    check(rc == 0 && st.prompt_tokens == with_block && with_block > n && c.answer_start == n &&
              c.count == n + answer + c.suffix_count &&
              memcmp(c.tokens, plain, sizeof(int) * (size_t)n) == 0 && c.pos <= n,
          "qwen3 thinking off: the empty block is gone from history",
          "rc %d, %d/%d/%d tokens, count %d, pos %d", rc, st.prompt_tokens, with_block, n, c.count, c.pos);
    int pos_before = c.pos, count_before = c.count;
    int turn2 = chat_turn_tokens(&c, &m->tok, "More", err, sizeof err);
    rc = chat_turn(&c, &m->t, &m->tok, &s, "More", 3, NULL, &st, err, sizeof err);
    check(rc == 0 && st.prompt_tokens == count_before - pos_before + turn2,
          "the next turn prefills from the cut", "%d vs %d", st.prompt_tokens,
          count_before - pos_before + turn2);
    sampler_destroy(&s);
    chat_destroy(&c);
}

/* Turns of `user` until one does not fit; returns that turn's code, err its reason (200 bytes). */
static int chat_until_full(TestModel *m, Chat *c, Sampler *s, const char *user, int max_new, char *err) {
    GenerateStats st;
    int rc;
    while ((rc = chat_turn(c, &m->t, &m->tok, s, user, max_new, NULL, &st, err, 200)) == 0) continue;
    return rc;
}

/* Gemma folds the system prompt into the first user turn: after sliding,
 * the kept history is the prefix up to the end of the system part, then
 * the first kept turn after its own user header, as the template renders a
 * conversation that starts with that turn. */
static void test_gemma_slide(TestModel *m) {
    char err[200];
    Chat c;
    Sampler s;
    greedy_chat(m, &c, &s, CHAT_TEMPLATE_GEMMA);
    int rc = chat_until_full(m, &c, &s, "Go on", 4, err);
    check(rc == CHAT_NO_ROOM, "gemma: the context fills", "%d %s", rc, err);
    int *old = malloc(sizeof(int) * (size_t)c.count);
    memcpy(old, c.tokens, sizeof(int) * (size_t)c.count);
    int old_count = c.count, old_starts[64];
    memcpy(old_starts, c.turn_starts, sizeof(int) * (size_t)(c.turns < 64 ? c.turns : 64));
    /* Gemma's user header as this vocabulary spells it, and the system part. */
    int header[16], sys[32];
    int header_n = tokenizer_encode_ex(&m->tok, "<start_of_turn>user\n", 20, TOKENIZE_PARSE_SPECIAL, header,
                                       16, err, sizeof err);
    int sys_n = tokenizer_encode_ex(&m->tok, "Be brief.", 9, 0, sys, 32, err, sizeof err);
    int gap_n = tokenizer_encode_ex(&m->tok, "\n\n", 2, TOKENIZE_PARSE_SPECIAL, sys + sys_n, 32 - sys_n, err,
                                    sizeof err);
    int turns = c.turns;
    int dropped = chat_slide(
        &c, &m->tok, chat_turn_tokens(&c, &m->tok, "Go on", err, sizeof err) + 1 + c.suffix_count + 4);
    int prefix = 1 + header_n + sys_n + gap_n; /* BOS, header, system, "\n\n" */
    int kept_from = dropped > 0 && dropped < 64 ? old_starts[dropped] + header_n : old_count;
    check(turns >= 2 && dropped > 0 && c.turns > 0 && c.fold_header == header_n && c.prefix_count == prefix &&
              memcmp(c.tokens, old, sizeof(int) * (size_t)prefix) == 0 &&
              memcmp(c.tokens + 1 + header_n, sys, sizeof(int) * (size_t)(sys_n + gap_n)) == 0 &&
              c.count == prefix + old_count - kept_from &&
              memcmp(c.tokens + prefix, old + kept_from, sizeof(int) * (size_t)(old_count - kept_from)) == 0,
          "gemma: sliding keeps the system part and the kept turn's text after it",
          "dropped %d, prefix %d/%d, header %d/%d, turns %d, count %d vs %d", dropped, c.prefix_count, prefix,
          c.fold_header, header_n, c.turns, c.count, prefix + old_count - kept_from);
    int turns_left = c.turns;
    check(chat_slide(&c, &m->tok, c.capacity) == turns_left && c.count == 0 && c.turns == 0,
          "sliding every turn away starts over", "%d tokens", c.count);
    int first = chat_turn_tokens(&c, &m->tok, "Hi", err, sizeof err);
    GenerateStats st;
    rc = chat_turn(&c, &m->t, &m->tok, &s, "Hi", 1, NULL, &st, err, sizeof err);
    check(rc == 0 && st.prompt_tokens == first && c.tokens[0] == m->tok.bos_id && c.prefix_count == prefix,
          "then the next turn is a first turn, system part and all, once", "%d vs %d", st.prompt_tokens,
          first);
    free(old);
    sampler_destroy(&s);
    chat_destroy(&c);
}

/* An answer that runs into the end of the context stops there with
 * STOP_CONTEXT, and the suffix that closes it still fits: the history ends
 * exactly at the context's last position. */
static void test_answer_reaches_context(TestModel *m) {
    char err[200];
    Chat c;
    Sampler s;
    greedy_chat(m, &c, &s, CHAT_TEMPLATE_CHATML);
    int turn = chat_turn_tokens(&c, &m->tok, "Hi", err, sizeof err);
    c.capacity = turn + 1 + c.suffix_count + 7; /* room for 8 answer tokens (the buffers keep their size) */
    GenerateStats st;
    int rc = chat_turn(&c, &m->t, &m->tok, &s, "Hi", 0, NULL, &st, err, sizeof err);
    check(rc == 0 && st.reason == STOP_CONTEXT && st.generated_tokens == 8 && c.count == c.capacity &&
              c.pos == c.capacity - c.suffix_count - 1,
          "an answer that reaches the context stops there, its closing suffix still fits",
          "rc %d reason %s generated %d count %d pos %d capacity %d", rc, stop_reason_name(st.reason),
          st.generated_tokens, c.count, c.pos, c.capacity);
    sampler_destroy(&s);
    chat_destroy(&c);
}

static void test_context_limit(TestModel *m) {
    char err[200];
    Chat c;
    Sampler s;
    greedy_chat(m, &c, &s, CHAT_TEMPLATE_CHATML);
    GenerateStats st;
    int rc = chat_until_full(m, &c, &s, "Tell me a story", 12, err), turns = c.turns;
    check(rc == CHAT_NO_ROOM && turns >= 2 && strstr(err, "context"), "a turn that does not fit is refused",
          "rc %d after %d turns: %s", rc, turns, err);
    int before = c.count;
    rc = chat_turn(&c, &m->t, &m->tok, &s, "Tell me a story", 12, NULL, &st, err, sizeof err);
    check(rc == CHAT_NO_ROOM && c.count == before && c.turns == turns, "refusal changes nothing", "%d", rc);
    int prefix[64];
    int prefix_count = c.prefix_count;
    memcpy(prefix, c.tokens, sizeof(int) * (size_t)prefix_count);
    int need = chat_turn_tokens(&c, &m->tok, "Tell me a story", err, sizeof err) + 1 + c.suffix_count + 12;
    int dropped = chat_slide(&c, &m->tok, need);
    check(dropped >= 1 && c.turns == turns - dropped && c.pos == 0 && c.count + need <= c.capacity,
          "slide drops the oldest turns", "dropped %d, count %d", dropped, c.count);
    check(prefix_count > 0 && c.prefix_count == prefix_count &&
              memcmp(prefix, c.tokens, sizeof(int) * (size_t)prefix_count) == 0 && c.tokens[0] == 510,
          "slide keeps the system prompt", "prefix %d", prefix_count);
    int later_start = c.turns > 0 ? c.turn_starts[0] : -1;
    check(c.turns == 0 || (later_start == prefix_count && c.tokens[later_start] == 510),
          "the kept turns follow the system part", "start %d", later_start);
    rc = chat_turn(&c, &m->t, &m->tok, &s, "Tell me a story", 12, NULL, &st, err, sizeof err);
    check(rc == 0 &&
              st.prompt_tokens == c.turn_starts[c.turns - 1] +
                                      chat_turn_tokens(&c, &m->tok, "Tell me a story", err, sizeof err),
          "after sliding the next turn runs (everything re-prefilled)", "rc %d %s", rc, err);
    chat_reset(&c);
    check(c.count == 0 && c.turns == 0 && c.system && strcmp(c.system, "Be brief.") == 0,
          "reset forgets the turns, keeps the system prompt", "?");
    sampler_destroy(&s);
    chat_destroy(&c);
}

/* Ctrl-C inside a turn's prefill: the turn is taken back; the next turn and
 * its answer are exactly those of a chat that never saw the stopped one. */
typedef struct {
    int polls, stop_at;
    uint64_t clock;
} StopIO;

static int stop_on_poll(void *ctx) {
    StopIO *s = ctx;
    return ++s->polls == s->stop_at;
}

static uint64_t tick(void *ctx) {
    /* 50 ms a call, so a piece "takes" 50 ms: pieces of 2, then 16 (sized
     * for 500 ms, ten times the first piece's time, at its rate), then the rest. */
    return ((StopIO *)ctx)->clock += 50000000;
}

static void test_stop_in_prefill(TestModel *m) {
    char err[200];
    Chat a, b;
    Sampler sa, sb;
    SamplerConfig sc = sampler_default_config();
    sc.temperature = 0;
    sampler_create(&sa, m->t.config.vocab_size, &sc, err, sizeof err);
    sampler_create(&sb, m->t.config.vocab_size, &sc, err, sizeof err);
    GenerateStats st;
    /* Chat a: a turn, a long turn stopped after its first prefill piece, then "Tell me more". */
    chat_create(&a, &m->t, &m->tok, CHAT_TEMPLATE_CHATML, "Be brief.", err, sizeof err);
    chat_turn(&a, &m->t, &m->tok, &sa, "Hello there", 6, NULL, &st, err, sizeof err);
    int count = a.count, turns = a.turns;
    StopIO stop = {0, 2, 0}; /* stopped after two pieces: 18 positions, past the turn's opening tokens */
    GenerateIO io = {NULL, stop_on_poll, tick, NULL, &stop};
    int rc = chat_turn(&a, &m->t, &m->tok, &sa,
                       "Write a long story about a dragon, a knight, a castle and a river, with every detail",
                       6, &io, &st, err, sizeof err);
    check(rc == 0 && st.reason == STOP_USER && st.generated_tokens == 0 && st.prompt_tokens == 18 &&
              a.count == count && a.turns == turns,
          "chat: Ctrl-C in the prefill stops it and takes the turn back",
          "rc %d reason %s prompt %d count %d/%d turns %d/%d", rc, stop_reason_name(st.reason),
          st.prompt_tokens, a.count, count, a.turns, turns);
    chat_turn(&a, &m->t, &m->tok, &sa, "Tell me more", 8, NULL, &st, err, sizeof err);
    int a_count = a.count;
    int *a_tokens = malloc(sizeof(int) * (size_t)a.count);
    memcpy(a_tokens, a.tokens, sizeof(int) * (size_t)a.count);
    chat_destroy(&a);
    /* Chat b: the same without the stopped turn (its own run state). */
    Model fresh;
    model_create(&fresh, m->data, m->size, NULL, err, sizeof err);
    chat_create(&b, &fresh, &m->tok, CHAT_TEMPLATE_CHATML, "Be brief.", err, sizeof err);
    chat_turn(&b, &fresh, &m->tok, &sb, "Hello there", 6, NULL, &st, err, sizeof err);
    chat_turn(&b, &fresh, &m->tok, &sb, "Tell me more", 8, NULL, &st, err, sizeof err);
    check(b.count == a_count && memcmp(b.tokens, a_tokens, sizeof(int) * (size_t)a_count) == 0,
          "chat: after a stopped prefill the conversation is as if it was never typed", "%d vs %d tokens",
          a_count, b.count);
    free(a_tokens);
    chat_destroy(&b);
    model_destroy(&fresh);
    sampler_destroy(&sa);
    sampler_destroy(&sb);
}

int main(void) {
    models_dir = (char *)models_dir_from_env();
    test_render();
    TestModel qwen, stories;
    if (load(&qwen, "gguf-arch/qwen3-tied-F32.gguf", NULL) != 0 ||
        load(&stories, "stories260K.bin", "tok512.bin") != 0) {
        printf("##########\nSKIP: test models missing under %s\n##########\n", models_dir);
        return 77;
    }
    test_qwen_ids(&qwen);
    test_kv_reuse(&qwen, "qwen3 chatml", CHAT_TEMPLATE_CHATML, "Be brief.");
    test_kv_reuse(&stories, "stories260K none", CHAT_TEMPLATE_NONE, NULL);
    test_context_limit(&qwen);
    test_answer_reaches_context(&qwen);
    test_stop_in_prefill(&qwen);
    test_qwen3_history(&qwen);
    test_gemma_slide(&qwen);
    unload(&qwen);
    unload(&stories);
    return failures ? 1 : 0;
}
