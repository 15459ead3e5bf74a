"""cases_chat_templates.py - /chat with the real families' chat templates:
tiny random-weight models around the real Llama 3, Qwen3 and Gemma 3
vocabularies (tools/gguf_vocab_model.py over ../shared/models/vocab/*.gguf,
which carry their tokenizer.chat_template) each hold a two-turn conversation,
and the conversation's token ids (/chat tokens) are those of the text
written by hand from each Jinja template, as llama.cpp's llama-tokenize
gives them (stored here), with the one sampled answer token of each turn
between them; /stats's prompt count shows what each turn prefilled (with
Qwen3's empty think block, which its history then drops). The kernel runs
each GGUF's own template through the Jinja engine: a turn's tokens are the
whole conversation's rendering, of which only what the KV cache does not
already hold is prefilled; `/chat template NAME` gives the built-in one."""
import os
import re
import subprocess

from cases_boot import boot_to_prompt
from cases_gguf import ROOT, numpy_python
from cases_llm import answer, set_all

# Per vocabulary: the template the kernel must name, then the ids of
#   T1 = the first turn with system "Be brief." and user "Hello!" and the generation prompt,
#   S  = the text that closes an answer,
#   T2 = the second turn, user "What is 2+2?", and the generation prompt,
# each from `llama-tokenize -m VOCAB --ids --no-bos --no-escape -f TEXT` of the hand-written text:
# llama3 T1 "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
#           "<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
# qwen3  T1 "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n<|im_start|>assistant\n"
#        (with /set think off the prompt also ends in "<think>\n\n</think>\n\n", which Qwen3's history drops)
# gemma3 T1 "<bos><start_of_turn>user\nBe brief.\n\nHello!<end_of_turn>\n<start_of_turn>model\n"
VOCABS = {
    "llama3": ("llama", "llama3",
               [128000, 128006, 9125, 128007, 271, 3513, 10015, 13, 128009, 128006, 882, 128007, 271, 9906, 0,
                128009, 128006, 78191, 128007, 271],
               [128009],
               [128006, 882, 128007, 271, 3923, 374, 220, 17, 10, 17, 30, 128009, 128006, 78191, 128007, 271]),
    "qwen3": ("qwen3", "qwen3",
              [151644, 8948, 198, 3430, 9814, 13, 151645, 198, 151644, 872, 198, 9707, 0, 151645, 198, 151644,
               77091, 198],
              [151645, 198],
              [151644, 872, 198, 3838, 374, 220, 17, 10, 17, 30, 151645, 198, 151644, 77091, 198]),
    "gemma3": ("llama", "gemma",
               [2, 105, 2364, 107, 3912, 8652, 236761, 108, 9259, 236888, 106, 107, 105, 4368, 107],
               [106, 107],
               [105, 2364, 107, 3689, 563, 236743, 236778, 236862, 236778, 236881, 106, 107, 105, 4368, 107]),
}
# Qwen3's empty think block, "<think>\n\n</think>\n\n" (llama-tokenize: 151667 271 151668 271), ends the
# prompt with /set think off and is gone from history: it is prefilled but not listed.
QWEN3_BLOCK = 4
PROMPT_TOKENS = re.compile(r"last answer: (\d+) prompt tokens")
TOKENS = re.compile(r"chat: (\d+) tokens:((?: \d+)*)$", re.M)


