#!/usr/bin/env python3
"""The Jinja engine (llm/jinja) against @huggingface/jinja on real chat templates.

Every template in ../shared/models/templates/ (llama.cpp's test corpus) is
rendered with several conversations (a system prompt, several turns, empty
content, non-ASCII text, without the generation prompt) through
`llmrun --template-file T --render M.json` and through
tests/reference/render_template.mjs. Wherever the reference renders, the two
must be byte-identical; where the reference refuses, the case is counted
separately (and reported), not compared. Run from the repository root after
`make host` and `sh tools/install-references.sh`; exit 77 when the data, the
binary or the reference is missing (a failure with CI set, by the runner).
"""
import json
import os
import subprocess
import sys
import tempfile

from check import check, exit_status, missing_prerequisite

LLMRUN = os.environ.get("LLMRUN", "build/host/llmrun")
MODELS = os.environ.get("MODELS_DIR", "../shared/models")
TEMPLATES = os.path.join(MODELS, "templates")
REFERENCE = "tests/reference/render_template.mjs"
REFERENCE_MODULE = "tests/reference/node_modules/@huggingface/jinja"

SYSTEM = {"role": "system", "content": "You are a helpful assistant. Answer briefly."}
CONVERSATIONS = {
    "system and one turn": [SYSTEM, {"role": "user", "content": "What is the capital of France?"}],
    "several turns": [
        SYSTEM,
        {"role": "user", "content": "Hello!"},
        {"role": "assistant", "content": "Hi there. How can I help you today?"},
        {"role": "user", "content": "Explain  a KV cache\nin two lines.  "},
        {"role": "assistant", "content": "It stores keys and values.\nSo each token is computed once."},
        {"role": "user", "content": "Thanks"},
    ],
    "no system prompt": [{"role": "user", "content": "Write a haiku about the sea."}],
    "empty content": [
        {"role": "system", "content": ""},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": ""},
        {"role": "user", "content": "?"},
    ],
    "non-ASCII": [
        {"role": "system", "content": "Tu es un assistant serviable. Réponds en français. 🤖"},
        {"role": "user", "content": "Ünïcödé: 東京は日本の首都です。Привет! مرحبا 👋🏽 \u00a0end"},
        {"role": "assistant", "content": "Bien sûr — «naïve» café, ß, Ω, 😀."},
        {"role": "user", "content": "Encore: 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \t\"quotes\" \\backslash"},
    ],
}
OPTIONS = [["--bos-token", "<s>", "--eos-token", "</s>"]]
NO_PROMPT = ["--bos-token", "<s>", "--eos-token", "</s>", "--no-generation-prompt"]


def jobs_for(templates, tmp):
    jobs = []
    for t in templates:
        for name, messages in CONVERSATIONS.items():
            path = os.path.join(tmp, name.replace(" ", "_") + ".json")
            if not os.path.exists(path):
                with open(path, "w", encoding="utf-8") as f:
                    json.dump(messages, f, ensure_ascii=False)
            jobs.append({"template": t, "case": name, "messages_file": path, "messages": messages,
                         "options": OPTIONS[0]})
        jobs.append({"template": t, "case": "several turns, no generation prompt",
                     "messages_file": os.path.join(tmp, "several_turns.json"),
                     "messages": CONVERSATIONS["several turns"], "options": NO_PROMPT})
    return jobs


def reference_renderings(jobs, tmp):
    batch = os.path.join(tmp, "jobs.json")
    with open(batch, "w", encoding="utf-8") as f:
        json.dump([{k: j[k] for k in ("template", "messages", "options")} for j in jobs], f, ensure_ascii=False)
    r = subprocess.run(["node", REFERENCE, "--batch", batch], capture_output=True, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.decode(errors="replace")[-400:])
    return json.loads(r.stdout.decode("utf-8"))


