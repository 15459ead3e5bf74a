/* test_chat_templates.c - the real families' chat templates: each Jinja
 * text (the vocab folder's NAME.chat_template.txt files and the GGUFs' own
 * tokenizer.chat_template) is recognised, a conversation (system, two
 * user/assistant turns, a third user turn, the generation prompt) renders to
 * the text written here by hand from reading the Jinja, and its tokens
 * through the real vocabularies are the ids llama.cpp's llama-tokenize gives
 * for that hand-written text (special tokens one id each). */
#include <string.h>

#include "llm/generate/chat.h"
#include "llm_test_util.h"

static const char *const conversation[] = {
    " Hello! ",                                        /* user: Llama 3 and Gemma trim it, ChatML does not */
    "<think>\nLet me think.\n</think>\n\nHi there.\n", /* assistant: Qwen3's history drops the block */
    "What is 2+2?",
    "4",
    "Thanks",
};
#define CONVERSATION_COUNT 5
#define SYSTEM "Be brief."

/* ---- rendered by hand from llama3.chat_template.txt: content | trim, bos_token before the first message. */
static const char llama3_text[] =
    "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n<think>\nLet me think.\n</think>\n\nHi there.<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n4<|eot_id|>"
    "<|start_header_id|>user<|end_header_id|>\n\nThanks<|eot_id|>"
    "<|start_header_id|>assistant<|end_header_id|>\n\n";
/* llama-tokenize -m llama3.gguf -f <llama3_text> --ids --no-bos --no-escape */
static const int llama3_ids[] = {
    128000, 128006, 9125,   128007, 271,   3513,   10015,  13,     128009, 128006, 882,    128007, 271,
    9906,   0,      128009, 128006, 78191, 128007, 271,    14023,  771,    397,    10267,  757,    1781,
    627,    524,    27963,  1363,   13347, 1070,   13,     128009, 128006, 882,    128007, 271,    3923,
    374,    220,    17,     10,     17,    30,     128009, 128006, 78191,  128007, 271,    19,     128009,
    128006, 882,    128007, 271,    12947, 128009, 128006, 78191,  128007, 271};

/* ---- Llama 3.1/3.2's published template (not in ../shared): the system
 * block is always written, "Cutting Knowledge Date: December 2023\n", "Today
 * Date: " + date_string ("26 Jul 2024" without strftime_now) + "\n\n", the
 * trimmed system prompt (or nothing), <|eot_id|>; then the messages as Llama 3's. */
static const char llama31_system[] = "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                                     "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n";
/* llama-tokenize -m llama3.gguf of llama31_system + "Be brief.<|eot_id|>" + llama3_text from its user turn on
 */
static const int llama31_ids[] = {
    128000, 128006, 9125,   128007, 271,    38766, 1303,  33025,  2696,   25,     6790,   220,    2366,   18,
    198,    15724,  2696,   25,     220,    1627,  10263, 220,    2366,   19,     271,    3513,   10015,  13,
    128009, 128006, 882,    128007, 271,    9906,  0,     128009, 128006, 78191,  128007, 271,    14023,  771,
    397,    10267,  757,    1781,   627,    524,   27963, 1363,   13347,  1070,   13,     128009, 128006, 882,
    128007, 271,    3923,   374,    220,    17,    10,    17,     30,     128009, 128006, 78191,  128007, 271,
    19,     128009, 128006, 882,    128007, 271,   12947, 128009, 128006, 78191,  128007, 271};

/* ---- from qwen3.chat_template.txt, no tools: the system message, then each
 * message raw; assistant messages before the last user query keep what follows
 * '</think>', lstripped of '\n'; enable_thinking false adds the empty block. */
static const char qwen3_text_head[] = "<|im_start|>system\nBe brief.<|im_end|>\n"
                                      "<|im_start|>user\n Hello! <|im_end|>\n"
                                      "<|im_start|>assistant\nHi there.\n<|im_end|>\n"
                                      "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
                                      "<|im_start|>assistant\n4<|im_end|>\n"
                                      "<|im_start|>user\nThanks<|im_end|>\n"
                                      "<|im_start|>assistant\n";