def make_models(ctx):
    work = os.path.join(ctx.image_dir, "vocab-models")
    os.makedirs(work, exist_ok=True)
    paths = []
    for name, (arch, _, _, _, _) in VOCABS.items():
        path = os.path.join(work, f"{name}-tiny.gguf")
        subprocess.run([numpy_python(), os.path.join(ROOT, "tools", "gguf_vocab_model.py"),
                        ctx.model(f"vocab/{name}.gguf"), path, "--arch", arch], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
        paths.append(path)
    return paths


def chat_tokens(vm):
    out = vm.command("/chat tokens")
    m = TOKENS.search(out)
    assert m, f"/chat tokens: {out!r}"
    ids = [int(x) for x in m.group(2).split()]
    assert len(ids) == int(m.group(1)), out
    return ids


def prompt_tokens(vm):
    out = vm.command("/stats")
    m = PROMPT_TOKENS.search(out)
    assert m, f"/stats: {out!r}"
    return int(m.group(1))


def split_answer(ids, head, suffix, what):
    """ids = head + (at most one sampled token) + suffix + rest; returns
    (rest, the answer's length)."""
    assert ids[:len(head)] == head, f"{what}: {ids[:len(head)]} instead of {head}"
    for answer_len in (1, 0):  # one token, or none when it was a stop token
        end = len(head) + answer_len
        if ids[end:end + len(suffix)] == suffix:
            return ids[end + len(suffix):], answer_len
    raise AssertionError(f"{what}: no {suffix} after the answer: {ids[len(head):]}")


def jinja_turns(vm, name, t1, suffix, t2, block):
    """The Jinja path: turn 1 is T1 (and the block), then the answer; turn 2's
    rendering starts with T1 and ends with T2, and only what follows T1 at most
    is prefilled (Qwen3's history drops the block: the cache keeps T1)."""
    answer(vm, "Hello!")
    ids = chat_tokens(vm)
    assert prompt_tokens(vm) == len(t1) + block, f"{name} turn 1: prompt of {prompt_tokens(vm)} tokens"
    assert ids[:len(t1)] == t1 and len(ids) - len(t1) - block in (0, 1), f"{name} turn 1: {ids}"
    answer(vm, "What is 2+2?")
    ids = chat_tokens(vm)
    assert ids[:len(t1)] == t1, f"{name} turn 2: history {ids[:len(t1)]} instead of {t1}"
    for answered in (1, 0):
        tail = ids[len(ids) - answered - len(t2) - block:len(ids) - answered]
        if tail == t2 + ([151667, 271, 151668, 271] if block else []):
            break
    else:
        raise AssertionError(f"{name} turn 2: does not end with {t2}: {ids}")
    assert suffix[0] in ids[len(t1):], f"{name} turn 2: the first answer is not closed by {suffix}: {ids}"
    before_answer = len(ids) - answered
    assert prompt_tokens(vm) <= before_answer - len(t1), \
        f"{name} turn 2: prefilled {prompt_tokens(vm)} of {before_answer} tokens: the cache was not reused"


def test_chat_real_templates_token_ids(ctx):
    paths = make_models(ctx)
    img = ctx.image("chat-templates", paths, "model=llama3-tiny.gguf\n")
    with boot_to_prompt(ctx, image=img) as vm:
        set_all(vm, temp=0, steps=1)
        vm.command("/system Be brief.")
        for name, (_, template, t1, suffix, t2) in VOCABS.items():
            out = vm.command(f"/load {name}-tiny.gguf", timeout=120)
            assert "still using" not in out and "error" not in out, out
            vm.command("/set think off" if name == "qwen3" else "/set think on")
            out = vm.command("/chat")
            assert "chat: template jinja (the GGUF's tokenizer.chat_template through the Jinja engine)" in out, \
                f"{name}: {out!r}"
            block = QWEN3_BLOCK if name == "qwen3" else 0
            jinja_turns(vm, name, t1, suffix, t2, block)
            vm.command("/chat off")
            out = vm.command(f"/chat template {template}")
            out += vm.command("/chat")
            assert f"chat: template {template} (chosen by /chat template)" in out, f"{name}: {out!r}"
            answer(vm, "Hello!")
            assert prompt_tokens(vm) == len(t1) + block, f"{name} turn 1: prompt of {prompt_tokens(vm)} tokens"
            rest, answered = split_answer(chat_tokens(vm), t1, suffix, f"{name} turn 1")
            assert rest == [], f"{name} turn 1: tokens after the answer's end: {rest}"
            answer(vm, "What is 2+2?")
            # What the cache lacked: the sampled token (never run), or for Qwen3 everything from the dropped
            # block on (the answer too), then the suffix and the new turn.
            lacked = answered + len(suffix) + len(t2) + block
            assert prompt_tokens(vm) == lacked, f"{name} turn 2: prompt of {prompt_tokens(vm)}, not {lacked}"
            rest, _ = split_answer(chat_tokens(vm), t1, suffix, f"{name} turn 1 in history")
            rest, _ = split_answer(rest, t2, suffix, f"{name} turn 2")
            assert rest == [], f"{name} turn 2: tokens after the answer's end: {rest}"
            vm.command("/chat off")
            vm.command("/chat template auto")


CASES = [test_chat_real_templates_token_ids]
