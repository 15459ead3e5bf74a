#!/usr/bin/env python3
"""bench_qemu.py - figures measured in QEMU (TCG): launch-to-prompt time,
kernel entry-to-prompt time, kernel memory at the prompt, and in-kernel
decode speed for the models given; with --big M.gguf, the RAM a big GGUF
model takes at the prompt beyond its file and its KV cache (issue 12's
target: at most 64 MiB; gen_gguf --shape llama-3.2-1b --type Q4_K_M); with
--ramdisk-mib N, the launch-to-prompt time of an N MiB ramdisk (the default
small model plus sparse zeros; issue 12's target: 1024 MiB in under 30 s).
Every image has its ramdisk in a partition of its own, as make image writes
it, and every boot's ramdisk read speed (the loader's MB/s) is printed.

    python3 tools/bench_qemu.py [--boots 3] [--model M.bin --tokenizer T.bin] [--smp N]
                                [--warmups 1] [--answers 3] [--cpu qemu64] [--bench 64 --bench-reps 3]
                                [--big M.gguf --big-memory 2G --big-ctx 4096]
                                [--ramdisk-mib 1024 [--ramdisk-memory 2G]]
    python3 tools/bench_qemu.py --smp-series 1,2,4,16 [--rounds 3] [--model M --tokenizer T]

Prints a table; these are measurements, not pass/fail checks.
"""
import argparse
import os
import re
import shutil
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "qemu"))
from harness import Context  # noqa: E402
from cases_boot import READY  # noqa: E402
from cases_storage import PARTITION_READ, partition_image, small_files, sparse_file  # noqa: E402

STATS = re.compile(r"\[([^\]\n]*tok/s[^\]\n]*)\]")
DECODE = re.compile(r"decode ([0-9.]+) tok/s")
PREFILL = re.compile(r"prefill ([0-9.]+) tok/s")


def ramdisk_read(vm):
    """(MiB, ms, MB/s) of the loader's ramdisk partition read line."""
    m = PARTITION_READ.search(vm.text())
    if not m:
        raise SystemExit(f"no ramdisk partition read line in the boot log: {vm.text()[-1500:]!r}")
    return tuple(int(g) for g in m.groups())