static const char qwen3_no_think[] = "<think>\n\n</think>\n\n";
/* llama-tokenize of head + no_think */
static const int qwen3_ids[] = {
    151644, 8948, 198,    3430,  9814,   13,    151645, 198,   151644, 872,    198,    21927,  0,      220,
    151645, 198,  151644, 77091, 198,    13048, 1052,   624,   151645, 198,    151644, 872,    198,    3838,
    374,    220,  17,     10,    17,     30,    151645, 198,   151644, 77091,  198,    19,     151645, 198,
    151644, 872,  198,    12658, 151645, 198,   151644, 77091, 198,    151667, 271,    151668, 271};

/* ---- from gemma3.chat_template.txt: bos_token, the system content + '\n\n'
 * opening the first user turn, contents trimmed, assistant -> model. */
static const char gemma3_text[] =
    "<bos><start_of_turn>user\nBe brief.\n\nHello!<end_of_turn>\n"
    "<start_of_turn>model\n<think>\nLet me think.\n</think>\n\nHi there.<end_of_turn>\n"
    "<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n"
    "<start_of_turn>model\n4<end_of_turn>\n"
    "<start_of_turn>user\nThanks<end_of_turn>\n"
    "<start_of_turn>model\n";
static const int gemma3_ids[] = {2,      105,    2364,   107,  3912,  8652,   236761, 108,    9259,   236888,
                                 106,    107,    105,    4368, 107,   236820, 36345,  236813, 107,    6481,
                                 786,    1751,   236761, 107,  954,   36345,  236813, 108,    10979,  993,
                                 236761, 106,    107,    105,  2364,  107,    3689,   563,    236743, 236778,
                                 236862, 236778, 236881, 106,  107,   105,    4368,   107,    236812, 106,
                                 107,    105,    2364,   107,  12879, 106,    107,    105,    4368,   107};

/* ---- SmolLM3's published template: an always-present system block with
 * metadata; /no_think or /think in the system prompt pick the mode and are
 * removed (then rstrip); /no_think answers open with "<think>\n\n</think>\n"
 * in history too; contents are lstripped of '\n'. */
static const char smollm3_no_think_text[] =
    "<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nToday Date: 23 November 2026\n"
    "Reasoning Mode: /no_think\n\n## Custom Instructions\n\nBe brief.\n\n"
    "## Tools\n\n### XML Tools\n\nNone\n\n### Python Tools\n\nNone\n\n<|im_end|>\n"
    "<|im_start|>user\n Hello! <|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n<think>\nLet me think.\n</think>\n\nHi there.\n<|im_end|>\n"
    "<|im_start|>user\nWhat is 2+2?<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n4<|im_end|>\n"
    "<|im_start|>user\nThanks<|im_end|>\n"
    "<|im_start|>assistant\n<think>\n\n</think>\n";

static char *vocab_dir;

static void check_text(const char *name, const char *got, const char *want) {
    size_t i = 0;
    while (got[i] && got[i] == want[i]) i++;
    check(strcmp(got, want) == 0, name, "differs at byte %zu: got \"%.40s\" want \"%.40s\"", i, got + i,
          want + i);
}

static int ends_with(const char *s, const char *end) {
    size_t a = strlen(s), b = strlen(end);
    return a >= b && strcmp(s + a - b, end) == 0;
}

