/* llmrun - the host runner: llama2.c's run.c command line over the same
 * llm/ code the kernel runs.
 *
 *   llmrun MODEL [-t T] [-p P] [-s SEED] [-n STEPS] [-i PROMPT] [-z TOKENIZER] [-m generate]
 *                [-k TOPK] [--min-p X] [--repeat-penalty X] [--repeat-last-n N] [--threads N] [--avx2]
 *   llmrun [MODEL] [-z TOKENIZER] --tokenize          ids of stdin's text (no BOS) on one line
 *   llmrun [MODEL] [-z TOKENIZER] --tokenize --cases  one line of ids per input of llama.cpp's
 *                                                     test-tokenizer-0 layout (.inp in, .out out)
 *   llmrun MODEL --tokenize --chat-ids [--think off]  ids of the conversation on stdin (system,
 *                                                     user, assistant, ..., user; each followed by
 *                                                     the --cases separator) as /chat encodes it
 *                                                     through the GGUF's chat template
 *   llmrun MODEL --logits-out FILE --tokens "ID ..."  raw float32 logits [positions][vocab]
 *   llmrun MODEL -m chat [-y SYSTEM] [--chat-template T] [--think on|off] [--chat-scratch]
 *                                                  one turn per stdin line
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "llm/generate/chat.h"
#include "llm/generate/generate.h"
#include "llm/model/gguf_arch.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/generate/sampler.h"
#include "llm/format/gguf.h"
#include "llm/format/gguf_split.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/model/model.h"
#include "llm/model/gguf_runtime.h"
#include "tools/file_util.h"
#include "tools/render_template.h"
#include "tools/thread_pool.h"

static void usage(void) {
    fprintf(stderr,
            "Usage:   llmrun <checkpoint> [options]\n"
            "Example: llmrun stories260K.bin -z tok512.bin -n 256 -i \"Once upon a time\"\n"
            "Options:\n"
            "  -t <float>  temperature in [0,inf], default 1.0\n"
            "  -p <float>  p value in top-p (nucleus) sampling in [0,1], default 0.9\n"
            "  -s <int>    random seed, default time(NULL)\n"
            "  -n <int>    number of steps to run for, default 256. 0 = max_seq_len\n"
            "  --ctx <int>               context length, default the model's trained one (no cap)\n"
            "  -i <string> input prompt\n"
            "  -z <string> path to the tokenizer, default tokenizer.bin\n"
            "  -m <string> mode: generate|chat (chat: one user turn per stdin line, one answer line each)\n"
            "  -y <string> chat: system prompt\n"
            "  --chat-template <name>    chat: llama3|llama3.1|qwen3|smollm3|gemma|chatml|llama2|\n"
            "                            zephyr|none (default: the model's)\n"
            "  --think on|off            chat: the template's thinking switch (qwen3, smollm3), default on\n"
            "  --chat-scratch            chat: run the whole conversation from position 0 every turn\n"
            "  -k <int>    top-k sampling, 0 = off (default)\n"
            "  --min-p <float>           min-p sampling, 0 = off (default)\n"
            "  --repeat-penalty <float>  repetition penalty, 1 = off (default)\n"
            "  --repeat-last-n <int>     tokens the penalty looks back over, default 64\n"
            "  --threads <int>           threads for the matmuls and attention, default all cores\n"
            "  --simd auto|scalar|sse2|avx2|avx512  kernel set (default auto: the widest the CPU has)\n"
            "  --avx2                    same as --simd avx2\n"
            "  --tokenize                print the ids of stdin's text (no BOS) and exit\n"
            "  --cases                   with --tokenize: stdin holds inputs each followed by\n"
            "                            \"\\n__ggml_vocab_test__\\n\"; one line of ids per input\n"
            "  --chat-ids                with --tokenize: stdin holds the system prompt, then user,\n"
            "                            assistant, ..., user (each followed by that separator);\n"
            "                            prints the ids /chat gives them (the GGUF's chat template)\n"
            "  --f32-matmul         GGUF: dequantise weights to fp32 for every matmul (reference path)\n"
            "  --kv f16|q8_0|f32         GGUF: KV cache type, default f16 (as llama.cpp)\n"
            "  --logits-out <file> --tokens \"<id> <id> ...\"  write the logits of every position\n"
            "  --template-file <file.jinja> --render <messages.json>  print the chat template's rendering\n"
            "      (llm/jinja) and exit; with --bos-token <s>, --eos-token <s>, --no-generation-prompt\n");
    exit(EXIT_FAILURE);
}

static void die(const char *what, const char *why) {
    fprintf(stderr, "llmrun: %s%s%s\n", what, why ? ": " : "", why ? why : "");
    exit(EXIT_FAILURE);
}

static char *read_whole_file(const char *path, size_t *size) {
    char *data = file_read_all(path, size);
    if (!data) {
        fprintf(stderr, "llmrun: cannot read %s: %s\n", path, strerror(errno));
        exit(EXIT_FAILURE);
    }
    return data;
}

/* The other pieces of a split GGUF model, read whole when the loader asks
 * for them by name and freed with the first piece (free_model_files). */
