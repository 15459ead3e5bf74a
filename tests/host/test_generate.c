/* test_generate.c - the generation loop against llama2.c's outputs for
 * stories260K + tok512: greedy goldens (text and ids), the three seed-42
 * sampled texts of REFERENCE_OUTPUTS.md section 2, stop conditions, errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/generate/generate.h"
#include "tests/host/llm_test_util.h"

/* What the callbacks collect. */
typedef struct {
    char text[8192];
    size_t len;
    int ids[1024];
    int n_ids;
    int polls, stop_after_polls;
    uint64_t clock;
} Capture;

static void capture_emit(void *ctx, const char *text, size_t len) {
    Capture *c = ctx;
    if (c->len + len < sizeof c->text) memcpy(c->text + c->len, text, len), c->len += len;
    c->text[c->len] = '\0';
}

static void capture_token(void *ctx, int token) {
    Capture *c = ctx;
    if (c->n_ids < 1024) c->ids[c->n_ids++] = token;
}

static int capture_should_stop(void *ctx) {
    Capture *c = ctx;
    c->polls++;
    return c->stop_after_polls && c->polls > c->stop_after_polls;
}

static uint64_t capture_clock(void *ctx) {
    return ((Capture *)ctx)->clock += 1000;
}

static Model model;
static Tokenizer tokenizer;

/* A slow machine's clock: every piece of the prefill takes piece_ns
 * however few its positions (generate_prefill reads the clock before and
 * after each piece). */
typedef struct {
    uint64_t piece_ns;
    int calls, pieces;
    uint64_t now;
} SlowClock;

static uint64_t slow_clock(void *ctx) {
    SlowClock *c = ctx;
    if (++c->calls % 2 == 0) c->now += c->piece_ns, c->pieces++;
    return c->now;
}

static int never_stop(void *ctx) {
    return 0;
}

/* Runs generate() into a fresh Capture (caller frees). */
static Capture *run(const char *prompt, int steps, float temperature, float topp, uint64_t seed,
                    GenerateStats *stats, int *rc, char *err, size_t err_size, int stop_after) {
    Capture *c = calloc(1, sizeof *c);
    c->stop_after_polls = stop_after;
    SamplerConfig config = sampler_default_config();
    config.temperature = temperature;
    config.topp = topp;
    config.seed = seed;
    Sampler sampler;
    sampler_create(&sampler, model.config.vocab_size, &config, NULL, 0);
    GenerateIO io = {capture_emit, capture_should_stop, capture_clock, capture_token, c};
    *rc = generate(&model, &tokenizer, &sampler, prompt, steps, &io, stats, err, err_size);
    sampler_destroy(&sampler);
    return c;
}

/* Golden text files end with run.c's final "\n"; the emitted text does not. */
static void check_text(const char *name, const Capture *c, const char *expected, size_t expected_len) {
    if (expected_len && expected[expected_len - 1] == '\n') expected_len--;
    int ok = c->len == expected_len && memcmp(c->text, expected, expected_len) == 0;
    char why[256] = "";
    if (!ok) {
        size_t i = 0;
        while (i < c->len && i < expected_len && c->text[i] == expected[i]) i++;
        snprintf(why, sizeof why, "differs at byte %zu (got %zu bytes, want %zu): got '%.40s'", i, c->len,
                 expected_len, c->text + i);
    }
    check_plain(ok, name, why);
}

static void check_golden(const char *dir, const char *stem, const char *prompt) {
    char path[256], name[256];
    size_t text_size, ids_size;
    snprintf(path, sizeof path, "golden/%s.txt", stem);
    char *text = read_file_in(dir, path, &text_size);
    snprintf(path, sizeof path, "golden/%s.ids", stem);
    char *ids_text = read_file_in(dir, path, &ids_size);
    if (!text || !ids_text) {
        check_plain(0, stem, "golden files missing");
        return;
    }
    GenerateStats stats;
    int rc;
    char err[160];
    Capture *c = run(prompt, 200, 0.0f, 0.9f, 1, &stats, &rc, err, sizeof err, 0);
    snprintf(name, sizeof name, "%s: greedy -n 200 text equals the golden", stem);
    check_text(name, c, text, text_size);

    int want[1024], n = 0;
    char *s = ids_text, *end;
    for (long v = strtol(s, &end, 10); end != s && n < 1024; v = strtol(s, &end, 10))
        want[n++] = (int)v, s = end;
    snprintf(name, sizeof name, "%s: token ids equal the golden (%d ids)", stem, n);
    check_plain(rc == 0 && c->n_ids == n && memcmp(c->ids, want, (size_t)n * sizeof(int)) == 0, name,
                "ids differ");
    snprintf(name, sizeof name, "%s: stopped after 200 steps", stem);
    check_plain(stats.reason == STOP_STEPS && stats.positions == 200, name, stop_reason_name(stats.reason));
    free(c);
    free(text);
    free(ids_text);
}

