#!/usr/bin/env python3
"""bench_qemu.py - figures measured in QEMU (TCG): launch-to-prompt time,
kernel entry-to-prompt time, kernel memory at the prompt, and in-kernel
decode speed for the models given.

    python3 tools/bench_qemu.py [--boots 3] [--model M.bin --tokenizer T.bin] [--smp N]
                                [--warmups 1] [--answers 3] [--cpu qemu64] [--bench 64]

Prints a table; these are measurements, not pass/fail checks.
"""
import argparse
import os
import re
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "qemu"))
from harness import Context  # noqa: E402
from cases_boot import READY  # noqa: E402

STATS = re.compile(r"\[([^\]\n]*tok/s[^\]\n]*)\]")
DECODE = re.compile(r"decode ([0-9.]+) tok/s")
PREFILL = re.compile(r"prefill ([0-9.]+) tok/s")


def boot_figures(ctx, boots, smp, cpu):
    launch, entry, used = [], [], []
    for _ in range(boots):
        with ctx.boot(smp=smp, cpu=cpu) as vm:
            out = vm.expect(READY, timeout=60)
            entry.append(float(READY.search(out.encode()).group(1)))
            vm.wait_prompt()
            launch.append(vm.time_of(vm.cursor - 1) - vm.start_time)
            mem = vm.command("/mem")
            m = re.search(r"used\D*([0-9.]+)", mem)
            r = re.search(r"ramdisk\D*([0-9.]+)", mem)
            if m:
                used.append(float(m.group(1)) - (float(r.group(1)) if r else 0.0))
    print(f"launch to prompt (QEMU start -> '> '): median {statistics.median(launch):.2f} s "
          f"(min {min(launch):.2f}, max {max(launch):.2f}, {boots} boots)")
    print(f"kernel entry to prompt:               median {statistics.median(entry):.1f} ms")
    if used:
        print(f"RAM used at the prompt beyond the ramdisk: {statistics.median(used):.1f} MiB")


def decode_figures(ctx, model, tokenizer, smp, steps, prompt, quantize, warmups, answers, cpu, bench):
    """The first `warmups` answers (cold caches, first-touch page faults) are
    discarded; the median decode speed of the next `answers` is reported."""
    name = "bench-" + os.path.basename(model) + ("-q8" if quantize else "")
    cfg = f"model={os.path.basename(model)}\ntokenizer={os.path.basename(tokenizer)}\n"
    if quantize:
        cfg += "quantize=q8\n"
    img = ctx.image(name, [model, tokenizer], cfg)
    with ctx.boot(image=img, smp=smp, memory="2G", cpu=cpu) as vm:
        vm.expect(READY, timeout=120)
        vm.wait_prompt(timeout=60)
        for n in bench:  # the shell's /bench: a batched prefill of n tokens, then n decode steps
            lines = [line.strip() for line in vm.command(f"/bench {n}", timeout=3600).splitlines()]
            print(f"{os.path.basename(model)} cpu={cpu} /bench {n}: " + " | ".join(lines[-2:]))
        vm.command("/set temp 0")
        vm.command(f"/set steps {steps}")
        for _ in range(warmups):
            vm.command(prompt, timeout=3600)
        speeds, prefills, walls, last = [], [], [], "no stats line"
        for _ in range(answers):
            t0 = time.monotonic()
            out = vm.command(prompt, timeout=3600)
            walls.append(time.monotonic() - t0)
            m = STATS.search(out)
            if m:
                last = m.group(1)
                speeds.append(float(DECODE.search(last).group(1)))
                prefills.append(float(PREFILL.search(last).group(1)))
        fmt = " q8" if quantize else ""
        speed = (f"decode median {statistics.median(speeds):.1f} tok/s, prefill median "
                 f"{statistics.median(prefills):.1f} tok/s" if speeds else "no decode figure")
        print(f"{os.path.basename(model)}{fmt} smp={smp} cpu={cpu}: {speed} over {len(speeds)} answers "
              f"({warmups} warm-up answers discarded); last: [{last}] (wall {statistics.median(walls):.1f} s)")
        mem = vm.command("/mem")
        print("  " + " | ".join(line.strip() for line in mem.splitlines()[1:] if line.strip()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--ovmf", default="/usr/share/ovmf/OVMF.fd")
    ap.add_argument("--boots", type=int, default=3)
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--model", action="append", default=[])
    ap.add_argument("--tokenizer", action="append", default=[])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--warmups", type=int, default=1, help="answers run first and not measured")
    ap.add_argument("--answers", type=int, default=3, help="measured answers (the median is reported)")
    ap.add_argument("--q8", action="store_true", help="quantise fp32 models to int8 at load (boot.cfg quantize=q8)")
    ap.add_argument("--cpu", default="max", help="QEMU -cpu (qemu64: the SSE2 kernels only)")
    ap.add_argument("--bench", type=int, action="append", default=[],
                    help="also run the shell's /bench N (prefill of N tokens batched, N decode steps)")
    args = ap.parse_args()
    ctx = Context(args.shared, args.ovmf)
    if args.boots:
        boot_figures(ctx, args.boots, args.smp, args.cpu)
    for i, model in enumerate(args.model):
        tok = args.tokenizer[min(i, len(args.tokenizer) - 1)]
        decode_figures(ctx, os.path.abspath(model), os.path.abspath(tok), args.smp, args.steps, args.prompt, args.q8,
                       args.warmups, max(1, args.answers), args.cpu, args.bench)


if __name__ == "__main__":
    main()
