"""tokenizer_strings.py - deterministic text that stresses BPE pre-tokenisers:
mixed scripts, emoji (with joiners, flags, skin tones), digit runs in several
number systems, punctuation and symbol runs, whitespace runs, contractions,
code. The same seed always gives the same strings, so a difference found in CI
reproduces anywhere.

    strings(count, seed) -> [str]
"""
import random

WORDS = ["the", "a", "token", "Hello", "WORLD", "llama", "cpp", "naïve", "café", "Straße", "über", "ÉCOLE",
         "mañana", "Ωμέγα", "слово", "ПРИВЕТ", "مرحبا", "שלום", "नमस्ते", "สวัสดี", "你好", "世界", "日本語",
         "カタカナ", "ひらがな", "한국어", "Ἀθῆναι", "ﬁne", "İstanbul", "ǅemal", "x86_64", "GGUF", "utf-8"]
CONTRACTIONS = ["don't", "I'M", "we've", "they'LL", "it's", "She'd", "you're", "'s", "'t", "'Re", "can't"]
EMOJI = ["🦙", "😀", "👍🏽", "👩‍💻", "🇩🇪", "🇯🇵", "❤️", "✨", "🤖", "🧑‍🤝‍🧑", "☕", "🔥🔥"]
DIGITS = ["0", "7", "42", "123", "2024", "31415926", "1,000,000", "3.14", "٣٤٥", "१२३", "１２３", "½", "Ⅻ", "²"]
PUNCTUATION = [".", ",", "!", "?", "...", "!!!", "?!", ";", ":", "-", "--", "—", "(", ")", "[]", "{}", "\"", "'",
               "«»", "„“", "¿", "¡", "。", "、", "・", "…", "/", "\\", "@", "#", "$", "%", "^", "&", "*", "+",
               "=", "<", ">", "|", "~", "`", "€", "£", "©", "°", "→", "∑"]
SPACES = [" ", "  ", "   ", "\t", "\n", "\n\n", " \n", "\r\n", "\u00a0", "\u3000", "\u2009", " \t ", "\n   \n"]
CODE = ["int main(void) {", "return 0;", "x += y*2;", "if (a != b)", "def f(x):", "    pass", "#include <stdio.h>",
        "a->b", "i++", "0x1F", "arr[i][j]", "std::vector<int>", "//comment", "/* c */", "'''doc'''",
        "print(f\"{x}\")", "${HOME}/.bashrc", "<|im_start|>", "</s>", "<think>"]
POOLS = [WORDS, CONTRACTIONS, EMOJI, DIGITS, PUNCTUATION, SPACES, CODE]


def one_string(rng):
    parts = []
    for _ in range(rng.randint(1, 8)):
        pool = rng.choice(POOLS)
        piece = rng.choice(pool)
        if pool is WORDS and rng.random() < 0.2:
            piece = piece.upper() if rng.random() < 0.5 else piece.capitalize()
        parts.append(piece)
        joiner = rng.random()
        if joiner < 0.5:
            parts.append(" ")
        elif joiner < 0.6:
            parts.append(rng.choice(SPACES))
    text = "".join(parts)
    if rng.random() < 0.15:
        text = " " + text
    return text


def strings(count, seed):
    rng = random.Random(seed)
    return [one_string(rng) for _ in range(count)]
