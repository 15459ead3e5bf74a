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
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "llm/generate/generate.h"
#include "llm/generate/loaded_model.h"
#include "llm/compute/kernels.h"
#include "llm/model/kv_cache.h"
#include "llm/format/gguf.h"
#include "llm/format/gguf_split.h"
#include "llm/tokenizer/tokenizer.h"
#include "llm/model/model.h"
#include "tools/file_util.h"
#include "tools/llmrun_modes.h"
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

/* What main has loaded (the model file's bytes and what was made of them),
 * handed back by finish. */
typedef struct {
    LoadedModel llm;
    char *model_data;
} Loaded;

static int finish(Loaded *l, int rc) {
    loaded_model_close(&l->llm);
    free_model_files(l->model_data);
    return rc;
}

/* The model's own vocabulary (a GGUF without --tokenizer) or tokenizer.bin. */
static void load_tokenizer(Loaded *l, const char *checkpoint, int tokenizer_given,
                           const char *tokenizer_path) {
    char err[256];
    if (checkpoint && !tokenizer_given && model_has_vocabulary(&l->llm.model)) {
        if (loaded_model_tokenizer(&l->llm, NULL, 0, err, sizeof err) != 0) die(checkpoint, err);
        if (l->llm.tokenizer.warning[0]) fprintf(stderr, "llmrun: warning: %s\n", l->llm.tokenizer.warning);
    } else {
        size_t tok_size;
        char *tok_data = read_whole_file(tokenizer_path, &tok_size);
        if (loaded_model_tokenizer(&l->llm, tok_data, tok_size, err, sizeof err) != 0)
            die(tokenizer_path, err);
        if (l->llm.tokenizer.bytes_read < tok_size)
            fprintf(stderr,
                    "llmrun: warning: %s has more tokens than the model's %d; is it the right tokenizer?\n",
                    tokenizer_path, l->llm.model.config.vocab_size);
        free(tok_data);
    }
}

/* Everything the command line sets, with run.c's defaults. */
typedef struct {
    const char *checkpoint, *tokenizer_path, *prompt, *mode, *logits_out, *token_list;
    const char *chat_system, *chat_template, *simd;
    int chat_scratch, chat_thinking, steps, ctx, tokenize, tokenize_cases, chat_ids, use_avx2, f32_matmul,
        tokenizer_given, threads;
    int kv_type; /* --kv, else the model's default (-1) */
    float temperature, topp;
    unsigned long long seed;
    SamplerConfig config;
    RenderRequest render;
} Options;

/* The flags without a value: each sets one int of Options. */
static const struct {
    const char *flag;
    size_t field;
    int value;
} switches[] = {
    {"--tokenize", offsetof(Options, tokenize), 1},
    {"--cases", offsetof(Options, tokenize_cases), 1},
    {"--chat-ids", offsetof(Options, chat_ids), 1},
    {"--avx2", offsetof(Options, use_avx2), 1},
    {"--chat-scratch", offsetof(Options, chat_scratch), 1},
    {"--no-generation-prompt", offsetof(Options, render.generation_prompt), 0},
    {"--f32-matmul", offsetof(Options, f32_matmul), 1},
};

/* The flags whose value is kept as given: each sets one string of Options. */
static const struct {
    const char *flag;
    size_t field;
} strings[] = {
    {"-i", offsetof(Options, prompt)},
    {"-m", offsetof(Options, mode)},
    {"-y", offsetof(Options, chat_system)},
    {"--chat-template", offsetof(Options, chat_template)},
    {"--simd", offsetof(Options, simd)},
    {"--logits-out", offsetof(Options, logits_out)},
    {"--tokens", offsetof(Options, token_list)},
    {"--template-file", offsetof(Options, render.template_file)},
    {"--render", offsetof(Options, render.messages_file)},
    {"--bos-token", offsetof(Options, render.bos_token)},
    {"--eos-token", offsetof(Options, render.eos_token)},
};

#define FIELD(o, type, offset) ((type *)((char *)(o) + (offset)))