static char **pieces_read;
static size_t n_pieces_read;

static const void *read_piece(void *ctx, const char *name, size_t *size) {
    char **grown = realloc(pieces_read, (n_pieces_read + 1) * sizeof *grown);
    if (!grown) return NULL;
    pieces_read = grown;
    char *data = file_read_all(name, size);
    if (data) pieces_read[n_pieces_read++] = data;
    return data;
}

static void free_model_files(char *model_data) {
    for (size_t i = 0; i < n_pieces_read; i++) free(pieces_read[i]);
    free(pieces_read);
    pieces_read = NULL, n_pieces_read = 0;
    free(model_data);
}

static double parse_number(const char *flag, const char *text) {
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (end == text || *end || errno) {
        fprintf(stderr, "llmrun: %s needs a number, got '%s'\n", flag, text);
        exit(EXIT_FAILURE);
    }
    return v;
}

static long long parse_integer(const char *flag, const char *text) {
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (end == text || *end || errno) {
        fprintf(stderr, "llmrun: %s needs an integer, got '%s'\n", flag, text);
        exit(EXIT_FAILURE);
    }
    return v;
}

/* ---------------------------------------------------------------- generation I/O */

static volatile sig_atomic_t interrupted;
static void on_sigint(int sig) {
    interrupted = 1;
}

static void emit_stdout(void *ctx, const char *text, size_t len) {
    fwrite(text, 1, len, stdout);
    fflush(stdout);
}

static int stop_requested(void *ctx) {
    return interrupted;
}

static uint64_t monotonic_ns(void *ctx) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double per_second(double count, uint64_t ns) {
    return ns ? count / ((double)ns / 1e9) : 0.0;
}

/* ---------------------------------------------------------------- modes */

/* -m chat: each stdin line is a user turn; each answer is printed on one
 * line (figures on stderr). The KV cache is kept across turns unless
 * scratch asks for a from-scratch run of the whole conversation each turn. */
static int run_chat(Model *t, const Tokenizer *tok, Sampler *s, const char *system, const char *template_name,
                    int steps, int scratch, int thinking) {
    char err[256], why[400];
    ChatTemplate tmpl = chat_template_detect_why(tok, why, sizeof why);
    if (template_name && chat_template_parse(template_name, &tmpl) != 0)
        die("--chat-template: not llama3|llama3.1|qwen3|smollm3|gemma|chatml|llama2|zephyr|none:",
            template_name);
    /* The GGUF's own template through the Jinja engine, unless --chat-template chose a built-in one. */
    int jinja = !template_name && chat_template_check_jinja(tok, tmpl, why, sizeof why) == 0;
    fprintf(stderr, "chat: template %s (%s)\n", jinja ? "jinja" : chat_template_name(tmpl),
            template_name ? "chosen by --chat-template" : why);
    Chat chat;
    if (chat_create(&chat, t, tok, tmpl, system, err, sizeof err) != 0) die(err, NULL);
    if (jinja) chat_use_jinja(&chat, tok->chat_template);
    chat.options.enable_thinking = thinking;
    GenerateIO io = {emit_stdout, stop_requested, monotonic_ns, NULL, NULL};
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        size_t len = strlen(line);
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (scratch) chat.pos = 0;
        GenerateStats st;
        int rc = chat_turn(&chat, t, tok, s, line, steps, &io, &st, err, sizeof err);
        if (rc == CHAT_NO_ROOM) {
            fprintf(stderr, "llmrun: chat: %s\n", err);
            printf("\n");
            break;
        }
        if (rc != 0) die(err, NULL);
        printf("\n");
        fflush(stdout);
        fprintf(stderr, "turn: prefill %d tokens, %d generated, stop: %s, %d of %d context used\n",
                st.prompt_tokens, st.generated_tokens, stop_reason_name(st.reason), chat.count,
                chat.capacity);
    }
    chat_destroy(&chat);
    return 0;
}

