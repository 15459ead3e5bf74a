/* test_pretokenize.c - the pre-tokenizer families added for the names
 * llama.cpp knows, against an independent reference, and the name table's
 * fallbacks.
 *
 * The expected pieces were made with Python's `regex` module (2026.5.9),
 * applying each family's regex list from llama.cpp's llm_tokenizer_bpe the
 * way unicode_regex_split does: every regex splits every piece left by the
 * previous one into its matches and the text between them. The texts keep to
 * characters on which Python's exact Unicode classes and llama.cpp's
 * collapsed ones agree. */
#include <stdint.h>
#include <string.h>

#include "llm/tokenizer/pretokenize.h"
#include "llm/tokenizer/unicode.h"
#include "tests/host/check.h"

#define TEXT_COUNT 12

typedef struct {
    const char *name;
    const char *pieces[TEXT_COUNT];
} FamilyCases;

static const char *const texts[] = {
    "Hello World! It's 12345 dollars.",
    "camelCaseWords and HTTPServer, XMLHttpRequest's",
    "  leading   spaces\n\n\tand tabs  ",
    "path/to/file.txt\n// comment\r\nx",
    "Gr\303\274\303\237e, \320\224\320\236\320\221\320\240\320\253\320\231 \320\264\320\265\320\275\321\214! "
    "\303\234n\303\257c\303\266d\303\251",
    "\346\225\260\345\255\227 123456789 and "
    "\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203\210, "
    "\355\225\234\352\265\255\354\226\264",
    "a.b,c!d?e (f|g) \342\200\246end\343\200\202",
    "I'VE done it, they'll see. 'Quoted'",
    "MixedCASEWordsHere42times",
    "x  \n  y\n\n\nz",
    "$100+200=<300> ^_^ ~tilde~ `tick`",
    "na\303\257ve caf\303\251 \316\251\316\274\316\255\316\263\316\261 "
    "\316\243\316\212\316\243\316\245\316\246\316\237\316\243",
};

