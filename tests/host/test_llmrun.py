#!/usr/bin/env python3
"""End-to-end checks of build/host/llmrun against llama2.c's outputs.

Run from the repository root (after `make build/host/llmrun`). Prints one line
per check; exit 0 all passed, 1 any failed, 77 when the test data or the
binary is missing.
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

from check import check, exit_status

LLMRUN = os.environ.get("LLMRUN", "build/host/llmrun")
MODELS = os.environ.get("MODELS_DIR", "../shared/models")
MODEL = os.path.join(MODELS, "stories260K.bin")
TOK512 = os.path.join(MODELS, "tok512.bin")
TOK32K = os.path.join(MODELS, "tokenizer.bin")
GGUF = os.path.join(MODELS, "stories260K.gguf")


GEN_GGUF = os.environ.get("GEN_GGUF", os.path.join(os.path.dirname(LLMRUN), "gen_gguf"))
LONG_CTX = 32768
PROMPT_AND_GENERATED = re.compile(rb"prompt (\d+) tokens .*generated (\d+) tokens .*stop: (\w+)")


def check_long_context():
    """No hidden cap: a tiny GGUF trained for 32768 positions (0.1 MB, its
    KV cache 4 MiB) generates through every one of them, by default."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ctx32k.gguf")
        subprocess.run([GEN_GGUF, path, "--shape", "stories15M", "--dim", "32", "--layers", "1", "--heads", "2",
                        "--kv-heads", "1", "--ffn", "64", "--vocab", "768", "--ctx", str(LONG_CTX), "--type",
                        "Q8_0"], check=True, capture_output=True, timeout=60)
        r = subprocess.run([LLMRUN, path, "-t", "0", "-n", str(LONG_CTX + 1), "-i", "Once upon a time"],
                           capture_output=True, timeout=600)
    m = PROMPT_AND_GENERATED.search(r.stderr)
    # The last token comes from the logits of position 32767: prompt + generated = context + 1.
    check(r.returncode == 0 and m and m.group(3) == b"context" and
          int(m.group(1)) + int(m.group(2)) == LONG_CTX + 1,
          f"a GGUF trained for {LONG_CTX} positions generates through all of them, then stops: context",
          f"exit {r.returncode} {r.stderr[-300:]!r}")


def run(args, stdin=b""):
    return subprocess.run([LLMRUN] + args, input=stdin, capture_output=True, timeout=120)


def golden(name):
    with open(os.path.join(MODELS, "golden", name), "rb") as f:
        return f.read()


def first_difference(a, b):
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return f"differs at byte {i} (got {len(a)} bytes, want {len(b)}): got {a[i:i + 40]!r}"


def check_stdout(name, args, expected):
    r = run(args)
    ok = r.returncode == 0 and r.stdout == expected
    check(ok, name, f"exit {r.returncode}, {first_difference(r.stdout, expected)} {r.stderr[-200:]!r}")
    return r


