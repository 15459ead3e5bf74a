"""cases_big_models.py - make test-big: random-weight GGUF files of real model
shapes (tools/gen_gguf) put on the image by the real path (tools/mkimage.sh,
the ramdisk in its own partition), booted in QEMU with the memory a user of
that model would give, and asked a prompt of 100+ tokens at the shell. Its
greedy continuation, 16 tokens and more, must be llama.cpp's on the same
file (node-llama-cpp, tests/reference/llama_ref.mjs, with the kernel's f16
KV cache): an independent check of the shapes. The files are gen_gguf's
well-conditioned random models (WELL_CONDITIONED; docs/design.md, "Checked
against llama.cpp"): llama.cpp's top-1 margins there are far above the
rounding differences between llama.cpp and our kernel sets, so the
comparison is exact, with no tie allowance; a file whose smallest margin is
below MIN_MARGIN fails before the long boot. Each case writes its file
under the per-run image folder and deletes it afterwards (an 8B file is
4.5 GB)."""
import os
import re
import shutil
import subprocess
import sys

from cases_boot import READY
from cases_llm import answer, set_all
from cases_storage import PARTITION_READ, PROGRESS, check_progress_pace
from reference import check_answer, greedy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GEN_GGUF = os.path.join(ROOT, "build", "host", "gen_gguf")
BIG_ENV = "LLMK_BIG_TESTS"  # set by make test-big
# Over 100 tokens in gen_gguf's vocabulary (about two characters a token; checked against llama.cpp's
# count): every prompt token costs QEMU time under TCG.
PROMPT = ("The old lighthouse keeper climbed the spiral stairs every evening, counting the steps as his father "
          "had taught him, one hundred and twelve of them, worn smooth by a century of boots. At the top he "
          "wiped the salt from the great lens and trimmed the wick.")
MIN_PROMPT_TOKENS = 100


def prompt(k):
    """Candidate prompt k for tests/qemu/big_margins.py (0: PROMPT itself, the one every case asks)."""
    return PROMPT if k == 0 else f"{PROMPT} Night {k} began."
# Small layers beside the embeddings (no amplification of rounding from layer to layer) and a
# random-sign output norm (a tied model would otherwise repeat its last token). Measured on the
# 1B shape: llama.cpp's margins 0.21-0.30, our SSE2 and scalar sets differ from them by 0.011 at most.
# The 8B shape's untied output gets the embedding's values (its own random one gave margins down to 0.0098).
WELL_CONDITIONED = ["--layer-std", "0.001", "--signed-output-norm", "--output-from-embd"]
# Four times the largest difference measured: below it the file is not the measured kind of model.
MIN_MARGIN = 0.05
# The kernel's fastest set under TCG; llama.cpp sums in its own order (the margins of llama.cpp's
# choices are printed with every answer).
SIMD = "sse2"
NEW_TOKENS = 16
# CI has 2 cores and 90 minutes. The 1B and 3B cases compare in full there (measured on an idle host, each
# case from file to verdict: 1B Q4_K_M 473 s, 1B ctx 32768 163 s, 3B Q4_0 482 s). The 8B cases' full
# comparison (116-token prompt, 16 tokens; about 11 s a token under TCG, prefill about as slow) would not fit
# beside make test: without LLMK_BIG_FULL=1 (make test-big-full) they ask SHORT_PROMPT and compare
# SHORT_TOKENS tokens with llama.cpp's, as exactly.
FULL_ENV = "LLMK_BIG_FULL"
SHORT_PROMPT = " ".join(PROMPT.split()[:4])  # 12 tokens; llama.cpp margins 0.24+ (8B), 0.095+ (3B) measured
SHORT_TOKENS = 4
# Both of CI's cores: the kernel splits each matmul over its CPUs, with the same sums.
SMP = 2
KV = "f16"  # the kernel's default KV cache type, and llama.cpp's


def skip(ctx, reason):
    # Skip lives in the harness script (__main__), the module Context comes from.
    return sys.modules[type(ctx).__module__].Skip(reason)