/* Pieces separated by octal 037, one entry per text. */
static const FamilyCases families[] = {
    {"gpt-4o",
     {
         "Hello\037 World\037!\037 It's\037 \037123\03745\037 dollars\037.",
         "camel\037Case\037Words\037 and\037 HTTPServer\037,\037 XMLHttp\037Request's",
         " \037 leading\037  \037 spaces\037\n\n\037\tand\037 tabs\037  ",
         "path\037/to\037/file\037.txt\037\n\037//\037 comment\037\r\n\037x",
         "Gr\303\274\303\237e\037,\037 \320\224\320\236\320\221\320\240\320\253\320\231\037 "
         "\320\264\320\265\320\275\321\214\037!\037 \303\234n\303\257c\303\266d\303\251",
         "\346\225\260\345\255\227\037 \037123\037456\037789\037 and\037 "
         "\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203\210"
         "\037,\037 \355\225\234\352\265\255\354\226\264",
         "a\037.b\037,c\037!d\037?e\037 (\037f\037|g\037)\037 \342\200\246\037end\037\343\200\202",
         "I'VE\037 done\037 it\037,\037 they'll\037 see\037.\037 '\037Quoted\037'",
         "Mixed\037CASEWords\037Here\03742\037times",
         "x\037  \n\037 \037 y\037\n\n\n\037z",
         "$\037100\037+\037200\037=<\037300\037>\037 ^_^\037 ~\037tilde\037~\037 `\037tick\037`",
         "na\303\257ve\037 caf\303\251\037 \316\251\316\274\316\255\316\263\316\261\037 "
         "\316\243\316\212\316\243\316\245\316\246\316\237\316\243",
     }},
    {"tekken",
     {
         "Hello\037 World\037!\037 It\037's\037 \0371\0372\0373\0374\0375\037 dollars\037.",
         "camel\037Case\037Words\037 and\037 HTTPServer\037,\037 XMLHttp\037Request\037's",
         " \037 leading\037  \037 spaces\037\n\n\037\tand\037 tabs\037  ",
         "path\037/to\037/file\037.txt\037\n\037//\037 comment\037\r\n\037x",
         "Gr\303\274\303\237e\037,\037 \320\224\320\236\320\221\320\240\320\253\320\231\037 "
         "\320\264\320\265\320\275\321\214\037!\037 \303\234n\303\257c\303\266d\303\251",
         "\346\225\260\345\255\227\037 \0371\0372\0373\0374\0375\0376\0377\0378\0379\037 and\037 "
         "\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203\210"
         "\037,\037 \355\225\234\352\265\255\354\226\264",
         "a\037.b\037,c\037!d\037?e\037 (\037f\037|g\037)\037 \342\200\246\037end\037\343\200\202",
         "I\037'VE\037 done\037 it\037,\037 they\037'll\037 see\037.\037 '\037Quoted\037'",
         "Mixed\037CASEWords\037Here\0374\0372\037times",
         "x\037  \n\037 \037 y\037\n\n\n\037z",
         "$\0371\0370\0370\037+\0372\0370\0370\037=<\0373\0370\0370\037>\037 ^_^\037 ~\037tilde\037~\037 "
         "`\037tick\037`",
         "na\303\257ve\037 caf\303\251\037 \316\251\316\274\316\255\316\263\316\261\037 "
         "\316\243\316\212\316\243\316\245\316\246\316\237\316\243",
     }},
    {"bloom",
     {
         "Hello\037 World\037!\037 It's\037 12345\037 dollars\037.",
         "camelCaseWords\037 and\037 HTTPServer\037,\037 XMLHttpRequest's",
         " \037 leading\037  \037 spaces\037\n\n\t\037and\037 tabs\037  ",
         "path/to/file\037.\037txt\037\n\037//\037 comment\037\r\n\037x",
         "Gr\303\274\303\237e\037,\037 \320\224\320\236\320\221\320\240\320\253\320\231\037 "
         "\320\264\320\265\320\275\321\214\037!\037 \303\234n\303\257c\303\266d\303\251",
         "\346\225\260\345\255\227\037 123456789\037 and\037 "
         "\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203\210"
         "\037,\037 \355\225\234\352\265\255\354\226\264",
         "a\037.\037b\037,\037c\037!\037d\037?\037e\037 (\037f\037|\037g\037) "
         "\342\200\246\037end\037\343\200\202",
         "I'VE\037 done\037 it\037,\037 they'll\037 see\037.\037 'Quoted'",
         "MixedCASEWordsHere42times",
         "x\037  \n \037 y\037\n\n\n\037z",
         "$100+200=<300>\037 ^_^\037 ~tilde~\037 `tick`",
         "na\303\257ve\037 caf\303\251\037 \316\251\316\274\316\255\316\263\316\261\037 "
         "\316\243\316\212\316\243\316\245\316\246\316\237\316\243",
     }},
    {"viking",
     {
         "Hello\037 World\037!\037 It's\037 \0371\0372\0373\0374\0375\037 dollars\037.",
         "camelCaseWords\037 and\037 HTTPServer\037,\037 XMLHttpRequest's",
         " \037 leading\037  \037 spaces\037\n\n\t\037and\037 tabs\037  ",
         "path/to/file\037.\037txt\037\n\037//\037 comment\037\r\n\037x",
         "Gr\303\274\303\237e\037,\037 \320\224\320\236\320\221\320\240\320\253\320\231\037 "
         "\320\264\320\265\320\275\321\214\037!\037 \303\234n\303\257c\303\266d\303\251",
         "\346\225\260\345\255\227\037 \0371\0372\0373\0374\0375\0376\0377\0378\0379\037 and\037 "
         "\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203\210"
         "\037,\037 \355\225\234\352\265\255\354\226\264",
         "a\037.\037b\037,\037c\037!\037d\037?\037e\037 (\037f\037|\037g\037) "
         "\342\200\246\037end\037\343\200\202",
         "I'VE\037 done\037 it\037,\037 they'll\037 see\037.\037 'Quoted'",
         "MixedCASEWordsHere\0374\0372\037times",
         "x\037  \n \037 y\037\n\n\n\037z",
         "$\0371\0370\0370\037+\0372\0370\0370\037=<\0373\0370\0370\037>\037 ^_^\037 ~tilde~\037 `tick`",
         "na\303\257ve\037 caf\303\251\037 \316\251\316\274\316\255\316\263\316\261\037 "
         "\316\243\316\212\316\243\316\245\316\246\316\237\316\243",
     }},
    {"seed-coder",
     {
         "Hello\037 World\037!\037 It\037's\037 \0371\0372\0373\0374\0375\037 dollars\037.",
         "camelCaseWords\037 and\037 HTTPServer\037,\037 XMLHttpRequest\037's",
         " \037 leading\037  \037 spaces\037\n\n\037\tand\037 tabs\037  ",
         "path\037/to\037/file\037.txt\037\n\037//\037 comment\037\r\n\037x",
         "Gr\303\274\303\237e\037,\037 \320\224\320\236\320\221\320\240\320\253\320\231\037 "
         "\320\264\320\265\320\275\321\214\037!\037 \303\234n\303\257c\303\266d\303\251",
         "\346\225\260\345\255\227\037 \0371\0372\0373\0374\0375\0376\0377\0378\0379\037 and\037 "
         "\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203\210"
         "\037,\037 \355\225\234\352\265\255\354\226\264",
         "a\037.b\037,c\037!d\037?e\037 (\037f\037|g\037)\037 \342\200\246\037end\037\343\200\202",
         "I\037'VE\037 done\037 it\037,\037 they\037'll\037 see\037.\037 '\037Quoted\037'",
         "MixedCASEWordsHere\0374\0372\037times",
         "x\037  \n\037 \037 y\037\n\n\n\037z",
         "$\0371\0370\0370\037+\0372\0370\0370\037=<\0373\0370\0370\037>\037 ^_^\037 ~\037tilde\037~\037 "
         "`\037tick\037`",
         "na\303\257ve\037 caf\303\251\037 \316\251\316\274\316\255\316\263\316\261\037 "
         "\316\243\316\212\316\243\316\245\316\246\316\237\316\243",
     }},
    {"deepseek-llm",
     {
         "Hello\037 World\037!\037 It\037'\037s\037 \03712345\037 dollars\037.",
         "camelCaseWords\037 and\037 HTTPServer\037,\037 XMLHttpRequest\037'\037s",
         " \037 leading\037  \037 spaces\037\n\037\n\037\tand\037 tabs\037  ",
         "path\037/\037to\037/\037file\037.\037txt\037\n\037//\037 comment\037\r\037\n\037x",
         "Gr\037\303\274\303\237\037e\037,\037 \320\224\320\236\320\221\320\240\320\253\320\231\037 "
         "\320\264\320\265\320\275\321\214\037!\037 "
         "\303\234\037n\037\303\257\037c\037\303\266\037d\037\303\251",
         "\346\225\260\345\255\227\037 \037123456789\037 and\037 "
         "\037\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203"
         "\210\037,\037 \037\355\225\234\352\265\255\354\226\264",
         "a\037.\037b\037,\037c\037!\037d\037?\037e\037 (\037f\037|\037g\037)\037 "
         "\037\342\200\246\037end\037\343\200\202",
         "I\037'\037VE\037 done\037 it\037,\037 they\037'\037ll\037 see\037.\037 '\037Quoted\037'",
         "MixedCASEWordsHere\03742\037times",
         "x\037  \037\n\037 \037 y\037\n\037\n\037\n\037z",
         "$\037100\037+\037200\037=<\037300\037>\037 ^_^\037 ~\037tilde\037~\037 `\037tick\037`",
         "na\037\303\257\037ve\037 caf\037\303\251\037 \316\251\316\274\316\255\316\263\316\261\037 "
         "\316\243\316\212\316\243\316\245\316\246\316\237\316\243",
     }},
    {"deepseek-v3",
     {
         "Hello\037 World\037!\037 It\037's\037 \037123\03745\037 dollars\037.",
         "camelCaseWords\037 and\037 HTTPServer\037,\037 XMLHttpRequest\037's",
         " \037 leading\037  \037 spaces\037\n\n\037\tand\037 tabs\037  ",
         "path\037/to\037/file\037.txt\037\n\037//\037 comment\037\r\n\037x",
         "Gr\303\274\303\237e\037,\037 \320\224\320\236\320\221\320\240\320\253\320\231\037 "
         "\320\264\320\265\320\275\321\214\037!\037 \303\234n\303\257c\303\266d\303\251",
         "\346\225\260\345\255\227\037 \037123\037456\037789\037 and\037 "
         "\037\346\227\245\346\234\254\350\252\236\343\201\256\343\203\206\343\202\255\343\202\271\343\203"
         "\210\037,\037 \355\225\234\352\265\255\354\226\264",
         "a\037.b\037,c\037!d\037?e\037 (\037f\037|g\037)\037 \342\200\246\037end\037\343\200\202",
         "I\037'VE\037 done\037 it\037,\037 they\037'll\037 see\037.\037 '\037Quoted\037'",
         "MixedCASEWordsHere\03742\037times",
         "x\037  \n\037 \037 y\037\n\n\n\037z",
         "$\037100\037+\037200\037=<\037300\037>\037 ^_^\037 ~\037tilde\037~\037 `\037tick\037`",
         "na\303\257ve\037 caf\303\251\037 \316\251\316\274\316\255\316\263\316\261\037 "
         "\316\243\316\212\316\243\316\245\316\246\316\237\316\243",
     }},
};

