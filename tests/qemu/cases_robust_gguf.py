"""cases_robust_gguf.py - QEMU robustness cases for GGUF models: /load of
corrupted GGUF files (truncations, bad header fields, tensor infos, a
vocabulary that disagrees with the embedding, bad merges) prints the reason
on one line, leaks nothing, and the previous model keeps answering the
same; a soak of 50 answers switching between stories260K.gguf,
stories260K.bin and a qwen3 GGUF (with /chat turns), /mem used bytes
identical after every answer to the first answer with the same model."""
import os
import random
import re
import struct

from cases_boot import boot_to_prompt
from cases_llm import answer, set_all
from cases_robust import mem_figures
from checks import assert_alive

QWEN = "gguf-arch/qwen3-tied-Q8_0.gguf"
MEM_USED = re.compile(r"used\s+[0-9.]+ MiB \((\d+) bytes\)")
MEM_HEAP = re.compile(r"heap in use\s+[0-9.]+ MiB \((\d+) bytes\)")
MEM_HEAP_PAGES = re.compile(r"heap pages\s+[0-9.]+ MiB \((\d+) bytes\)")


def mem_split(vm):
    """(used bytes outside the heap's pages, heap bytes in use, heap pages' bytes) from /mem.
    The first two must not grow: the third may differ by whole slab pages
    when the same live blocks end up spread differently (fragmentation)."""
    out = vm.command("/mem")
    used, heap, pages = MEM_USED.search(out), MEM_HEAP.search(out), MEM_HEAP_PAGES.search(out)
    assert used and heap and pages, f"/mem without exact byte counts: {out!r}"
    return int(used.group(1)) - int(pages.group(1)), int(heap.group(1)), int(pages.group(1))


# ---------------------------------------------------------------- GGUF editing

def _skip(data, pos, t):
    sizes = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
    if t in sizes:
        return pos + sizes[t]
    if t == 8:
        return pos + 8 + struct.unpack_from("<Q", data, pos)[0]
    elem, count = struct.unpack_from("<IQ", data, pos)
    pos += 12
    if elem in sizes:
        return pos + count * sizes[elem]
    for _ in range(count):
        pos = _skip(data, pos, elem)
    return pos


def gguf_layout(data):
    """(kvs, tensors, infos_end): kvs as [key, at, type_at, value_end], tensors as dicts of field offsets."""
    n_tensors, n_kv = struct.unpack_from("<QQ", data, 8)
    pos, kvs, tensors = 24, [], []
    for _ in range(n_kv):
        klen = struct.unpack_from("<Q", data, pos)[0]
        key = data[pos + 8:pos + 8 + klen].decode()
        type_at = pos + 8 + klen
        end = _skip(data, type_at + 4, struct.unpack_from("<I", data, type_at)[0])
        kvs.append([key, pos, type_at, end])
        pos = end
    for _ in range(n_tensors):
        nlen = struct.unpack_from("<Q", data, pos)[0]
        name = data[pos + 8:pos + 8 + nlen].decode()
        ndims_at = pos + 8 + nlen
        n_dims = struct.unpack_from("<I", data, ndims_at)[0]
        type_at = ndims_at + 4 + 8 * n_dims
        tensors.append(dict(name=name, at=pos, ndims_at=ndims_at, ne_at=ndims_at + 4, type_at=type_at,
                            offset_at=type_at + 4))
        pos = type_at + 12
    return kvs, tensors, pos


def gguf_rebuild(data, edits):
    """The file with key values replaced ({key: (type, value bytes)}; None drops the key)."""
    kvs, tensors, infos_end = gguf_layout(data)
    body, n_kv = b"", 0
    for key, at, type_at, end in kvs:
        if key in edits:
            if edits[key] is None:
                continue
            t, value = edits[key]
            body += data[at:type_at] + struct.pack("<I", t) + value
        else:
            body += data[at:end]
        n_kv += 1
    header = data[:8] + struct.pack("<QQ", len(tensors), n_kv) + body + data[tensors[0]["at"]:infos_end]
    header += b"\0" * (-len(header) % 32)
    data_start = infos_end + (-infos_end % 32)
    return header + data[data_start:]