def generate(ctx, name, args):
    """Writes NAME.gguf (or its pieces) with gen_gguf; returns the paths."""
    work = os.path.join(ctx.image_dir, name)
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, name + ".gguf")
    r = subprocess.run([GEN_GGUF, out] + args + WELL_CONDITIONED, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, f"gen_gguf {' '.join(args)}: {r.stdout.decode(errors='replace')[-400:]}"
    pieces = sorted(os.path.join(work, n) for n in os.listdir(work) if n.endswith(".gguf"))
    return work, pieces


# Bytes on disk for the GGUF file and the disk image that holds a copy of it, with room to spare.
FILE_GIB = {"llama-3.2-1b": 0.9, "llama-3.2-3b": 2.0, "llama-3.1-8b": 4.7}


def disk_need(gen_args):
    shape = gen_args[gen_args.index("--shape") + 1]
    return int((2 * FILE_GIB[shape] + 0.5) * 2**30)


def beyond_file_and_kv(vm):
    """MiB in use at the prompt beyond the ramdisk (the file) and the KV cache."""
    mem, info = vm.command("/mem"), vm.command("/model")
    used = re.search(r"used\s+[0-9.]+ MiB \((\d+) bytes\)", mem)
    ramdisk = re.search(r"ramdisk\s+[0-9.]+ MiB \((\d+) bytes\)", mem)
    kv = re.search(r"kv cache:\s+\S+, ([0-9.]+) MiB", info)
    assert used and ramdisk and kv, f"no memory figures: {mem!r} {info!r}"
    return (int(used.group(1)) - int(ramdisk.group(1))) / 2**20 - float(kv.group(1))


def check_big_model(ctx, name, gen_args, memory, expect_progress=False, max_beyond_mib=None,
                    cfg_extra="", log_has=(), model_has=(), one_file_over=None, short_unless_full=False):
    short = short_unless_full and not os.environ.get(FULL_ENV)
    text_in, new_tokens = (SHORT_PROMPT, SHORT_TOKENS) if short else (PROMPT, NEW_TOKENS)
    if not os.environ.get(BIG_ENV):
        raise skip(ctx, f"a model of real size under TCG: run by make test-big ({BIG_ENV}=1)")
    need = disk_need(gen_args)
    free = shutil.disk_usage(ctx.image_dir).free
    assert free >= need, (f"{name}: {free / 2**30:.1f} GiB free under {ctx.image_dir}, the file and its "
                          f"disk image need about {need / 2**30:.1f} GiB: free some space first")
    work, pieces = generate(ctx, name, gen_args)
    try:
        if one_file_over is not None:
            assert len(pieces) == 1 and os.path.getsize(pieces[0]) > one_file_over, \
                f"{name}: want one file over {one_file_over} bytes: {[(p, os.path.getsize(p)) for p in pieces]}"
        ref = greedy(ctx, pieces[0], new_tokens + 4, text_in, kv=KV)
        prompt_tokens = len(ref["prompt_ids"])
        assert short or prompt_tokens >= MIN_PROMPT_TOKENS, \
            f"{name}: the prompt is {prompt_tokens} tokens to llama.cpp"
        margins = ref["margins"][:new_tokens + 1]
        assert min(margins) >= MIN_MARGIN, (f"{name}: llama.cpp's top-1 margins {[round(m, 3) for m in margins]} "
                                            f"go below {MIN_MARGIN}: rounding could flip a step, measure the "
                                            "file with tests/qemu/big_margins.py")
        # llama2.c's steps count positions; the token after the prompt's last one is one of the generated.
        steps = prompt_tokens + new_tokens
        first = os.path.basename(pieces[0])
        img = ctx.image(name, pieces, f"model={first}\n{cfg_extra}", ramdisk_partition=True)
        with ctx.boot(image=img, memory=memory, smp=SMP) as vm:
            vm.expect(READY, timeout=1800)
            vm.wait_prompt(timeout=60)
            log = vm.text()
            assert f"model: {first}" in log, f"{name}: the model did not load: {log[-2000:]!r}"
            for want_text in log_has:
                assert want_text in log, f"{name}: {want_text!r} not in the boot log: {log[-2000:]!r}"
            if model_has:
                info = vm.command("/model")
                for want_text in model_has:
                    assert want_text in info, f"{name}: {want_text!r} not in /model: {info!r}"
            if expect_progress:
                read = PARTITION_READ.search(log)
                assert read and PROGRESS.search(log), f"{name}: no load progress lines: {log[-2000:]!r}"
                check_progress_pace(PROGRESS.findall(log), int(read.group(2)))
            if max_beyond_mib is not None:
                beyond = beyond_file_and_kv(vm)
                print(f"  {name}: {beyond:.1f} MiB in use beyond the file and the KV cache")
                assert beyond <= max_beyond_mib, f"{name}: {beyond:.1f} MiB beyond file + KV, over {max_beyond_mib}"
            set_all(vm, temp=0, steps=steps, simd=SIMD)
            text, stats = answer(vm, text_in, timeout=3600)
            print(f"  {name}: {stats.group(0)}")
        generated = int(stats.group(1))
        assert generated >= new_tokens and stats.group(5) == "steps", \
            f"{name}: the kernel's stats {stats.group(0)!r}: want {new_tokens}+ tokens to stop: steps"
        print(f"  {name}: {prompt_tokens}-token prompt, " + check_answer(name, text, text_in, ref, generated))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        img_path = os.path.join(ctx.image_dir, name + ".img")
        if os.path.exists(img_path):
            os.remove(img_path)
        ctx.images.pop(name, None)


def test_big_llama32_1b_q4_k_m(ctx):
    """Llama-3.2-1B shape (dim 2048, 16 layers, 32/8 heads, ffn 8192, vocab 128256, tied), Q4_K_M, -m 2G;
    at the prompt, RAM in use is the file + the KV cache + at most 64 MiB (issue 12's target; 27.7 measured)."""
    check_big_model(ctx, "llama32-1b-Q4_K_M", ["--shape", "llama-3.2-1b", "--type", "Q4_K_M", "--ctx", "4096"],
                    "2G", max_beyond_mib=64)


def test_big_llama32_1b_ctx_32768(ctx):
    """No hidden cap: the Llama-3.2-1B shape (Q4_0, trained for 131072 positions) with boot.cfg ctx=32768
    in -m 4G loads at 32768 positions with its 1 GiB f16 KV cache, and answers as llama.cpp does."""
    check_big_model(ctx, "llama32-1b-Q4_0-ctx32k", ["--shape", "llama-3.2-1b", "--type", "Q4_0"], "4G",
                    cfg_extra="ctx=32768\n", log_has=["context 32768) with its own vocabulary"],
                    model_has=["context 32768,", "kv cache:   f16, 1024.0 MiB"])


def test_big_llama32_3b_q4_0(ctx):
    """Llama-3.2-3B shape (dim 3072, 28 layers, 24/8 heads, ffn 8192, vocab 128256), Q4_0, -m 4G."""
    check_big_model(ctx, "llama32-3b-Q4_0", ["--shape", "llama-3.2-3b", "--type", "Q4_0", "--ctx", "4096"],
                    "4G")


def test_big_llama31_8b_q4_0_split(ctx):
    """Llama-3.1-8B shape (dim 4096, 32 layers, 32/8 heads, ffn 14336, vocab 128256), Q4_0 in 2 pieces
    (over 4 GiB together), -m 8G: the greedy continuation, and the load progress in the boot log."""
    check_big_model(ctx, "llama31-8b-Q4_0", ["--shape", "llama-3.1-8b", "--type", "Q4_0", "--ctx", "2048",
                                             "--split", "2"], "8G", expect_progress=True,
                    short_unless_full=True)


def test_big_llama31_8b_q4_0_one_file(ctx):
    """The Llama-3.1-8B shape in Q4_0 as one GGUF file over 4 GiB (as a downloaded 8B Q4_K_M of 4.9 GB is):
    a tar entry past 32-bit sizes, read whole into -m 8G (above 4 GiB), weights in place; the greedy continuation."""
    check_big_model(ctx, "llama31-8b-Q4_0-one-file", ["--shape", "llama-3.1-8b", "--type", "Q4_0", "--ctx", "2048"],
                    "8G", one_file_over=4 << 30, short_unless_full=True)


CASES = [
    test_big_llama32_1b_q4_k_m,
    test_big_llama32_1b_ctx_32768,
    test_big_llama32_3b_q4_0,
    test_big_llama31_8b_q4_0_split,
    test_big_llama31_8b_q4_0_one_file,
]