/* Prints the ids of text (no BOS) on one line. */
static void print_ids(const Tokenizer *tok, const char *text) {
    size_t max_tokens = tokenizer_max_tokens(strlen(text));
    int *ids = malloc(max_tokens * sizeof(int));
    char err[160];
    int n = ids ? tokenizer_encode(tok, text, 0, 0, ids, max_tokens, err, sizeof err) : -1;
    if (n < 0) die(ids ? err : "out of memory", NULL);
    for (int i = 0; i < n; i++) printf("%s%d", i ? " " : "", ids[i]);
    printf("\n");
    free(ids);
}

/* --tokenize: stdin's text is one input; with --cases it is llama.cpp's
 * test-tokenizer-0 layout (each input followed by CASE_SEPARATOR), and each
 * input's ids get a line of their own, as that test's .out files hold them. */
#define CASE_SEPARATOR "\n__ggml_vocab_test__\n"
/* --chat-ids: the inputs are the system prompt, then the messages. */
static const char *chat_ids_template; /* --template-file with --chat-ids: instead of the GGUF's */

static int print_chat_ids(const Tokenizer *tok, char *text, int thinking) {
    const char *inputs[256];
    int n = 0;
    for (char *input = text, *end; n < 256 && (end = strstr(input, CASE_SEPARATOR));
         input = end + strlen(CASE_SEPARATOR)) {
        *end = '\0';
        inputs[n++] = input;
    }
    if (n < 2) die("--chat-ids: stdin holds the system prompt and at least one message", NULL);
    size_t tlen;
    char *tmpl = chat_ids_template ? file_read_all(chat_ids_template, &tlen) : NULL;
    if (chat_ids_template && !tmpl) die("--template-file: cannot read", chat_ids_template);
    if (!tmpl && !tok->chat_template) die("--chat-ids: the vocabulary has no tokenizer.chat_template", NULL);
    ChatOptions o = chat_default_options();
    o.enable_thinking = thinking;
    int *ids;
    char err[300];
    int count = chat_jinja_encode(tok, tmpl ? tmpl : tok->chat_template, &o, inputs[0], inputs + 1, n - 1,
                                  &ids, err, sizeof err);
    free(tmpl);
    if (count < 0) die("--chat-ids", err);
    for (int i = 0; i < count; i++) printf("%s%d", i ? " " : "", ids[i]);
    printf("\n");
    free(ids);
    return 0;
}

static int run_tokenize(const Tokenizer *tok, int cases, int chat_ids, int thinking) {
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap + 1);
    for (;;) {
        if (!text) die("out of memory reading stdin", NULL);
        len += fread(text + len, 1, cap - len, stdin);
        if (len < cap) break;
        cap *= 2;
        text = realloc(text, cap + 1);
    }
    text[len] = '\0';
    if (chat_ids) {
        print_chat_ids(tok, text, thinking);
    } else if (!cases) {
        print_ids(tok, text);
    } else {
        for (char *input = text, *end; (end = strstr(input, CASE_SEPARATOR));
             input = end + strlen(CASE_SEPARATOR)) {
            *end = '\0';
            print_ids(tok, input);
        }
    }
    free(text);
    return 0;
}

static int run_logits(Model *t, const char *out_path, const char *token_list) {
    const ModelConfig *c = &t->config;
    int *ids = malloc((size_t)c->seq_len * sizeof(int));
    int n = 0;
    const char *s = token_list;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == ',' || *s == '\n') s++;
        if (!*s) break;
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || errno) die("--tokens: not a token id near", s);
        if (v < 0 || v >= c->vocab_size) {
            fprintf(stderr, "llmrun: --tokens: id %ld is outside the vocabulary (0..%d)\n", v,
                    c->vocab_size - 1);
            exit(EXIT_FAILURE);
        }
        if (n == c->seq_len) {
            fprintf(stderr, "llmrun: --tokens: more than %d ids, the context length\n", c->seq_len);
            exit(EXIT_FAILURE);
        }
        ids[n++] = (int)v;
        s = end;
    }
    if (n == 0) die("--tokens: no token ids given", NULL);
    FILE *out = fopen(out_path, "wb");
    if (!out) {
        fprintf(stderr, "llmrun: cannot create %s: %s\n", out_path, strerror(errno));
        exit(EXIT_FAILURE);
    }
    for (int pos = 0; pos < n; pos++) {
        float *logits = model_forward(t, ids[pos], pos);
        if (!logits) die("forward pass failed", NULL);
        if (fwrite(logits, sizeof(float), (size_t)c->vocab_size, out) != (size_t)c->vocab_size)
            die("write error on", out_path);
    }
    if (fclose(out) != 0) die("write error on", out_path);
    free(ids);
    return 0;
}