/* The pieces the pre-tokenizer of `name` cuts text into, joined by \037. */
static void split_text(const char *name, const char *text, char *out, size_t out_size) {
    char warning[160];
    PretokenizerChoice choice = pretokenizer_choose(name, strlen(name), warning, sizeof warning);
    uint32_t cps[256];
    size_t byte_at[257], count = 0, len = strlen(text);
    for (size_t i = 0; i < len && count < 256;) {
        byte_at[count] = i;
        i += unicode_decode_utf8((const unsigned char *)text + i, len - i, &cps[count++]);
    }
    byte_at[count] = len;
    size_t ends[256], used = 0, start = 0;
    long pieces = pretokenize(choice.kind, cps, count, ends);
    out[0] = '\0';
    for (long p = 0; p < pieces; p++) {
        size_t from = byte_at[start], to = byte_at[ends[p]];
        if (p) out[used++] = '\037';
        if (used + (to - from) + 2 > out_size) break;
        memcpy(out + used, text + from, to - from);
        used += to - from;
        out[used] = '\0';
        start = ends[p];
    }
}

static void check_families(void) {
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        char warning[160];
        pretokenizer_choose(families[f].name, strlen(families[f].name), warning, sizeof warning);
        char name[96];
        snprintf(name, sizeof name, "%s: known and exact (no warning)", families[f].name);
        check(warning[0] == '\0', name, "%s", warning);
        for (int i = 0; i < TEXT_COUNT; i++) {
            char got[1024];
            split_text(families[f].name, texts[i], got, sizeof got);
            snprintf(name, sizeof name, "%s: text %d splits as the reference", families[f].name, i);
            for (char *c = got; *c; c++) *c = *c == '\037' ? '|' : *c;
            char want[1024];
            snprintf(want, sizeof want, "%s", families[f].pieces[i]);
            for (char *c = want; *c; c++) *c = *c == '\037' ? '|' : *c;
            check(strcmp(got, want) == 0, name, "got [%s] want [%s]", got, want);
        }
    }
}