def read_summary(reads):
    """The median read of several boots; the loader counts whole ms, so a
    small ramdisk read in under 1 ms has no speed."""
    mib, ms, rate = sorted(reads, key=lambda r: r[2])[len(reads) // 2]
    speed = f"{rate} MB/s" if ms else "under 1 ms, no speed"
    spread = f"; {min(r[2] for r in reads)}-{max(r[2] for r in reads)} MB/s over {len(reads)} boots" \
        if len(reads) > 1 else ""
    return f"ramdisk read (loader, partition): {'median ' if spread else ''}{speed} ({mib} MiB in {ms} ms{spread})"


def boot_figures(ctx, boots, smp, cpu):
    launch, entry, used, reads = [], [], [], []
    img = partition_image(ctx, "bench-boot")
    for _ in range(boots):
        with ctx.boot(image=img, smp=smp, cpu=cpu) as vm:
            out = vm.expect(READY, timeout=60)
            entry.append(float(READY.search(out.encode()).group(1)))
            vm.wait_prompt()
            launch.append(vm.time_of(vm.cursor - 1) - vm.start_time)
            reads.append(ramdisk_read(vm))
            mem = vm.command("/mem")
            m = re.search(r"used\D*([0-9.]+)", mem)
            r = re.search(r"ramdisk\D*([0-9.]+)", mem)
            if m:
                used.append(float(m.group(1)) - (float(r.group(1)) if r else 0.0))
    print(f"launch to prompt (QEMU start -> '> '): median {statistics.median(launch):.2f} s "
          f"(min {min(launch):.2f}, max {max(launch):.2f}, {boots} boots)")
    print(f"kernel entry to prompt:               median {statistics.median(entry):.1f} ms")
    print(read_summary(reads))
    if used:
        print(f"RAM used at the prompt beyond the ramdisk: {statistics.median(used):.1f} MiB")


BENCH_ROW = re.compile(r"^(\S.*?)\s{2,}(\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s")


def bench_figures(vm, name, cpu, sizes, reps):
    """The shell's /bench N (a batched prefill of N tokens, then N decode
    steps), after a /bench 8 that warms TCG's translations and the first-touch
    page faults; each size runs reps times and the medians are printed, with
    prefill speed per token over decode speed (issue 14's QEMU target: 3x)."""
    vm.command("/bench 8", timeout=3600)
    for n in sizes:
        runs = {}
        for _ in range(reps):
            for line in vm.command(f"/bench {n}", timeout=3600).splitlines():
                m = BENCH_ROW.match(line.strip())
                if m and m.group(2) == "1":  # the one-worker row
                    runs.setdefault(m.group(1).strip(), []).append((float(m.group(3)), float(m.group(4))))
        if not runs:
            print(f"{name} cpu={cpu} /bench {n}: no figures")
        for fmt, v in runs.items():
            pre = statistics.median(x[0] for x in v)
            dec = statistics.median(x[1] for x in v)
            print(f"{name} cpu={cpu} /bench {n:4d} {fmt}: prefill {pre:7.1f} tok/s, decode {dec:6.1f} tok/s "
                  f"({1000 / dec:6.2f} ms/token), prefill/decode {pre / dec:4.2f}x (medians of {len(v)})")


def decode_figures(ctx, model, tokenizer, smp, steps, prompt, quantize, warmups, answers, cpu, bench,
                   bench_reps):
    """The first `warmups` answers (cold caches, first-touch page faults) are
    discarded; the median decode speed of the next `answers` is reported."""
    name = "bench-" + os.path.basename(model) + ("-q8" if quantize else "")
    cfg = f"model={os.path.basename(model)}\ntokenizer={os.path.basename(tokenizer)}\n"
    if quantize:
        cfg += "quantize=q8\n"
    img = ctx.image(name, [model, tokenizer], cfg, ramdisk_partition=True)
    with ctx.boot(image=img, smp=smp, memory="2G", cpu=cpu) as vm:
        vm.expect(READY, timeout=120)
        vm.wait_prompt(timeout=60)
        workers = re.search(r"smp: \d+ of \d+ workers pay off[^\r\n]*", vm.text())
        if workers:
            print(f"  -smp {smp}: {workers.group(0)}")
        print(f"{os.path.basename(model)}: {read_summary([ramdisk_read(vm)])}")
        if bench:
            bench_figures(vm, os.path.basename(model), cpu, bench, bench_reps)
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
        return speeds


def smp_series(ctx, model, tokenizer, smps, rounds, steps, prompt, warmups, answers, cpu):
    """Issue 15's target for idle CPUs: decode speed at each -smp, the boots
    interleaved (1, 2, 4, 16, 1, 2, ...) over `rounds` so the host's load
    falls on all alike; each boot gives the median of its answers, and the
    series the median over rounds. Prints PASS/FAIL for -smp 16 >= half of
    -smp 1 and -smp 4 >= -smp 2 (a pair is skipped when not in the series);
    a shortfall within the spread of either side's boots passes, marked so."""
    per_smp = {n: [] for n in smps}
    for r in range(rounds):
        for n in smps:
            speeds = decode_figures(ctx, model, tokenizer, n, steps, prompt, False, warmups, answers, cpu, [], 1)
            if speeds:
                per_smp[n].append(statistics.median(speeds))
    name = os.path.basename(model)
    med = {n: statistics.median(v) for n, v in per_smp.items() if v}
    for n in smps:
        v = per_smp[n]
        shown = " ".join(f"{x:.1f}" for x in v)
        print(f"smp-series {name} cpu={cpu} -smp {n:2d}: "
              + (f"decode {med[n]:7.1f} tok/s (median of {len(v)} boots: {shown})" if v else "no figure"))
    verdicts = []
    for fast, slow, need, label in ((16, 1, 0.5, "-smp 16 >= 0.5 x -smp 1"), (4, 2, 1.0, "-smp 4 >= -smp 2")):
        if fast in med and slow in med:
            ratio = med[fast] / med[slow]
            # Boots of one -smp differ by their spread; a shortfall smaller
            # than it is not a measured slowdown, and is printed as such.
            spread = max((max(per_smp[n]) - min(per_smp[n])) / med[n] for n in (fast, slow))
            ok = ratio >= need or ratio >= need - spread
            verdicts.append(ok)
            noise = "" if ratio >= need else f", short by less than the boots' spread of {spread:.1%}" if ok else ""
            print(f"smp-series {name}: -smp {fast} / -smp {slow} = {ratio:.3f} ({label}): "
                  f"{'PASS' if ok else 'FAIL'}{noise}")
    if not verdicts:
        print(f"smp-series {name}: no target pair (16 and 1, or 4 and 2) in the series")
    return all(verdicts)


def mib_of(label, text):
    m = re.search(label + r"\s+[0-9.]+ MiB \((\d+) bytes\)", text)
    return int(m.group(1)) / 2**20 if m else None


def big_model_memory(ctx, model, memory, context):
    """Boots model from its own ramdisk partition, as make image writes it."""
    name = "bench-big-" + os.path.basename(model)
    cfg = f"model={os.path.basename(model)}\n" + (f"ctx={context}\n" if context else "")
    img = ctx.image(name, [model], cfg, ramdisk_partition=True)
    with ctx.boot(image=img, memory=memory) as vm:
        vm.expect(READY, timeout=1800)
        vm.wait_prompt(timeout=120)
        print(f"{os.path.basename(model)}: {read_summary([ramdisk_read(vm)])}")
        mem, info = vm.command("/mem"), vm.command("/model")
    kv = re.search(r"kv cache:\s+(\S+), ([0-9.]+) MiB", info)
    used, ramdisk, state = mib_of("used", mem), mib_of("ramdisk", mem), mib_of(r"model\+kv \S+", mem)
    if not (kv and used and ramdisk and state):
        print(f"{os.path.basename(model)}: no memory figures in /mem or /model: {mem!r} {info!r}")
        return
    kv_mib = float(kv.group(2))
    print(f"{os.path.basename(model)} at the prompt (-m {memory}, ctx {context or 'auto'}): used {used:.1f} MiB = "
          f"file {ramdisk:.1f} + {kv.group(1)} KV cache {kv_mib:.1f} + {used - ramdisk - kv_mib:.1f} MiB more "
          f"(run state {state - kv_mib:.1f}, the rest kernel and vocabulary; target at most 64)")


TAR_BLOCK = 512


def ramdisk_figures(ctx, mib, boots, memory):
    """An image whose ramdisk partition holds the default small model and
    sparse zeros up to about mib MiB (tar headers and blocking aside), booted
    `boots` times: the loader's read speed and the launch-to-prompt time."""
    files = small_files(ctx)
    tar_bytes = sum(TAR_BLOCK + -(-os.path.getsize(f) // TAR_BLOCK) * TAR_BLOCK for f in files) + 3 * TAR_BLOCK
    pad = sparse_file(ctx, f"padding-{mib}M.bin", max(0, (mib << 20) - tar_bytes))
    img = partition_image(ctx, f"bench-ramdisk-{mib}M", [pad])
    memory = memory or f"{max(2, -(-(mib + 1024) // 1024))}G"
    launch, reads = [], []
    for _ in range(boots):
        with ctx.boot(image=img, memory=memory) as vm:
            vm.expect(READY, timeout=1800)
            vm.wait_prompt(timeout=120)
            launch.append(vm.time_of(vm.cursor - 1) - vm.start_time)
            reads.append(ramdisk_read(vm))
    print(f"ramdisk {reads[0][0]} MiB (-m {memory}): launch to prompt median {statistics.median(launch):.1f} s "
          f"(min {min(launch):.1f}, max {max(launch):.1f}, {boots} boots; target under 30 s)")
    print(read_summary(reads))


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
    ap.add_argument("--bench-reps", type=int, default=3, help="runs of each /bench N (medians reported)")
    ap.add_argument("--big", action="append", default=[], help="a big GGUF model: RAM at the prompt beyond file+KV")
    ap.add_argument("--big-memory", default="2G")
    ap.add_argument("--big-ctx", type=int, default=4096, help="boot.cfg ctx= for --big (0: the automatic one)")
    ap.add_argument("--smp-series", default="",
                    help="e.g. 1,2,4,16: decode speed of --model (default stories260K) at each -smp, boots "
                         "interleaved over --rounds, with issue 15's PASS/FAIL ratios; only this is run")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of --smp-series (medians reported)")
    ap.add_argument("--ramdisk-mib", type=int, action="append", default=[],
                    help="an image with a ramdisk of about N MiB (the small model, then sparse zeros)")
    ap.add_argument("--ramdisk-memory", default="", help="QEMU -m for --ramdisk-mib (default: N MiB + 1 GiB)")
    args = ap.parse_args()
    ctx = Context(args.shared, args.ovmf)
    try:
        if args.smp_series:
            model = args.model[0] if args.model else os.path.join(args.shared, "models", "stories260K.bin")
            tok = args.tokenizer[0] if args.tokenizer else os.path.join(args.shared, "models", "tok512.bin")
            smps = [int(n) for n in args.smp_series.split(",")]
            ok = smp_series(ctx, os.path.abspath(model), os.path.abspath(tok), smps, max(1, args.rounds),
                            args.steps, args.prompt, args.warmups, max(1, args.answers), args.cpu)
            sys.exit(0 if ok else 1)
        measure(args, ctx)
    finally:  # the images (--ramdisk-mib's sparse padding, --big's copy of the model)
        shutil.rmtree(ctx.image_dir, ignore_errors=True)


def measure(args, ctx):
    for mib in args.ramdisk_mib:
        ramdisk_figures(ctx, mib, max(1, args.boots), args.ramdisk_memory)
    for model in args.big:
        big_model_memory(ctx, os.path.abspath(model), args.big_memory, args.big_ctx)
    if args.boots:
        boot_figures(ctx, args.boots, args.smp, args.cpu)
    for i, model in enumerate(args.model):
        tok = args.tokenizer[min(i, len(args.tokenizer) - 1)]
        decode_figures(ctx, os.path.abspath(model), os.path.abspath(tok), args.smp, args.steps, args.prompt, args.q8,
                       args.warmups, max(1, args.answers), args.cpu, args.bench, max(1, args.bench_reps))


if __name__ == "__main__":
    main()