/* The flags whose value is a number or a choice; 0, or -1 for an unknown flag. */
static int parse_checked_flag(Options *o, const char *flag, const char *value) {
    if (strcmp(flag, "-t") == 0)
        o->temperature = (float)parse_number(flag, value);
    else if (strcmp(flag, "-p") == 0)
        o->topp = (float)parse_number(flag, value);
    else if (strcmp(flag, "-s") == 0) {
        long long v = parse_integer(flag, value);
        /* run.c: unsigned long long seed = atoi(...) */
        o->seed = (v >= -2147483647LL - 1 && v <= 2147483647LL) ? (unsigned long long)(int)v
                                                                : (unsigned long long)v;
    } else if (strcmp(flag, "-n") == 0) {
        long long v = parse_integer(flag, value);
        o->steps = v > 1000000000 ? 1000000000 : (int)v;
    } else if (strcmp(flag, "--ctx") == 0) {
        long long v = parse_integer(flag, value);
        if (v < 1 || v > 1 << 30) die("--ctx must be in [1, 2^30] (and at most the trained context)", NULL);
        o->ctx = (int)v;
    } else if (strcmp(flag, "-z") == 0)
        o->tokenizer_path = value, o->tokenizer_given = 1;
    else if (strcmp(flag, "--think") == 0) {
        if (strcmp(value, "on") != 0 && strcmp(value, "off") != 0) die("--think: not on|off:", value);
        o->chat_thinking = strcmp(value, "on") == 0;
    } else if (strcmp(flag, "-k") == 0) {
        long long v = parse_integer(flag, value);
        if (v < 0 || v > 1 << 30) die("-k must be >= 0", NULL);
        o->config.top_k = (int)v;
    } else if (strcmp(flag, "--min-p") == 0)
        o->config.min_p = (float)parse_number(flag, value);
    else if (strcmp(flag, "--repeat-penalty") == 0)
        o->config.repeat_penalty = (float)parse_number(flag, value);
    else if (strcmp(flag, "--repeat-last-n") == 0) {
        long long v = parse_integer(flag, value);
        if (v < 0 || v > 65536) die("--repeat-last-n must be in [0, 65536]", NULL);
        o->config.repeat_last_n = (int)v;
    } else if (strcmp(flag, "--threads") == 0) {
        long long v = parse_integer(flag, value);
        if (v < 1 || v > THREAD_POOL_MAX) die("--threads must be in [1, 64]", NULL);
        o->threads = (int)v;
    } else if (strcmp(flag, "--kv") == 0) {
        o->kv_type = kv_type_parse(value);
        if (o->kv_type < 0) die("--kv is f16, q8_0 or f32, not", value);
    } else
        return -1;
    return 0;
}

/* One flag at argv[*i] (and its value, *i moved past it). */
static void parse_flag(Options *o, int argc, char **argv, int *i) {
    const char *flag = argv[*i];
    for (size_t k = 0; k < sizeof switches / sizeof switches[0]; k++)
        if (strcmp(flag, switches[k].flag) == 0) {
            *FIELD(o, int, switches[k].field) = switches[k].value;
            return;
        }
    if (strcmp(flag, "-h") == 0 || strcmp(flag, "--help") == 0) usage();
    if (flag[0] != '-') {
        fprintf(stderr, "llmrun: unexpected argument '%s'\n", flag);
        usage();
    }
    if (*i + 1 >= argc) {
        fprintf(stderr, "llmrun: %s needs a value\n", flag);
        usage();
    }
    const char *value = argv[++*i];
    for (size_t k = 0; k < sizeof strings / sizeof strings[0]; k++)
        if (strcmp(flag, strings[k].flag) == 0) {
            *FIELD(o, const char *, strings[k].field) = value;
            return;
        }
    if (parse_checked_flag(o, flag, value) != 0) {
        fprintf(stderr, "llmrun: unknown option '%s'\n", flag);
        usage();
    }
}

static Options parse_args(int argc, char **argv) {
    Options o = {.tokenizer_path = "tokenizer.bin",
                 .mode = "generate",
                 .simd = "auto",
                 .chat_thinking = 1,
                 .steps = 256,
                 .threads = thread_pool_cpus(),
                 .kv_type = -1,
                 .temperature = 1.0f,
                 .topp = 0.9f,
                 .config = sampler_default_config(),
                 .render = {NULL, NULL, NULL, NULL, 1}};
    int i = 1;
    if (argc >= 2 && argv[1][0] != '-') o.checkpoint = argv[i++];
    for (; i < argc; i++) parse_flag(&o, argc, argv, &i);
    return o;
}

/* The flags that only make sense together, and run.c's clamping of
 * out-of-range parameters. */
static void check_options(Options *o) {
    if (strcmp(o->mode, "generate") != 0 && strcmp(o->mode, "chat") != 0)
        die("-m is generate or chat, not", o->mode);
    if ((o->logits_out == NULL) != (o->token_list == NULL))
        die("--logits-out and --tokens go together", NULL);
    if (o->seed == 0) o->seed = (unsigned int)time(NULL);
    if (o->temperature < 0.0f) o->temperature = 0.0f;
    if (o->topp < 0.0f || 1.0f < o->topp) o->topp = 0.9f;
    if (o->steps < 0) o->steps = 0;
    o->config.temperature = o->temperature;
    o->config.topp = o->topp;
    o->config.seed = o->seed;
}

