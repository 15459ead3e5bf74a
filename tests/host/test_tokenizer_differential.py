#!/usr/bin/env python3
"""Differential test of our GGUF tokenizers against llama.cpp's: the real
Llama 3, Qwen3 and Gemma 3 vocabularies of ../shared/models/vocab, over
generated strings (tests/host/tokenizer_strings.py: mixed scripts, emoji,
digits, punctuation and whitespace runs, contractions, code). llmrun
--tokenize --cases and llama.cpp (node-llama-cpp, tests/reference/
tokenize_cases.mjs) read the same input file; every string's ids must be
equal. The first differences are printed with their text; two known cases
come first. The fuzz harness tests/fuzz/fuzz_vocab_text.c (the same three
vocabularies over fuzzed text) cannot call llama.cpp, so its corpus is a
second source of strings, checked the same way: the committed
tests/fuzz/corpus/vocab_text, and build/fuzz/work/vocab_text when `make
fuzz` has grown one.

    TOKENIZER_DIFF_COUNT=N (default 10000) strings per vocabulary

The reference is installed by tools/install-references.sh: without it the
check is a skip, and with CI set a failure.

Exit 0 all passed, 1 any failed, 77 when the test data or llmrun is missing.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from check import check, check_skipped, exit_status, missing_prerequisite  # noqa: E402
from test_summary import in_ci  # noqa: E402
from tokenizer_strings import strings  # noqa: E402

MODELS = os.environ.get("MODELS_DIR", os.path.join(ROOT, "..", "shared", "models"))
LLMRUN = os.path.join(ROOT, "build", "host", "llmrun")
REFERENCE = os.path.join(ROOT, "tests", "reference")
SEPARATOR = "\n__ggml_vocab_test__\n"
VOCABULARIES = ["llama3", "qwen3", "gemma3"]
COUNT = int(os.environ.get("TOKENIZER_DIFF_COUNT", "10000"))
SEED = 20261127
# Cases found before this test existed: the first is issue 21's (Qwen3 saw the
# llama as a letter), the second Gemma 3's "</s>" (a user-defined token that
# llama.cpp makes a control token, so in plain text it is three pieces).
KNOWN_CASES = [" this is 🦙.cpp", "über </s> 2024"]
FUZZ_CORPORA = [os.path.join(ROOT, "tests", "fuzz", "corpus", "vocab_text"),
                os.path.join(ROOT, "build", "fuzz", "work", "vocab_text")]


def fuzz_strings():
    """The fuzz corpora's inputs that a JavaScript string carries unchanged
    (the harness keeps no others), and how many files there were."""
    texts, files = [], 0
    for corpus in FUZZ_CORPORA:
        for name in sorted(os.listdir(corpus)) if os.path.isdir(corpus) else []:
            files += 1
            with open(os.path.join(corpus, name), "rb") as f:
                data = f.read()
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            if "\0" not in text and "__ggml_vocab_test__" not in text:
                texts.append(text)
    return texts, files


def ids_from(command, inp):
    with open(inp, "rb") as stdin:
        run = subprocess.run(command, stdin=stdin, capture_output=True, timeout=600)
    if run.returncode != 0:
        raise RuntimeError(f"{command[0]} exited {run.returncode}: {run.stderr.decode(errors='replace')[-400:]}")
    return run.stdout.decode().split("\n")[:-1], run.stderr.decode(errors="replace")


def compare(name, texts, inp, what="generated strings"):
    vocab = os.path.join(MODELS, "vocab", name + ".gguf")
    ours, _ = ids_from([LLMRUN, vocab, "--tokenize", "--cases"], inp)
    theirs, versions = ids_from(["node", os.path.join(REFERENCE, "tokenize_cases.mjs"), vocab, inp], inp)
    if len(ours) != len(texts) or len(theirs) != len(texts):
        return check(False, f"{name}: {len(texts)} strings tokenized by both",
                     f"ours gave {len(ours)} lines, llama.cpp {len(theirs)}")
    differ = [i for i in range(len(texts)) if ours[i] != theirs[i]]
    for i in differ[:5]:
        print(f"    {name} #{i} {texts[i]!r}\n      ours:      {ours[i]}\n      llama.cpp: {theirs[i]}")
    answered = versions.splitlines()[0] if versions else "reference"
    return check(not differ, f"{name}: {len(texts)} {what} give llama.cpp's ids ({answered})",
                 f"{len(differ)} of {len(texts)} differ")


def main():
    status = missing_prerequisite(files=[os.path.join(MODELS, "vocab", v + ".gguf") for v in VOCABULARIES],
                                  binaries=[LLMRUN])
    if status:
        return status
    if not os.path.isdir(os.path.join(REFERENCE, "node_modules", "node-llama-cpp")):
        why = "node-llama-cpp is not installed (sh tools/install-references.sh)"
        if in_ci():
            check(False, "tokenizer differential against llama.cpp", why)
        else:
            check_skipped("tokenizer differential against llama.cpp", why)
        return exit_status()
    fuzzed, files = fuzz_strings()
    if not fuzzed:
        check(False, "the fuzz corpus tests/fuzz/corpus/vocab_text holds strings", f"{files} files, none usable")
    sources = [(KNOWN_CASES + strings(COUNT, SEED), "generated strings"),
               (fuzzed, f"fuzz-corpus strings (of {files} files)")]
    with tempfile.TemporaryDirectory() as tmp:
        for k, (texts, what) in enumerate(sources):
            if not texts:
                continue
            inp = os.path.join(tmp, f"cases{k}.inp")
            with open(inp, "w", encoding="utf-8", newline="") as f:
                f.write("".join(text + SEPARATOR for text in texts))
            for name in VOCABULARIES:
                compare(name, texts, inp, what)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