static void check_sampled(const char *name, const char *prompt, float topp, const char *expected) {
    GenerateStats stats;
    int rc;
    char err[160];
    Capture *c = run(prompt, 200, 1.0f, topp, 42, &stats, &rc, err, sizeof err, 0);
    check_text(name, c, expected, strlen(expected));
    free(c);
}

static const char text_2a[] = "Once upon a time, there was a big roof. The fox was ready to look for people "
                              "inside. He saw a big rock near a "
                              "big tree. The roof was very small and fun! He ate the roof too. He got a "
                              "shiny stool, so he sicked the roof "
                              "with his friend, the girl named Mia.\n\"Help, Mia. Why are you sad, Mia?\" "
                              "she asked.\n\"I want to try us,\" "
                              "Mia said. \"It is cute. We have to find one of smells!\"\nMia felt proud of";
static const char text_2b[] = "Once upon a time, there was a little boy named Timmy. Timmy loved going to "
                              "the park with his mom. One day, "
                              "Lily went outside to play outside in her pocket. He was scared and didn't "
                              "know where to buy some colorful "
                              "animals.\nLater that day, Timmy's mom came outside and saw Timmy just playing "
                              "in the shore. She didn't see "
                              "that made him happy, but Timmy's mom said he had to sort his cobwebs and "
                              "write cold colors. Timmy asked his "
                              "mom if he was amazed! His mom";
static const char text_2c[] =
    "There was a big pretty grass. It was a long elephant. The cars wanted to tell him that as they spin "
    "before "
    "the amazing doll, just like it she was always okay.\nOne day, a little girl named Lucy found a ball and "
    "an "
    "axe. She wanted to race, but she didn't know what the ball was. The ball was determined to be a nice "
    "car for "
    "Lucy.\nLucy's friend, a little girl named Lily, said, \"Let's go to the store with my mom. I will s";

static void test_stops_and_errors(void) {
    GenerateStats stats;
    int rc;
    char err[160] = "";

    /* 600 words are well over the 512-position context. */
    char *long_prompt = malloc(600 * 6 + 1);
    for (int i = 0; i < 600; i++) memcpy(long_prompt + i * 6, "apple ", 6);
    long_prompt[600 * 6] = '\0';
    Capture *c = run(long_prompt, 0, 0.0f, 0.9f, 1, &stats, &rc, err, sizeof err, 0);
    int ok = rc == -1 && stats.reason == STOP_ERROR && strstr(err, "prompt is ") &&
             strstr(err, " tokens, the context is 512") && c->len == 0 && c->n_ids == 0;
    check_plain(ok, "an over-long prompt is refused before running", err);
    free(c);
    free(long_prompt);

    c = run("", 200, 0.0f, 0.9f, 1, &stats, &rc, err, sizeof err, 10);
    char why[128];
    snprintf(why, sizeof why, "rc %d reason %s positions %d generated %d", rc, stop_reason_name(stats.reason),
             stats.positions, stats.generated_tokens);
    check_plain(rc == 0 && stats.reason == STOP_USER && stats.positions == 10 &&
                    stats.generated_tokens == 10 && c->polls == 11,
                "should_stop stops after 10 tokens with STOP_USER", why);
    free(c);

    /* Ctrl-C inside the prefill: polled between its pieces (the first is 2
     * positions); the figures count only the positions that ran. */
    char *story = malloc(40 * 6 + 1);
    for (int i = 0; i < 40; i++) memcpy(story + i * 6, "apple ", 6);
    story[40 * 6] = '\0';
    c = run(story, 0, 0.0f, 0.9f, 1, &stats, &rc, err, sizeof err, 1);
    snprintf(why, sizeof why, "rc %d reason %s prompt %d positions %d generated %d polls %d text %zu", rc,
             stop_reason_name(stats.reason), stats.prompt_tokens, stats.positions, stats.generated_tokens,
             c->polls, c->len);
    check_plain(rc == 0 && stats.reason == STOP_USER && stats.prompt_tokens == 2 && stats.positions == 2 &&
                    stats.generated_tokens == 0 && c->polls == 2 && c->len == 0 && stats.prefill_ns > 0,
                "should_stop inside the prefill stops it after its first piece, figures of what ran", why);
    free(c);
    free(story);
    /* Nothing of the stopped prompt is left: llama2.c's answer again. */
    check_golden(getenv("MODELS_DIR") ? getenv("MODELS_DIR") : "../shared/models",
                 "stories260K__the_little_dog", "The little dog");

    /* Steps shorter than the prompt: only the forced tokens run, like llama2.c. */
    c = run("Lily and Tom went to the park", 4, 0.0f, 0.9f, 1, &stats, &rc, err, sizeof err, 0);
    check_plain(rc == 0 && strcmp(c->text, "Lily and Tom") == 0 && stats.prompt_tokens == 12 &&
                    stats.generated_tokens == 0 && stats.positions == 4,
                "steps shorter than the prompt stop inside it", c->text);
    free(c);

    /* Timing: the fake clock ticks 1000 per call. */
    c = run("Once upon", 20, 0.0f, 0.9f, 1, &stats, &rc, err, sizeof err, 0);
    check_plain(stats.prompt_tokens == 3 && stats.generated_tokens == 18 && stats.prefill_ns > 0 &&
                    stats.decode_ns > 0 && stats.total_ns == stats.prefill_ns + stats.decode_ns &&
                    stats.after_first_ns < stats.total_ns,
                "statistics: token counts and prefill/decode split", "wrong stats");
    free(c);

    /* steps <= 0 means the whole context. */
    c = run("", 0, 0.0f, 0.9f, 1, &stats, &rc, err, sizeof err, 0);
    snprintf(why, sizeof why, "reason %s positions %d", stop_reason_name(stats.reason), stats.positions);
    check_plain(rc == 0 &&
                    ((stats.reason == STOP_CONTEXT && stats.positions == 512) || stats.reason == STOP_BOS),
                "steps 0 runs to the end of the context", why);
    free(c);

    /* A tokenizer of the wrong size is refused. */
    Tokenizer small = tokenizer;
    small.vocab_size = 300;
    Sampler sampler;
    SamplerConfig config = sampler_default_config();
    sampler_create(&sampler, model.config.vocab_size, &config, NULL, 0);
    rc = generate(&model, &small, &sampler, "", 10, NULL, &stats, err, sizeof err);
    check_plain(rc == -1 && strstr(err, "tokenizer"), "a tokenizer that does not fit the model is refused",
                err);
    sampler_destroy(&sampler);

    check_plain(strcmp(stop_reason_name(STOP_BOS), "bos") == 0 &&
                    strcmp(stop_reason_name(STOP_USER), "user") == 0,
                "stop reason names", "wrong name");
}