/* --simd (or --avx2): auto is the probe's choice, natively the widest set
 * (the fastest there). */
static void use_simd(const char *simd, int use_avx2) {
    if (use_avx2) simd = "avx2";
    int isa = strcmp(simd, "auto") == 0 ? (int)kernels_probe(NULL, NULL) : isa_parse(simd);
    if (isa == ISA_AVX2 && !isa_usable(ISA_AVX2)) die("--simd avx2: this CPU has no AVX2+FMA+F16C", NULL);
    if (isa == ISA_AVX512 && !isa_usable(ISA_AVX512))
        die("--simd avx512: this CPU has no AVX-512F+BW+VL", NULL);
    if (isa < 0) die("--simd takes auto, scalar, sse2, avx2 or avx512", NULL);
    kernels_use(isa);
}

/* The checkpoint's model with --ctx, --f32-matmul and --kv applied. For
 * --tokenize on a GGUF only its vocabulary (vocabulary-only files, with no
 * tensors, and unsupported architectures work too): returns 1 then. */
static int load_model(Loaded *l, const Options *o) {
    char err[256];
    size_t model_size = 0;
    l->model_data = read_whole_file(o->checkpoint, &model_size);
    if (o->tokenize && !o->tokenizer_given && gguf_is_gguf(l->model_data, model_size)) {
        if (loaded_model_vocabulary(&l->llm, l->model_data, model_size, err, sizeof err) != 0)
            die(o->checkpoint, err);
        if (l->llm.tokenizer.warning[0]) fprintf(stderr, "llmrun: warning: %s\n", l->llm.tokenizer.warning);
        return 1;
    }
    GgufPieces pieces = {o->checkpoint, read_piece, NULL};
    LoadOptions options = {o->ctx, &pieces, 0, -1, o->f32_matmul};
    if (loaded_model_open(&l->llm, l->model_data, model_size, &options, NULL, NULL, err, sizeof err) != 0)
        die(o->checkpoint, err);
    Model *model = &l->llm.model;
    char features[448];
    if (*model_features(model, features, sizeof features))
        fprintf(stderr, "llmrun: %s: %s\n", model_arch_name(model), features);
    if (o->kv_type >= 0 && model_kv_fixed(model, err, sizeof err))
        fprintf(stderr, "llmrun: --kv ignored: %s\n", err);
    else if (o->kv_type >= 0 && model_set_kv_type(model, (uint32_t)o->kv_type, err, sizeof err) != 0)
        die("--kv", err);
    return 0;
}

/* -m generate: the prompt's continuation on stdout, the figures on stderr. */
static int run_generate(Loaded *l, const Options *o) {
    char err[256];
    GenerateIO io = {emit_stdout, stop_requested, monotonic_ns, NULL, NULL};
    GenerateStats stats;
    if (generate(&l->llm.model, &l->llm.tokenizer, &l->llm.sampler, o->prompt, o->steps, &io, &stats, err,
                 sizeof err) != 0)
        die(err, NULL);
    printf("\n");
    fflush(stdout);
    print_generate_stats(&stats);
    return 0;
}

int main(int argc, char **argv) {
    Options o = parse_args(argc, argv);
    chat_ids_template = o.chat_ids ? o.render.template_file : NULL;
    if (!o.chat_ids && (o.render.messages_file || o.render.template_file)) {
        if (!o.render.messages_file || !o.render.template_file)
            die("--template-file and --render go together", NULL);
        return render_template_main(&o.render);
    }
    if (!o.checkpoint && !o.tokenize) usage();
    check_options(&o);
    use_simd(o.simd, o.use_avx2);
    thread_pool_start(o.threads);

    Loaded l = {0};
    Model *model = &l.llm.model;
    Tokenizer *tok = &l.llm.tokenizer;
    if (o.checkpoint && load_model(&l, &o))
        return finish(&l, run_tokenize(tok, o.tokenize_cases, o.chat_ids, o.chat_thinking));
    if (o.logits_out) return finish(&l, run_logits(model, o.logits_out, o.token_list));

    load_tokenizer(&l, o.checkpoint, o.tokenizer_given, o.tokenizer_path);
    if (o.tokenize) return finish(&l, run_tokenize(tok, o.tokenize_cases, o.chat_ids, o.chat_thinking));

    char err[256];
    if (loaded_model_sampler(&l.llm, &o.config, err, sizeof err) != 0) die(err, NULL);
    signal(SIGINT, on_sigint);
    if (strcmp(o.mode, "chat") == 0)
        return finish(&l, run_chat(model, tok, &l.llm.sampler, o.chat_system, o.chat_template, o.steps,
                                   o.chat_scratch, o.chat_thinking));
    return finish(&l, run_generate(&l, &o));
}