/* Unknown names fall back to the family with the longest shared prefix,
 * else llama3, with a one-line warning; approximated names warn too. */
static void check_names(void) {
    char warning[160];
    PretokenizerChoice c = pretokenizer_choose("qwen9", 5, warning, sizeof warning);
    check(c.kind == PRETOKENIZER_QWEN2 && !c.exact && strstr(warning, "unknown pre-tokenizer 'qwen9'") &&
              strstr(warning, "'qwen2'") && !strchr(warning, '\n'),
          "unknown 'qwen9': qwen2's family, with a warning", "kind %d \"%s\"", c.kind, warning);
    c = pretokenizer_choose("no-such-pre", 11, warning, sizeof warning);
    check(c.kind == PRETOKENIZER_LLAMA3 && strstr(warning, "'no-such-pre'"),
          "unknown 'no-such-pre': llama3's family, with a warning", "kind %d \"%s\"", c.kind, warning);
    c = pretokenizer_choose("jais-2", 6, warning, sizeof warning);
    check(c.kind == PRETOKENIZER_LLAMA3 && !c.exact && strstr(warning, "approximated"),
          "'jais-2': approximated by llama3, with a warning", "kind %d \"%s\"", c.kind, warning);
    c = pretokenizer_choose("", 0, warning, sizeof warning);
    check(c.kind == PRETOKENIZER_DEFAULT && c.exact && !warning[0], "no name: default, no warning",
          "kind %d \"%s\"", c.kind, warning);
    c = pretokenizer_choose("llama-bpe", 9, warning, sizeof warning);
    PretokenizerChoice d = pretokenizer_choose("smaug-bpe", 9, warning, sizeof warning);
    check(c.ignore_merges && !d.ignore_merges && c.kind == d.kind,
          "llama-bpe ignores merges, smaug-bpe (same regex) does not", "%d %d", c.ignore_merges,
          d.ignore_merges);
    const char *names[] = {"deepseek-llm", "deepseek-v3", "gpt-4o",   "llama4",      "tekken",
                           "bloom",        "poro-chat",   "viking",   "chatglm-bpe", "exaone",
                           "minerva-7b",   "megrez",      "superbpe", "trillion",    "bailingmoe",
                           "seed-coder",   "kimi-k2",     "hunyuan",  "grok-2",      "chameleon"};
    int known = 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        pretokenizer_choose(names[i], strlen(names[i]), warning, sizeof warning);
        known += strstr(warning, "unknown") == NULL;
    }
    check(known == (int)(sizeof names / sizeof names[0]), "llama.cpp's names are all in the table",
          "%d of %zu", known, sizeof names / sizeof names[0]);
}