/* What main has loaded, handed back by finish in reverse order. */
typedef struct {
    Model model;
    Tokenizer tokenizer;
    Sampler sampler;
    int have_transformer, have_tokenizer, have_sampler;
    char *model_data;
} Loaded;

static int finish(Loaded *l, int rc) {
    if (l->have_sampler) sampler_destroy(&l->sampler);
    if (l->have_tokenizer) tokenizer_destroy(&l->tokenizer);
    if (l->have_transformer) model_destroy(&l->model);
    free_model_files(l->model_data);
    return rc;
}

/* The model's own vocabulary (a GGUF without --tokenizer) or tokenizer.bin. */
static void load_tokenizer(Loaded *l, const char *checkpoint, int tokenizer_given, const char *tokenizer_path,
                           size_t model_size, int vocab_size) {
    char err[256];
    if (checkpoint && !tokenizer_given && model_has_vocabulary(&l->model)) {
        if (tokenizer_create_gguf(&l->tokenizer, l->model_data, model_size, err, sizeof err) != 0)
            die(checkpoint, err);
        if (l->tokenizer.warning[0]) fprintf(stderr, "llmrun: warning: %s\n", l->tokenizer.warning);
    } else {
        size_t tok_size;
        char *tok_data = read_whole_file(tokenizer_path, &tok_size);
        if (tokenizer_create(&l->tokenizer, tok_data, tok_size, vocab_size, err, sizeof err) != 0)
            die(tokenizer_path, err);
        if (l->tokenizer.bytes_read < tok_size)
            fprintf(stderr,
                    "llmrun: warning: %s has more tokens than the model's %d; is it the right tokenizer?\n",
                    tokenizer_path, vocab_size);
        free(tok_data);
    }
    l->have_tokenizer = 1;
}

/* The closing figures of a generate run on stderr. */
static void print_generate_stats(const GenerateStats *stats) {
    /* llama2.c's figure: positions after the first, timed from the end of the first. */
    if (stats->positions > 1)
        fprintf(stderr, "achieved tok/s: %f\n", per_second(stats->positions - 1, stats->after_first_ns));
    int decoded = stats->positions - stats->prompt_tokens;
    if (decoded < 0) decoded = 0;
    fprintf(
        stderr,
        "prompt %d tokens in %.1f ms (%.1f tok/s), generated %d tokens in %.1f ms (%.1f tok/s), stop: %s\n",
        stats->prompt_tokens, stats->prefill_ns / 1e6,
        per_second(stats->positions < stats->prompt_tokens ? stats->positions : stats->prompt_tokens,
                   stats->prefill_ns),
        stats->generated_tokens, stats->decode_ns / 1e6, per_second(decoded, stats->decode_ns),
        stop_reason_name(stats->reason));
}

