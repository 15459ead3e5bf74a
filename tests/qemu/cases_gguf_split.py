"""cases_gguf_split.py - QEMU cases for split GGUF models (llama.cpp's
gguf-split layout, NAME-0000i-of-0000N.gguf): stories260K.gguf split in two
pieces here (independently of the kernel's reader) boots from boot.cfg's
model= naming the first piece, /model shows the pieces, and the answer is
llmrun's on the unsplit file; /load of a set whose second piece is missing
is refused with its reason and the split model keeps answering."""
import os
import struct
import subprocess

from cases_boot import boot_to_prompt
from cases_robust_gguf import gguf_layout
from cases_llm import answer, first_difference, golden, set_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLMRUN = os.path.join(ROOT, "build", "host", "llmrun")
PROMPT = "Once upon a time"
STEPS = 200


def split_kv(no, count, n_tensors):
    out = b""
    for key, vtype, fmt, value in (("split.no", 2, "H", no), ("split.count", 2, "H", count),
                                   ("split.tensors.count", 5, "i", n_tensors)):
        out += struct.pack("<Q", len(key)) + key.encode() + struct.pack("<I" + fmt, vtype, value)
    return out


def split_gguf(src, stem, n):
    """Writes src (a GGUF v3 file with the default alignment, 32) as n pieces
    STEM-0000i-of-0000n.gguf: the metadata in the first, the tensors in order."""
    with open(src, "rb") as f:
        data = f.read()
    magic, version = struct.unpack_from("<4sI", data, 0)
    kvs, tensors, infos_end = gguf_layout(data)
    assert "general.alignment" not in [kv[0] for kv in kvs], "only the default alignment"
    metadata = data[24:kvs[-1][3]] if kvs else b""
    n_kv, n_tensors = len(kvs), len(tensors)
    infos = [(data[t["at"]:t["offset_at"]], struct.unpack_from("<Q", data, t["offset_at"])[0]) for t in tensors]
    data_start = (infos_end + 31) // 32 * 32
    offsets = [off for _, off in infos] + [len(data) - data_start]
    assert offsets == sorted(offsets), "tensor data out of order"
    per_piece = (n_tensors + n - 1) // n
    paths = []
    for p in range(n):
        group = range(p * per_piece, min((p + 1) * per_piece, n_tensors))
        base = offsets[group[0]]
        kv = (metadata if p == 0 else b"") + split_kv(p, n, n_tensors)
        out = struct.pack("<4sIQQ", magic, version, len(group), (n_kv if p == 0 else 0) + 3) + kv
        for i in group:
            out += infos[i][0] + struct.pack("<Q", infos[i][1] - base)
        out += bytes(-len(out) % 32)
        out += data[data_start + base:data_start + offsets[group[-1] + 1]]
        paths.append(f"{stem}-{p + 1:05d}-of-{n:05d}.gguf")
        with open(paths[-1], "wb") as f:
            f.write(out)
    return paths


def llmrun_text(model):
    if not os.path.exists(LLMRUN):
        raise AssertionError("build/host/llmrun is missing: run make host")
    r = subprocess.run([LLMRUN, model, "-t", "0", "-n", str(STEPS), "-i", PROMPT], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, check=True, timeout=120)
    return r.stdout.decode("utf-8", errors="replace")[:-1]


def test_gguf_split_model_answers(ctx):
    whole = ctx.model("stories260K.gguf")
    work = os.path.join(ctx.image_dir, "gguf-split-files")
    os.makedirs(work, exist_ok=True)
    pieces = split_gguf(whole, os.path.join(work, "s260k"), 2)
    lonely = split_gguf(whole, os.path.join(work, "lonely"), 2)[0]  # its second piece stays out
    want = llmrun_text(whole)
    assert want == golden(ctx, "stories260K__once_upon_a_time.txt"), "llmrun on the unsplit file"
    assert llmrun_text(pieces[0]) == want, "llmrun on the split file"
    img = ctx.image("gguf-split", pieces + [lonely], "model=s260k-00001-of-00002.gguf\n")
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/model")
        for fact in ("s260k-00001-of-00002.gguf", "GGUF, arch llama", "split in 2 pieces", "its own vocabulary"):
            assert fact in out, f"/model lacks {fact!r}: {out!r}"
        size = sum(os.path.getsize(p) for p in pieces)
        assert f"weights {size / (1 << 20):.1f} MiB in place" in out, f"/model memory line: {out!r}"
        out = vm.command("/ls")
        for name in ("s260k-00001-of-00002.gguf", "s260k-00002-of-00002.gguf", "lonely-00001-of-00002.gguf"):
            assert name in out, f"/ls lacks {name}: {out!r}"
        assert "s260k-00002-of-00002.gguf  (GGUF piece 2 of 2: loads with the first)" in out, out
        assert "s260k-00001-of-00002.gguf  (GGUF model, run state" in out, out
        set_all(vm, temp=0, steps=STEPS)
        text, stats = answer(vm, PROMPT)
        assert text == want, first_difference(text, want)
        out = vm.command("/load lonely-00001-of-00002.gguf")
        reason = "load: lonely-00001-of-00002.gguf: gguf: piece lonely-00002-of-00002.gguf of the split model is missing"
        assert reason in out and "still using s260k-00001-of-00002.gguf" in out, out
        text, _ = answer(vm, PROMPT)
        assert text == want, f"after the refused /load: {first_difference(text, want)}"


def test_gguf_split_first_piece_chosen_at_boot(ctx):
    """Without model= the kernel loads the first model file in the ramdisk: a
    later piece (lonely-00002-of-00002.gguf sorts first) is passed over."""
    whole = ctx.model("stories260K.gguf")
    work = os.path.join(ctx.image_dir, "gguf-split-boot-files")
    os.makedirs(work, exist_ok=True)
    pieces = split_gguf(whole, os.path.join(work, "s260k"), 2)
    orphan = split_gguf(whole, os.path.join(work, "lonely"), 2)[1]
    img = ctx.image("gguf-split-boot", [orphan] + pieces, "")
    with boot_to_prompt(ctx, image=img) as vm:
        out = vm.command("/model")
        assert "s260k-00001-of-00002.gguf" in out and "split in 2 pieces" in out, out


CASES = [
    test_gguf_split_model_answers,
    test_gguf_split_first_piece_chosen_at_boot,
]