def array_minus_last(data, key):
    kvs, _, _ = gguf_layout(data)
    for k, at, type_at, end in kvs:
        if k == key:
            elem, count = struct.unpack_from("<IQ", data, type_at + 4)
            pos = type_at + 16
            for _ in range(count - 1):
                pos = _skip(data, pos, elem)
            return (9, struct.pack("<IQ", elem, count - 1) + data[type_at + 16:pos])
    raise AssertionError(f"{key} not in the file")


def poke(data, at, fmt, value):
    b = bytearray(data)
    struct.pack_into(fmt, b, at, value)
    return bytes(b)


def corrupt_files(ctx, work):
    """{name: expected words in the reason} for corrupted copies of stories260K.gguf and the qwen3 file."""
    stories = open(ctx.model("stories260K.gguf"), "rb").read()
    qwen = open(ctx.model(QWEN), "rb").read()
    kvs, tensors, infos_end = gguf_layout(stories)
    t0 = tensors[0]
    strings = lambda items: (9, struct.pack("<IQ", 8, len(items)) + b"".join(
        struct.pack("<Q", len(s)) + s for s in items))
    files = {
        "cut-header.gguf": (stories[:20], "truncated"),
        "cut-metadata.gguf": (stories[:kvs[len(kvs) // 2][1] + 5], "truncated"),
        "cut-infos.gguf": (stories[:t0["type_at"]], "truncated"),
        "cut-data.gguf": (stories[:len(stories) - 100], "past the end"),
        "version-1.gguf": (poke(stories, 4, "<I", 1), "version 1"),
        "version-99.gguf": (poke(stories, 4, "<I", 99), "unknown version"),
        "huge-key.gguf": (poke(stories, kvs[0][1], "<Q", 1 << 62), "truncated"),
        "dims-5.gguf": (poke(stories, t0["ndims_at"], "<I", 5), "dimensions"),
        "ne-overflow.gguf": (poke(poke(stories, t0["ne_at"], "<Q", 1 << 33), t0["ne_at"] + 8, "<Q", 1 << 33),
                             "overflowing"),
        "type-99.gguf": (poke(stories, t0["type_at"], "<I", 99), "unsupported type"),
        "offset-past.gguf": (poke(stories, t0["offset_at"], "<Q", len(stories) // 32 * 32 + 64), "past the end"),
        "offset-misaligned.gguf": (poke(stories, t0["offset_at"], "<Q", 8), "aligned"),
        "vocab-minus-1.gguf": (gguf_rebuild(stories, {
            "tokenizer.ggml.tokens": array_minus_last(stories, "tokenizer.ggml.tokens"),
            "tokenizer.ggml.scores": array_minus_last(stories, "tokenizer.ggml.scores"),
            "tokenizer.ggml.token_type": array_minus_last(stories, "tokenizer.ggml.token_type")}), "vocabulary"),
        "scores-short.gguf": (gguf_rebuild(stories, {
            "tokenizer.ggml.scores": array_minus_last(stories, "tokenizer.ggml.scores")}), "entries"),
        "no-arch.gguf": (gguf_rebuild(stories, {"general.architecture": None}), "architecture"),
        "arch-neox.gguf": (gguf_rebuild(stories, {"general.architecture": (8, struct.pack("<Q", 8) + b"gpt-neox")}),
                           "not supported"),
        "qwen-bad-merge.gguf": (gguf_rebuild(qwen, {"tokenizer.ggml.merges": strings([b"ab"])}), "merge"),
        "qwen-no-merges.gguf": (gguf_rebuild(qwen, {"tokenizer.ggml.merges": None}), "merges"),
        "qwen-bos-outside.gguf": (gguf_rebuild(qwen, {"tokenizer.ggml.bos_token_id": (4, struct.pack("<I", 10**6))}),
                                  "outside the vocabulary"),
    }
    paths = {}
    for name, (content, words) in files.items():
        path = os.path.join(work, name)
        with open(path, "wb") as f:
            f.write(content)
        paths[name] = (path, words)
    return paths


def test_gguf_corrupt_loads_keep_previous_model(ctx):
    work = os.path.join(ctx.image_dir, "gguf-robust-files")
    os.makedirs(work, exist_ok=True)
    corrupt = corrupt_files(ctx, work)
    files = [ctx.model("stories260K.gguf")] + [p for p, _ in corrupt.values()]
    img = ctx.image("gguf-robust", files, "model=stories260K.gguf\n")
    with boot_to_prompt(ctx, image=img) as vm:
        set_all(vm, temp=0, steps=24)
        want, _ = answer(vm, "Once upon a time")
        before = mem_figures(vm)
        for name, (_, words) in corrupt.items():
            out = vm.command(f"/load {name}", timeout=120)
            lines = [l for l in out.split("\n")[1:] if l.strip() and not l.startswith(">")]
            refusal = [l for l in lines if l.startswith(f"load: {name}: ")]
            assert refusal, f"/load {name}: no one-line refusal: {out!r}"
            assert words in refusal[0], f"/load {name}: reason lacks {words!r}: {refusal[0]!r}"
            assert "model: " not in out, f"/load {name} claims a model: {out!r}"
            text, _ = answer(vm, "Once upon a time")
            assert text == want, f"after /load {name} the previous model answers differently: {text!r}"
            after = mem_figures(vm)
            assert after == before, f"/load {name} leaked: /mem used/heap {before} -> {after}"
        out = vm.command("/model")
        assert "stories260K.gguf" in out, f"/model after the refusals: {out!r}"
        assert_alive(vm, "corrupt GGUF loads")


def test_gguf_soak_50_answers(ctx):
    rng = random.Random(50)
    files = [ctx.model(n) for n in ("stories260K.gguf", "stories260K.bin", "tok512.bin", QWEN)]
    img = ctx.image("gguf-soak", files, "model=stories260K.gguf\n")
    models = ("stories260K.gguf", "stories260K.bin", "qwen3-tied-Q8_0.gguf")
    starts = ("Once upon a time", "The little dog", "Lily", "One day", "Hello there", "Tell me a story")
    with boot_to_prompt(ctx, image=img) as vm:
        baseline = {}      # (model, chatting) -> mem_split() after its first answer
        pages_seen = set()  # heap page differences from the baseline (fragmentation)
        model, chatting, answers, chat_turns = "stories260K.gguf", False, 0, 0
        while answers < 50:
            if answers and answers % 5 == 0 and not chatting:
                model = models[(answers // 5) % len(models)]
                out = vm.command(f"/load {model}", timeout=120)
                assert f"model: {model}" in out, f"/load {model}: {out!r}"
                # A chat on the qwen3 model every other time it is loaded.
                if model.startswith("qwen3") and (answers // 15) % 2 == 0:
                    out = vm.command("/chat")
                    assert "chat: on" in out, f"/chat: {out!r}"
                    chatting = True
            set_all(vm, temp=rng.choice(["0", "0.8", "1.0"]), seed=rng.randrange(1, 1 << 31),
                    steps=rng.randrange(8, 20))
            out = vm.command(rng.choice(starts), timeout=120)
            if chatting and "context is full" in out:
                vm.command("/chat reset")
                continue
            assert "[" in out and "tokens, prefill" in out, f"answer {answers + 1} ({model}): {out[-300:]!r}"
            answers += 1
            figures = mem_split(vm)
            key = (model, chatting)
            baseline.setdefault(key, figures)
            pages_seen.add(figures[2] - baseline[key][2])
            assert figures[:2] == baseline[key][:2], \
                f"answer {answers} ({model}, chat {chatting}): /mem (used outside the heap, heap in use) " \
                f"{figures[:2]} != {baseline[key][:2]} after its first"
            if chatting:
                chat_turns += 1
                if chat_turns % 4 == 0:
                    out = vm.command("/chat off")
                    assert "chat: off" in out, out
                    chatting = False
        assert_alive(vm, "the GGUF soak")
        print(f"  gguf soak: 50 answers, {chat_turns} chat turns, /mem (used outside the heap, heap in use, "
              f"heap pages) {baseline}; heap page differences seen {sorted(pages_seen)}")


CASES = [
    test_gguf_corrupt_loads_keep_previous_model,
    test_gguf_soak_50_answers,
]