int main(int argc, char **argv) {
    const char *checkpoint = NULL, *tokenizer_path = "tokenizer.bin", *prompt = NULL, *mode = "generate";
    const char *logits_out = NULL, *token_list = NULL;
    const char *chat_system = NULL, *chat_template = NULL;
    int chat_scratch = 0, chat_thinking = 1;
    float temperature = 1.0f, topp = 0.9f;
    unsigned long long seed = 0;
    const char *simd = "auto";
    int steps = 256, ctx = 0, tokenize = 0, tokenize_cases = 0, chat_ids = 0, use_avx2 = 0, f32_matmul = 0,
        tokenizer_given = 0;
    int threads = thread_pool_cpus();
    int kv_type = -1; /* --kv, else the model's default */
    SamplerConfig config = sampler_default_config();
    RenderRequest render = {NULL, NULL, NULL, NULL, 1};

    int i = 1;
    if (argc >= 2 && argv[1][0] != '-') checkpoint = argv[i++];
    for (; i < argc; i++) {
        const char *flag = argv[i];
        /* Flags without a value. */
        if (strcmp(flag, "--tokenize") == 0) {
            tokenize = 1;
            continue;
        }
        if (strcmp(flag, "--cases") == 0) {
            tokenize_cases = 1;
            continue;
        }
        if (strcmp(flag, "--chat-ids") == 0) {
            chat_ids = 1;
            continue;
        }
        if (strcmp(flag, "--avx2") == 0) {
            use_avx2 = 1;
            continue;
        }
        if (strcmp(flag, "--chat-scratch") == 0) {
            chat_scratch = 1;
            continue;
        }
        if (strcmp(flag, "--no-generation-prompt") == 0) {
            render.generation_prompt = 0;
            continue;
        }
        if (strcmp(flag, "--f32-matmul") == 0) {
            f32_matmul = 1;
            continue;
        }
        if (strcmp(flag, "-h") == 0 || strcmp(flag, "--help") == 0) usage();
        if (flag[0] != '-') {
            fprintf(stderr, "llmrun: unexpected argument '%s'\n", flag);
            usage();
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "llmrun: %s needs a value\n", flag);
            usage();
        }
        const char *value = argv[++i];
        if (strcmp(flag, "-t") == 0)
            temperature = (float)parse_number(flag, value);
        else if (strcmp(flag, "-p") == 0)
            topp = (float)parse_number(flag, value);
        else if (strcmp(flag, "-s") == 0) {
            long long v = parse_integer(flag, value);
            /* run.c: unsigned long long seed = atoi(...) */
            seed = (v >= -2147483647LL - 1 && v <= 2147483647LL) ? (unsigned long long)(int)v
                                                                 : (unsigned long long)v;
        } else if (strcmp(flag, "-n") == 0) {
            long long v = parse_integer(flag, value);
            steps = v > 1000000000 ? 1000000000 : (int)v;
        } else if (strcmp(flag, "--ctx") == 0) {
            long long v = parse_integer(flag, value);
            if (v < 1 || v > 1 << 30)
                die("--ctx must be in [1, 2^30] (and at most the trained context)", NULL);
            ctx = (int)v;
        } else if (strcmp(flag, "-i") == 0)
            prompt = value;
        else if (strcmp(flag, "-z") == 0)
            tokenizer_path = value, tokenizer_given = 1;
        else if (strcmp(flag, "-m") == 0)
            mode = value;
        else if (strcmp(flag, "-y") == 0)
            chat_system = value;
        else if (strcmp(flag, "--think") == 0) {
            if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) die("--think: not on|off:", value);
            chat_thinking = strcmp(value, "on") == 0;
        } else if (strcmp(flag, "--chat-template") == 0)
            chat_template = value;
        else if (strcmp(flag, "-k") == 0) {
            long long v = parse_integer(flag, value);
            if (v < 0 || v > 1 << 30) die("-k must be >= 0", NULL);
            config.top_k = (int)v;
        } else if (strcmp(flag, "--min-p") == 0)
            config.min_p = (float)parse_number(flag, value);
        else if (strcmp(flag, "--repeat-penalty") == 0)
            config.repeat_penalty = (float)parse_number(flag, value);
        else if (strcmp(flag, "--repeat-last-n") == 0) {
            long long v = parse_integer(flag, value);
            if (v < 0 || v > 65536) die("--repeat-last-n must be in [0, 65536]", NULL);
            config.repeat_last_n = (int)v;
        } else if (strcmp(flag, "--threads") == 0) {
            long long v = parse_integer(flag, value);
            if (v < 1 || v > THREAD_POOL_MAX) die("--threads must be in [1, 64]", NULL);
            threads = (int)v;
        } else if (strcmp(flag, "--simd") == 0)
            simd = value;
        else if (strcmp(flag, "--logits-out") == 0)
            logits_out = value;
        else if (strcmp(flag, "--kv") == 0) {
            kv_type = kv_type_parse(value);
            if (kv_type < 0) die("--kv is f16, q8_0 or f32, not", value);
        } else if (strcmp(flag, "--tokens") == 0)
            token_list = value;
        else if (strcmp(flag, "--template-file") == 0)
            render.template_file = value;
        else if (strcmp(flag, "--render") == 0)
            render.messages_file = value;
        else if (strcmp(flag, "--bos-token") == 0)
            render.bos_token = value;
        else if (strcmp(flag, "--eos-token") == 0)
            render.eos_token = value;
        else {
            fprintf(stderr, "llmrun: unknown option '%s'\n", flag);
            usage();
        }
    }
    chat_ids_template = chat_ids ? render.template_file : NULL;
    if (!chat_ids && (render.messages_file || render.template_file)) {
        if (!render.messages_file || !render.template_file)
            die("--template-file and --render go together", NULL);
        return render_template_main(&render);
    }
    if (!checkpoint && !tokenize) usage();
    if (strcmp(mode, "generate") != 0 && strcmp(mode, "chat") != 0) die("-m is generate or chat, not", mode);
    if ((logits_out == NULL) != (token_list == NULL)) die("--logits-out and --tokens go together", NULL);

    /* run.c's clamping of out-of-range parameters. */
    if (seed == 0) seed = (unsigned int)time(NULL);
    if (temperature < 0.0f) temperature = 0.0f;
    if (topp < 0.0f || 1.0f < topp) topp = 0.9f;
    if (steps < 0) steps = 0;
    config.temperature = temperature;
    config.topp = topp;
    config.seed = seed;

    if (use_avx2) simd = "avx2";
    /* auto: the probe's choice, natively the widest set (the fastest there) */
    int isa = strcmp(simd, "auto") == 0 ? (int)kernels_probe(NULL, NULL) : isa_parse(simd);
    if (isa == ISA_AVX2 && !isa_usable(ISA_AVX2)) die("--simd avx2: this CPU has no AVX2+FMA+F16C", NULL);
    if (isa == ISA_AVX512 && !isa_usable(ISA_AVX512))
        die("--simd avx512: this CPU has no AVX-512F+BW+VL", NULL);
    if (isa < 0) die("--simd takes auto, scalar, sse2, avx2 or avx512", NULL);
    kernels_use(isa);

    thread_pool_start(threads);

    char err[256];
    Loaded l = {0};
    Model *transformer = &l.model;
    int vocab_size = 0;
    size_t model_size = 0;
    if (checkpoint) {
        l.model_data = read_whole_file(checkpoint, &model_size);
        /* --tokenize on a GGUF needs only its vocabulary: vocabulary-only
         * files (no tensors) and unsupported architectures work too. */
        if (tokenize && !tokenizer_given && gguf_is_gguf(l.model_data, model_size)) {
            if (tokenizer_create_gguf(&l.tokenizer, l.model_data, model_size, err, sizeof err) != 0)
                die(checkpoint, err);
            l.have_tokenizer = 1;
            if (l.tokenizer.warning[0]) fprintf(stderr, "llmrun: warning: %s\n", l.tokenizer.warning);
            return finish(&l, run_tokenize(&l.tokenizer, tokenize_cases, chat_ids, chat_thinking));
        }
        GgufPieces pieces = {checkpoint, read_piece, NULL};
        if (model_create(transformer, l.model_data, model_size, &(ModelOptions){ctx, &pieces}, err,
                         sizeof err) != 0)
            die(checkpoint, err);
        l.have_transformer = 1;
        vocab_size = transformer->config.vocab_size;
        char features[448];
        if (*model_features(transformer, features, sizeof features))
            fprintf(stderr, "llmrun: %s: %s\n", model_arch_name(transformer), features);
        if (f32_matmul) model_set_reference(transformer, 1);
        if (kv_type >= 0 && model_kv_fixed(transformer, err, sizeof err))
            fprintf(stderr, "llmrun: --kv ignored: %s\n", err);
        else if (kv_type >= 0 && model_set_kv_type(transformer, (uint32_t)kv_type, err, sizeof err) != 0)
            die("--kv", err);
    }
    if (logits_out) return finish(&l, run_logits(transformer, logits_out, token_list));

    load_tokenizer(&l, checkpoint, tokenizer_given, tokenizer_path, model_size, vocab_size);
    if (tokenize) return finish(&l, run_tokenize(&l.tokenizer, tokenize_cases, chat_ids, chat_thinking));

    if (sampler_create(&l.sampler, vocab_size, &config, err, sizeof err) != 0) die(err, NULL);
    l.have_sampler = 1;
    signal(SIGINT, on_sigint);
    if (strcmp(mode, "chat") == 0)
        return finish(&l, run_chat(transformer, &l.tokenizer, &l.sampler, chat_system, chat_template, steps,
                                   chat_scratch, chat_thinking));
    GenerateIO io = {emit_stdout, stop_requested, monotonic_ns, NULL, NULL};
    GenerateStats stats;
    if (generate(transformer, &l.tokenizer, &l.sampler, prompt, steps, &io, &stats, err, sizeof err) != 0)
        die(err, NULL);
    printf("\n");
    fflush(stdout);
    print_generate_stats(&stats);
    return finish(&l, 0);
}
