"""cases_parallel.py - QEMU cases for inference on every core (llm/compute/parallel.c
driven by the worker pool): /bench on -smp 2 reports bit-identical logits on
1 and 2 workers for fp32 and int8, answers are the same text on -smp 1 and
-smp 2, and /bench rejects bad arguments. Speed is measured, not asserted
(a loaded host makes TCG vCPU timing meaningless)."""
import os
import re
import subprocess

from cases_boot import READY
from cases_llm import answer, assert_same_text, host_reference, set_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Big enough that the matmuls go through the workers (llm/compute/parallel.c skips
# calls under PARALLEL_DEFAULT_MIN_WORK multiply-adds), small enough for TCG.
SHAPE = ["--dim", "192", "--hidden", "512", "--layers", "2", "--heads", "6", "--kv-heads", "3",
         "--vocab", "512", "--seq", "128"]
ROW = re.compile(r"^(fp32|int8 \(quantised here\))\s+(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)x",
                 re.M)


def parallel_image(ctx):
    path = os.path.join(ctx.image_dir, "parallel192.bin")
    if not os.path.exists(path):
        tool = os.path.join(ROOT, "build", "host", "gen_model")
        subprocess.run([tool, "--out", path, "--version", "1", "--seed", "7"] + SHAPE, check=True,
                       stdout=subprocess.DEVNULL)
    return ctx.image("parallel", [path, ctx.model("tok512.bin")],
                     "ramdisk=ramdisk.tar\nmodel=parallel192.bin\ntokenizer=tok512.bin\n")


def boot(ctx, smp):
    vm = ctx.boot(parallel_image(ctx), smp=smp, memory="1G")
    vm.expect(READY, timeout=120)
    vm.wait_prompt(timeout=60)
    return vm


def test_bench_smp2_identical_logits(ctx):
    with boot(ctx, 2) as vm:
        out = vm.command("/bench 12", timeout=600)
        rows = ROW.findall(out)
        assert [(r[0], r[1]) for r in rows] == [("fp32", "1"), ("fp32", "2"), ("int8 (quantised here)", "1"),
                                                ("int8 (quantised here)", "2")], f"/bench rows:\n{out}"
        assert out.count("logits on 1 and 2 workers: identical") == 2, f"/bench logits differ:\n{out}"
        assert "DIFFERENT" not in out, out
        for r in rows:
            print(f"  {r[0]:<22} workers {r[1]}: prefill {r[2]} tok/s, decode {r[3]} tok/s, speedup {r[5]}x")


def test_answer_same_on_smp1_and_smp2(ctx):
    """One worker or two, the kernel answers exactly what build/host/llmrun
    answers for the same model, prompt and settings."""
    parallel_image(ctx)  # writes parallel192.bin
    want = host_reference(os.path.join(ctx.image_dir, "parallel192.bin"), ctx.model("tok512.bin"),
                          "Once upon a time", 40)
    for smp in (1, 2):
        with boot(ctx, smp) as vm:
            set_all(vm, temp=0, steps=40)
            text, _ = answer(vm, "Once upon a time")
        assert_same_text(text, want, f"-smp {smp} vs build/host/llmrun", 40)


def test_bench_bad_arguments(ctx):
    with boot(ctx, 1) as vm:
        for bad in ("/bench x", "/bench 1", "/bench 5000", "/bench 12 34"):
            out = vm.command(bad)
            assert "usage: /bench" in out, f"{bad}: {out!r}"
        out = vm.command("/bench 4", timeout=300)
        assert len(ROW.findall(out)) == 2, f"-smp 1 /bench 4: {out!r}"
        assert "logits on" not in out, out


CASES = [
    test_bench_smp2_identical_logits,
    test_answer_same_on_smp1_and_smp2,
    test_bench_bad_arguments,
]