static void test_render(void) {
    static char out[8192];
    ChatOptions o = chat_default_options();
    chat_render(CHAT_TEMPLATE_LLAMA3, &o, SYSTEM, conversation, CONVERSATION_COUNT, "<|begin_of_text|>", out,
                sizeof out);
    check_text("llama3: the conversation as the Jinja writes it", out, llama3_text);

    char want[2048];
    const char *llama3_user = strstr(llama3_text, "<|start_header_id|>user");
    snprintf(want, sizeof want, "%sBe brief.<|eot_id|>%s", llama31_system, llama3_user);
    chat_render(CHAT_TEMPLATE_LLAMA31, &o, " " SYSTEM "\n", conversation, CONVERSATION_COUNT,
                "<|begin_of_text|>", out, sizeof out);
    check_text("llama3.1: the system block with its dates, then Llama 3's turns", out, want);
    snprintf(want, sizeof want, "%s<|eot_id|>%s", llama31_system,
             strstr(llama3_user + 1, "<|start_header_id|>user"));
    chat_render(CHAT_TEMPLATE_LLAMA31, &o, NULL, conversation + 2, 3, "<|begin_of_text|>", out, sizeof out);
    check_text("llama3.1 without a system prompt: the block is still written", out, want);

    snprintf(want, sizeof want, "%s", qwen3_text_head);
    chat_render(CHAT_TEMPLATE_QWEN3, &o, SYSTEM, conversation, CONVERSATION_COUNT, NULL, out, sizeof out);
    check_text("qwen3 thinking on: no empty block, history without think blocks", out, want);
    o.enable_thinking = 0;
    snprintf(want, sizeof want, "%s%s", qwen3_text_head, qwen3_no_think);
    chat_render(CHAT_TEMPLATE_QWEN3, &o, SYSTEM, conversation, CONVERSATION_COUNT, NULL, out, sizeof out);
    check_text("qwen3 thinking off: the empty <think> block ends the prompt", out, want);

    o = chat_default_options();
    chat_render(CHAT_TEMPLATE_GEMMA, &o, SYSTEM, conversation, CONVERSATION_COUNT, "<bos>", out, sizeof out);
    check_text("gemma: system folded into the first user turn, role model", out, gemma3_text);
    chat_render(CHAT_TEMPLATE_GEMMA, &o, NULL, conversation, 1, "<bos>", out, sizeof out);
    check_text("gemma without a system prompt", out,
               "<bos><start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\n");

    o.date = "23 November 2026";
    chat_render(CHAT_TEMPLATE_SMOLLM3, &o, "Be brief. /no_think", conversation, CONVERSATION_COUNT, NULL, out,
                sizeof out);
    check_text("smollm3 with /no_think in the system prompt", out, smollm3_no_think_text);
    chat_render(CHAT_TEMPLATE_SMOLLM3, &o, NULL, conversation + 4, 1, NULL, out, sizeof out);
    check(
        strncmp(
            out,
            "<|im_start|>system\n## Metadata\n\nKnowledge Cutoff Date: June 2025\nToday Date: 23 November "
            "2026\nReasoning Mode: /think\n\n## Custom Instructions\n\nYou are a helpful AI assistant named "
            "SmolLM, trained by Hugging Face. Your role as an assistant involves thoroughly",
            257) == 0 &&
            strstr(out, "reach the conclusion.\n\n## Tools\n\n") &&
            ends_with(out, "<|im_end|>\n<|im_start|>user\nThanks<|im_end|>\n<|im_start|>assistant\n"),
        "smollm3 without a system prompt: /think and the long default instructions", "%s", out);
    o.enable_thinking = 0;
    chat_render(CHAT_TEMPLATE_SMOLLM3, &o, "  /think Short.  ", conversation + 4, 1, NULL, out, sizeof out);
    check(strstr(out, "Reasoning Mode: /think\n\n## Custom Instructions\n\n   Short.\n\n## Tools") != NULL &&
              ends_with(out, "<|im_end|>\n<|im_start|>assistant\n"),
          "smollm3: /think in the system prompt wins over enable_thinking off", "%s", out);
    chat_render(CHAT_TEMPLATE_SMOLLM3, &o, NULL, conversation + 4, 1, NULL, out, sizeof out);
    check(strstr(out, "Reasoning Mode: /no_think\n\n## Custom Instructions\n\nYou are a helpful AI assistant "
                      "named SmolLM, trained by Hugging Face.\n\n## Tools") != NULL &&
              ends_with(out, "Thanks<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n"),
          "smollm3 with thinking off: /no_think, the short instructions, the empty block", "%s", out);
    chat_render(CHAT_TEMPLATE_SMOLLM3, &o, "Pirate. /system_override", conversation + 4, 1, NULL, out,
                sizeof out);
    check_text("smollm3 /system_override: the system text alone", out,
               "<|im_start|>system\nPirate.<|im_end|>\n<|im_start|>user\nThanks<|im_end|>\n"
               "<|im_start|>assistant\n<think>\n\n</think>\n");
}

/* Recognition from the Jinja text alone. */
static void test_detect_text(const char *file, ChatTemplate want) {
    size_t size;
    char *jinja = read_file_in(vocab_dir, file, &size), name[160], why[200];
    if (!jinja) {
        snprintf(name, sizeof name, "%s recognised", file);
        check_skipped(name, "file missing");
        return;
    }
    Tokenizer fake = {0};
    fake.kind = TOKENIZER_BPE;
    fake.chat_template = jinja;
    ChatTemplate got = chat_template_detect_why(&fake, why, sizeof why);
    snprintf(name, sizeof name, "%s recognised as %s (%s)", file, chat_template_name(want), why);
    check(got == want, name, "got %s", chat_template_name(got));
    free(jinja);
}