def main():
    for path in (MODEL, TOK512, TOK32K, GGUF):
        if not os.path.exists(path):
            print(f"SKIP: {path} not found (set MODELS_DIR)")
            return 77
    if not os.access(LLMRUN, os.X_OK):
        print(f"SKIP: {LLMRUN} not built (make build/host/llmrun)")
        return 77

    # Greedy goldens: the text plus run.c's final newline.
    r = check_stdout("greedy -n 200 prints the golden text", [MODEL, "-z", TOK512, "-t", "0", "-n", "200"],
                     golden("stories260K__once_upon_a_time.txt"))
    check(b"achieved tok/s: " in r.stderr, "stderr reports achieved tok/s", repr(r.stderr))
    check_stdout("greedy prompt 'The little dog'",
                 [MODEL, "-z", TOK512, "-t", "0", "-n", "200", "-i", "The little dog"],
                 golden("stories260K__the_little_dog.txt"))
    text_2c = (b"There was a big pretty grass. It was a long elephant. The cars wanted to tell him that as they spin "
               b"before the amazing doll, just like it she was always okay.\nOne day, a little girl named Lucy found "
               b"a ball and an axe. She wanted to race, but she didn't know what the ball was. The ball was "
               b"determined to be a nice car for Lucy.\nLucy's friend, a little girl named Lily, said, \"Let's go to "
               b"the store with my mom. I will s\n")
    check_stdout("sampled 2c: -t 1 -p 0.95 -s 42 -i 'There was a big'",
                 [MODEL, "-z", TOK512, "-t", "1.0", "-p", "0.95", "-s", "42", "-n", "200", "-i", "There was a big"],
                 text_2c)

    # --tokenize: encode(text, bos=0, eos=0), no model needed.
    r = run(["-z", TOK32K, "--tokenize"], b"I believe the meaning of life is")
    check(r.returncode == 0 and r.stdout == b"306 4658 278 6593 310 2834 338\n", "--tokenize with tokenizer.bin",
          repr(r.stdout))
    r = run([MODEL, "-z", TOK512, "--tokenize"], b"Lily and Tom went to the park")
    check(r.returncode == 0 and r.stdout == b"317 269 274 287 263 377 267 265 282 295 433\n",
          "--tokenize with the model's tokenizer", repr(r.stdout))
    r = run(["-z", TOK32K, "--tokenize"], b"")
    check(r.returncode == 0 and r.stdout == b"\n", "--tokenize of empty input", repr(r.stdout))

    # Vocabulary-only GGUF files (no tensors): every llama.cpp case of each.
    for vocab in ("llama-spm", "gpt-2", "falcon", "starcoder", "deepseek-coder", "phi-3"):
        base = os.path.join(MODELS, "vocab", f"ggml-vocab-{vocab}.gguf")
        with open(base + ".inp", encoding="utf-8") as f:
            cases = f.read().split("\n__ggml_vocab_test__\n")
        with open(base + ".out", encoding="utf-8") as f:
            expected = f.read().split("\n")
        bad = []
        for text, ids in zip(cases, expected):
            r = run([base, "--tokenize"], text.encode())
            if r.returncode != 0 or r.stdout.decode().split() != ids.split():
                bad.append((text[:30], r.stdout[:60], ids[:60], r.stderr[-100:]))
        check(not bad and len(cases) >= 40, f"--tokenize on vocabulary-only {vocab}.gguf: {len(cases)} cases",
              repr(bad[:2]))

    # --logits-out: REFERENCE_OUTPUTS.md section 1 logits for positions 0 (BOS) and 1 (403).
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "logits.bin")
        r = run([MODEL, "--logits-out", out, "--tokens", "1 403"])
        data = open(out, "rb").read() if os.path.exists(out) else b""
        check(r.returncode == 0 and len(data) == 2 * 512 * 4, "--logits-out writes [2][512] float32",
              f"exit {r.returncode}, {len(data)} bytes {r.stderr!r}")
        if len(data) == 2 * 512 * 4:
            row0 = struct.unpack("<512f", data[:2048])
            row1 = struct.unpack("<512f", data[2048:])
            top0 = max(range(512), key=lambda i: row0[i])
            top1 = max(range(512), key=lambda i: row1[i])
            check(top0 == 403 and abs(row0[403] - 17.02352) < 1e-3 and abs(row0[385] - 15.40621) < 1e-3
                  and abs(sum(row0) + 1070.17223) < 1e-2 and abs(min(row0) + 8.02744) < 1e-3,
                  "position 0 logits match the reference", f"argmax {top0} value {row0[top0]}")
            check(top1 == 407 and abs(row1[407] - 18.45998) < 1e-3 and abs(row1[383] - 14.29106) < 1e-3,
                  "position 1 logits match the reference", f"argmax {top1} value {row1[top1]}")
        r = run([MODEL, "--logits-out", out, "--tokens", "1 999"])
        check(r.returncode == 1 and b"outside the vocabulary" in r.stderr, "--tokens rejects an out-of-range id",
              repr(r.stderr))

        # Bad input: one line on stderr, exit 1.
        truncated = os.path.join(tmp, "truncated.bin")
        with open(MODEL, "rb") as f, open(truncated, "wb") as g:
            g.write(f.read()[:5000])
        for name, args in [
            ("missing model file", [os.path.join(tmp, "nope.bin"), "-z", TOK512]),
            ("truncated model file", [truncated, "-z", TOK512]),
            ("missing tokenizer", [MODEL, "-z", os.path.join(tmp, "nope.bin")]),
            ("tokenizer too small for the model", [MODEL, "-z", truncated]),
            ("bad number", [MODEL, "-z", TOK512, "-t", "warm"]),
            ("unsupported mode", [MODEL, "-z", TOK512, "-m", "translate"]),
            ("unknown KV cache type", [GGUF, "--kv", "bogus"]),
            ("q8_0 KV cache on a head size of 8", [GGUF, "--kv", "q8_0"]),
        ]:
            r = run(args)
            lines = r.stderr.decode(errors="replace").strip().splitlines()
            check(r.returncode == 1 and len(lines) >= 1 and lines[0].startswith("llmrun: "),
                  f"{name}: exit 1 with a message", f"exit {r.returncode} {r.stderr[:200]!r}")

    # The GGUF stories260K: the golden text with the default f16 KV cache and with --kv f32.
    for kv in ([], ["--kv", "f32"]):
        check_stdout(f"stories260K.gguf greedy golden text, {'f32' if kv else 'default f16'} KV cache",
                     [GGUF, "-t", "0", "-n", "200"] + kv, golden("stories260K__once_upon_a_time.txt"))

    r = run([MODEL, "-z", TOK512, "-n", "10", "-i", "apple " * 600])
    check(r.returncode == 1 and b"the context is 512" in r.stderr and r.stdout == b"",
          "over-long prompt: error before any output", repr(r.stderr))
    check_long_context()
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