/* Every family on random strings of awkward code points: the pieces cover
 * the text in order, none empty (ASan watches the matchers' reads). */
static void check_random_strings(void) {
    static const uint32_t pool[] = {'a',    'Z',    'q',    '0',    '7',     ' ',    ' ',    '\n',
                                    '\r',   '\t',   '\'',   's',    'L',     'l',    '.',    ',',
                                    '!',    '/',    '(',    '|',    '$',     '<',    0xE9,   0xC9,
                                    0x3A9,  0x416,  0x301,  0x4E2D, 0x3042,  0x30AB, 0xAC00, 0x2026,
                                    0x3002, 0xFF0C, 0x0964, 0x2581, 0x1F600, 0xA0,   0x2028, 0xFEFF};
    uint32_t state = 12345, cps[64];
    size_t ends[64];
    int bad = 0;
    char first_bad[96] = "";
    for (int kind = PRETOKENIZER_DEFAULT; kind <= PRETOKENIZER_SEED_CODER; kind++) {
        for (int round = 0; round < 3000; round++) {
            state = state * 1103515245u + 12345u;
            size_t count = 1 + (state >> 16) % 64;
            for (size_t i = 0; i < count; i++) {
                state = state * 1103515245u + 12345u;
                cps[i] = pool[(state >> 16) % (sizeof pool / sizeof pool[0])];
            }
            long pieces = pretokenize((PretokenizerKind)kind, cps, count, ends);
            int ok = pieces > 0 && ends[pieces - 1] == count;
            for (long p = 0; ok && p < pieces; p++) ok = ends[p] > (p ? ends[p - 1] : 0);
            if (!ok && !bad++)
                snprintf(first_bad, sizeof first_bad, "family %s, round %d", pretokenizer_family_name(kind),
                         round);
        }
    }
    check(bad == 0, "every family: pieces cover random text in order (14 x 3000 strings)", "%d bad, first %s",
          bad, first_bad);
}

int main(void) {
    check_families();
    check_names();
    check_random_strings();
    return failures ? 1 : 0;
}