static void test_detect(void) {
    test_detect_text("llama3.chat_template.txt", CHAT_TEMPLATE_LLAMA3);
    test_detect_text("qwen3.chat_template.txt", CHAT_TEMPLATE_QWEN3);
    test_detect_text("gemma3.chat_template.txt", CHAT_TEMPLATE_GEMMA);
    Tokenizer fake = {0};
    char why[200];
    fake.kind = TOKENIZER_BPE;
    /* SmolLM3's (not in ../shared): its header lines, from the published template. */
    fake.chat_template =
        "{{- \"<|im_start|>system\\n\" -}}{{- \"Reasoning Mode: \" + reasoning_mode + \"\\n\\n\" -}}";
    check(chat_template_detect_why(&fake, why, sizeof why) == CHAT_TEMPLATE_SMOLLM3, "smollm3 recognised",
          "%s", why);
    /* Llama 3.1's and 3.2's (not in ../shared either): their system header lines. */
    fake.chat_template =
        "{{- \"<|start_header_id|>system<|end_header_id|>\\n\\n\" }}{{- \"Cutting Knowledge Date: "
        "December 2023\\n\" }}";
    check(chat_template_detect_why(&fake, why, sizeof why) == CHAT_TEMPLATE_LLAMA31, "llama3.1 recognised",
          "%s", why);
    fake.chat_template = "{% for m in messages %}{{'<|im_start|>' + m['role'] + '\\n'}}{% endfor %}";
    check(chat_template_detect(&fake) == CHAT_TEMPLATE_CHATML, "plain ChatML stays chatml", "?");
    fake.chat_template = "{{ messages }}";
    check(chat_template_detect_why(&fake, why, sizeof why) == CHAT_TEMPLATE_NONE &&
              strcmp(why, "tokenizer.chat_template not recognised: turns are plain text") == 0,
          "an unknown template falls back to plain text, saying so", "%s", why);
    ChatTemplate t;
    check(chat_template_parse("gemma", &t) == 0 && t == CHAT_TEMPLATE_GEMMA &&
              chat_template_parse("qwen3", &t) == 0 && t == CHAT_TEMPLATE_QWEN3 &&
              chat_template_parse("smollm3", &t) == 0 && t == CHAT_TEMPLATE_SMOLLM3 &&
              chat_template_has_thinking(CHAT_TEMPLATE_QWEN3) &&
              chat_template_has_thinking(CHAT_TEMPLATE_SMOLLM3) &&
              !chat_template_has_thinking(CHAT_TEMPLATE_GEMMA),
          "template names parse; qwen3 and smollm3 have a thinking switch", "?");
}

typedef struct {
    const char *file;
    ChatTemplate tmpl, detected; /* rendered with tmpl; the file's own template is `detected` */
    int enable_thinking;
    const int *ids;
    int count;
    const char *specials[4]; /* each must be one id, found in ids */
    int end_of_turn;         /* the id that ends an answer */
} VocabCase;

static int contains(const int *ids, int n, int id) {
    for (int i = 0; i < n; i++)
        if (ids[i] == id) return 1;
    return 0;
}

/* The template's end-of-turn token stops a /chat answer and plain
 * generation alike. */
static void test_stops(const VocabCase *vc, const Tokenizer *tok) {
    char name[200], err[200];
    Model t; /* chat_create reads only the context length */
    memset(&t, 0, sizeof t);
    t.config.seq_len = 64;
    Chat c;
    int made = chat_create(&c, &t, tok, vc->tmpl, NULL, err, sizeof err) == 0;
    snprintf(name, sizeof name, "%s: id %d ends a /chat answer", vc->file, vc->end_of_turn);
    check(made && contains(c.stop_ids, c.stop_count, vc->end_of_turn) && c.suffix_ids[0] == vc->end_of_turn,
          name, "%s", made ? "not a stop token" : err);
    if (made) chat_destroy(&c);
    int stops[8], n_stops;
    generate_stop_tokens(tok, stops, 8, &n_stops);
    snprintf(name, sizeof name, "%s: id %d ends plain generation too", vc->file, vc->end_of_turn);
    check(contains(stops, n_stops, vc->end_of_turn), name, "%d stop ids", n_stops);
}