def ours(job):
    r = subprocess.run([LLMRUN, "--template-file", job["template"], "--render", job["messages_file"]] +
                       job["options"], capture_output=True, timeout=60)
    return r.returncode, r.stdout, r.stderr.decode(errors="replace").strip()


def first_difference(a, b):
    i = 0
    while i < min(len(a), len(b)) and a[i] == b[i]:
        i += 1
    return i


HOSTILE = {
    "a loop of 10^12 steps": "{% for i in range(1000000) %}{% for j in range(1000000) %}x{% endfor %}{% endfor %}",
    "endless recursion": "{% macro f(x) %}{{ f(x) }}{% endmacro %}{{ f(1) }}",
    "a string that doubles": "{% set ns = namespace(s='ab') %}{% for i in range(64) %}"
                             "{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s | length }}",
    "nesting 10000 deep": "{{ " + "(" * 10000 + "1" + ")" * 10000 + " }}",
    "an unterminated tag": "{% if true %}never closed",
}


def check_hostile(tmp):
    """Templates that would hang or exhaust memory end quickly with a reason."""
    messages = os.path.join(tmp, "hostile.json")
    with open(messages, "w") as f:
        json.dump([{"role": "user", "content": "x"}], f)
    for name, text in HOSTILE.items():
        path = os.path.join(tmp, "hostile.jinja")
        with open(path, "w") as f:
            f.write(text)
        try:
            r = subprocess.run([LLMRUN, "--template-file", path, "--render", messages], capture_output=True,
                               timeout=60)
            check(r.returncode == 1 and b"llmrun: " in r.stderr and not r.stdout,
                  f"hostile template ({name}) is refused with a reason",
                  f"exit {r.returncode} {r.stderr[-200:]!r}")
        except subprocess.TimeoutExpired:
            check(False, f"hostile template ({name}) is refused with a reason", "it ran for a minute")


def main():
    missing = missing_prerequisite(files=[TEMPLATES, REFERENCE_MODULE], binaries=[LLMRUN], programs=["node"])
    if missing:
        return missing
    templates = sorted(os.path.join(TEMPLATES, f) for f in os.listdir(TEMPLATES) if f.endswith(".jinja"))
    check(len(templates) == 65, "the corpus has its 65 templates", f"found {len(templates)}")
    with tempfile.TemporaryDirectory() as tmp:
        check_hostile(tmp)
        jobs = jobs_for(templates, tmp)
        refs = reference_renderings(jobs, tmp)
        per_template = {}
        for job, ref in zip(jobs, refs):
            name = os.path.basename(job["template"])
            state = per_template.setdefault(name, {"same": 0, "refused": 0, "differ": [], "why": ""})
            if not ref["ok"]:
                state["refused"] += 1
                state["why"] = state["why"] or ref["error"]
                continue
            rc, out, err = ours(job)
            want = ref["text"].encode("utf-8")
            if rc == 0 and out == want:
                state["same"] += 1
            else:
                at = first_difference(out, want)
                why = (f"ours refused: {err}" if rc != 0 else
                       f"differs at byte {at}: ours {out[at:at + 60]!r} reference {want[at:at + 60]!r}")
                state["differ"].append((job["case"], why))
    identical = refused = differ = 0
    for name, st in sorted(per_template.items()):
        if st["differ"]:
            differ += 1
            for case, why in st["differ"]:
                check(False, f"{name} ({case}) renders as the reference does", why)
        elif st["same"] == 0:
            refused += 1
            print(f"# {name}: the reference renders none of the conversations (not compared): {st['why'][:120]}")
        else:
            identical += 1
            check(True, f"{name}: {st['same']} renderings byte-identical to the reference"
                        + (f" ({st['refused']} cases the reference refuses)" if st["refused"] else ""))
    print(f"# templates: {identical} of {len(per_template)} byte-identical wherever the reference renders, "
          f"{refused} the reference cannot render, {differ} differ")
    check(identical > 0, "at least one template was compared")
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