/* The pieces grow even when each takes longer than the 100 ms target: a
 * piece pays one pass over the weights however few its positions, so pieces
 * sized from the first ones' rate kept a prompt at 1 position a piece,
 * decode speed (issue 24). 2, 6, 16, 48, 128 here. */
static void test_prefill_pieces(void) {
    int tokens[200];
    for (int i = 0; i < 200; i++) tokens[i] = 1 + i % (model.config.vocab_size - 1);
    SlowClock clock = {.piece_ns = 150000000ull}; /* a loaded host: 150 ms a piece */
    GenerateIO io = {NULL, never_stop, slow_clock, NULL, &clock};
    int ran = generate_prefill(&model, tokens, 200, 0, &io);
    char why[96];
    snprintf(why, sizeof why, "ran %d positions in %d pieces", ran, clock.pieces);
    check_plain(ran == 200 && clock.pieces <= 6,
                "a slow prefill's pieces grow: 200 positions in 6 pieces or fewer", why);
    /* 10 s for the first 2 positions (a 3B model under QEMU): every later
     * piece is still a batch of GENERATE_PREFILL_MIN_PIECE, 2 + 198 / 8. */
    clock = (SlowClock){.piece_ns = 10000000000ull};
    ran = generate_prefill(&model, tokens, 200, 0, &io);
    snprintf(why, sizeof why, "ran %d positions in %d pieces", ran, clock.pieces);
    check_plain(ran == 200 &&
                    clock.pieces == 1 + (198 + GENERATE_PREFILL_MIN_PIECE - 1) / GENERATE_PREFILL_MIN_PIECE,
                "positions slower than the target still go in batches of 8", why);
}

int main(void) {
    const char *dir = getenv("MODELS_DIR");
    if (!dir) dir = "../shared/models";
    size_t model_size, tok_size;
    char *model_data = read_file_in(dir, "stories260K.bin", &model_size);
    char *tok_data = read_file_in(dir, "tok512.bin", &tok_size);
    if (!model_data || !tok_data) {
        printf("SKIP: stories260K.bin / tok512.bin not found in %s (set MODELS_DIR)\n", dir);
        return 77;
    }
    char err[160];
    if (model_create(&model, model_data, model_size, NULL, err, sizeof err) != 0 ||
        tokenizer_create(&tokenizer, tok_data, tok_size, model.config.vocab_size, err, sizeof err) != 0) {
        printf("FAIL - load stories260K: %s\n", err);
        return 1;
    }

    check_golden(dir, "stories260K__once_upon_a_time", "");
    check_golden(dir, "stories260K__the_little_dog", "The little dog");
    check_sampled("2a: -t 1 -p 1.0 -s 42 -n 200", "", 1.0f, text_2a);
    check_sampled("2b: -t 1 -p 0.95 -s 42 -n 200", "", 0.95f, text_2b);
    check_sampled("2c: -t 1 -p 0.95 -s 42 -n 200 -i \"There was a big\"", "There was a big", 0.95f, text_2c);
    test_stops_and_errors();
    test_prefill_pieces();

    tokenizer_destroy(&tokenizer);
    model_destroy(&model);
    free(model_data);
    free(tok_data);
    return failures ? 1 : 0;
}