static void test_vocab(const VocabCase *vc) {
    char name[200], err[200], path[1024];
    size_t size;
    snprintf(path, sizeof path, "%s/%s", vocab_dir, vc->file);
    void *data = read_file(path, &size);
    if (!data) {
        snprintf(name, sizeof name, "%s: conversation ids", vc->file);
        check_skipped(name, "file missing");
        return;
    }
    Tokenizer tok;
    if (tokenizer_create_gguf(&tok, data, size, err, sizeof err) != 0) {
        snprintf(name, sizeof name, "%s: vocabulary loads", vc->file);
        check(0, name, "%s", err);
        free(data);
        return;
    }
    char why[200];
    ChatTemplate found = chat_template_detect_why(&tok, why, sizeof why);
    snprintf(name, sizeof name, "%s: its tokenizer.chat_template gives %s", vc->file,
             chat_template_name(vc->detected));
    check(found == vc->detected, name, "got %s (%s)", chat_template_name(found), why);

    /* /chat renders the GGUF's own template through the Jinja engine (its ids against llama.cpp's:
     * tests/host/test_chat_jinja.py); the template line says so. */
    char line[400] = "";
    int usable = chat_template_check_jinja(&tok, found, line, sizeof line);
    snprintf(name, sizeof name, "%s: /chat drives its tokenizer.chat_template through llm/jinja", vc->file);
    check(usable == 0 && strstr(line, "through the Jinja engine"), name, "%s", line);

    ChatOptions o = chat_default_options();
    o.enable_thinking = vc->enable_thinking;
    int ids[512];
    int n =
        chat_encode(vc->tmpl, &o, &tok, SYSTEM, conversation, CONVERSATION_COUNT, ids, 512, err, sizeof err);
    int same = n == vc->count && memcmp(ids, vc->ids, sizeof(int) * (size_t)n) == 0;
    int at = 0;
    while (at < n && at < vc->count && ids[at] == vc->ids[at]) at++;
    snprintf(name, sizeof name, "%s: the conversation's %d ids are llama-tokenize's of the hand-written text",
             vc->file, vc->count);
    check(same, name, "%d ids (%s), first difference at %d: %d vs %d", n, n < 0 ? err : "", at,
          at < n ? ids[at] : -1, at < vc->count ? vc->ids[at] : -1);
    for (int i = 0; i < 4 && vc->specials[i]; i++) {
        const char *s = vc->specials[i];
        int one[8];
        int got = tokenizer_encode_ex(&tok, s, strlen(s), TOKENIZE_PARSE_SPECIAL, one, 8, err, sizeof err);
        int seen = 0;
        for (int k = 0; k < n; k++) seen += got == 1 && ids[k] == one[0];
        snprintf(name, sizeof name, "%s: %s is one id in the conversation", vc->file, s);
        check(got == 1 && seen > 0, name, "%d ids, seen %d times", got, seen);
    }
    test_stops(vc, &tok);
    tokenizer_destroy(&tok);
    free(data);
}

int main(void) {
    static char dir[1024];
    snprintf(dir, sizeof dir, "%s/vocab", models_dir_from_env());
    vocab_dir = dir;
    test_render();
    test_detect();
#define IDS(a) a, (int)(sizeof a / sizeof a[0])
    /* clang-format off */
    static const VocabCase cases[] = {
        {"llama3.gguf", CHAT_TEMPLATE_LLAMA3, CHAT_TEMPLATE_LLAMA3, 1, IDS(llama3_ids),
         {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}, 128009},
        {"llama3.gguf", CHAT_TEMPLATE_LLAMA31, CHAT_TEMPLATE_LLAMA3, 1, IDS(llama31_ids),
         {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"}, 128009},
        {"qwen3.gguf", CHAT_TEMPLATE_QWEN3, CHAT_TEMPLATE_QWEN3, 0, IDS(qwen3_ids), {"<|im_start|>", "<|im_end|>", "<think>", "</think>"},
         151645},
        {"gemma3.gguf", CHAT_TEMPLATE_GEMMA, CHAT_TEMPLATE_GEMMA, 1, IDS(gemma3_ids), {"<bos>", "<start_of_turn>", "<end_of_turn>", NULL},
         106},
    };
    /* clang-format on */
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) test_vocab(&cases[i]);
    return failures ? 1 : 0;
}
