#!/usr/bin/env python3
"""bench_compare.py - llama-bench's pp and tg tests, ours and (when a
llama-bench binary is given) llama.cpp's on the same GGUF files, interleaved.

    python3 tools/bench_compare.py [--shape stories110M|llama-3.2-1b|gemma-3-1b|qwen3moe-mini]
        [--types F32,Q8_0,Q4_0,Q4_K_M] (also F16, BF16) [--threads 1,2] [--tests pp128,tg128,pp512]
        [--rounds 5] [--llama-bench PATH] [--dir build/bench] [--bandwidth build/host/bench_bandwidth]
        [--files gen|llama [--untied] [--gguf-py DIR] [--quantize PATH]] [--budget SECONDS] [--markdown]

The files are random-weight models written into --dir (once; they are
kept): by build/host/gen_gguf (--files gen, the default: our own layout,
synthetic vocabulary, tied), or the way users get them (--files llama:
written by llama.cpp's gguf-py, quantised by its llama-quantize with its
default mixes, a real vocabulary, tied or --untied; tools/bench_files.py,
stories110M and llama-3.2-1b shapes). Ours is build/host/bench_pp_tg, which keeps
the model loaded and runs one test per command; theirs is
`llama-bench -m FILE -t N -p P -n G -r 1 -o jsonl` (its defaults otherwise:
f16 KV cache, flash attention auto, a warm-up run). Each round goes over
every thread count, type and test, running ours then theirs; a row is the
median of the rounds it got. --budget stops measuring when that many seconds
have passed since the start (a llama-bench run is cut at the limit and
dropped) and prints what it has; every pair measured is logged to stderr as
it comes. --markdown prints the table as docs/benchmarks.md's (rows type and
test, a column per thread count). Without
--llama-bench (or LLAMA_BENCH in the environment) only our figures are
printed. The read-bandwidth limit is measured first (build/host/bench_bandwidth:
a 64 MiB buffer, in the last-level cache, and a 4 GiB one, from DRAM), and
each tg row gets its share of the limit for its own working set: the weight
bytes a decode step reads (bench_pp_tg's "bytes") times tok/s, over the read
speed of a buffer of that size at that thread count (a 110M-shape file fits
a 480 MiB L3 in part, so its limit lies between the two figures; --bandwidth
"" leaves it out). The llama.cpp commit printed is LLAMA_COMMIT when set, else the
one llama-bench reports about itself. Python standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import bench_files

SHAPES = ("stories110M", "llama-3.2-1b", "gemma-3-1b", "qwen3moe-mini")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--shape", default="stories110M", choices=SHAPES)
    p.add_argument("--types", default="F32,Q8_0,Q4_0,Q4_K_M")
    p.add_argument("--threads", default="1,2")
    p.add_argument("--tests", default="pp128,tg128,pp512")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--llama-bench", default=os.environ.get("LLAMA_BENCH", ""))
    p.add_argument("--dir", default="build/bench")
    p.add_argument("--gen", default="build/host/gen_gguf")
    p.add_argument("--ours", default="build/host/bench_pp_tg")
    p.add_argument("--bandwidth", default="build/host/bench_bandwidth")
    p.add_argument("--files", default="gen", choices=("gen", "llama"))
    p.add_argument("--budget", type=float, default=0, help="seconds from the start; 0: no limit")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--rounds-for", default="", help="fewer rounds at some thread counts: THREADS=ROUNDS,...")
    bench_files.add_arguments(p)
    a = p.parse_args()
    a.types, a.tests = a.types.split(","), a.tests.split(",")
    a.threads = [int(t) for t in a.threads.split(",")]
    for test in a.tests:
        if test[:2] not in ("pp", "tg") or not test[2:].isdigit():
            p.error(f"a test is ppN or tgN, not {test!r}")
    if a.rounds < 1:
        p.error("--rounds must be 1 or more")
    try:
        a.rounds_for = {int(k): int(v) for k, v in (item.split("=") for item in a.rounds_for.split(",") if item)}
    except ValueError:
        p.error(f"--rounds-for is THREADS=ROUNDS,..., not {a.rounds_for!r}")
    if a.files == "llama" and a.shape not in bench_files.SHAPES:
        p.error(f"--files llama makes the shapes {', '.join(bench_files.SHAPES)}")
    return a


def gen_file(args, qtype):
    """The file gen_gguf writes for the shape and type, written when missing."""
    path = os.path.join(args.dir, f"{args.shape}-gen-{qtype}.gguf")
    if not os.path.exists(path):
        os.makedirs(args.dir, exist_ok=True)
        print(f"bench_compare: generating {path} ({args.shape} shape, random weights, {qtype})", flush=True)
        subprocess.run([args.gen, path + ".tmp", "--shape", args.shape, "--type", qtype], check=True,
                       stdout=subprocess.DEVNULL)
        os.replace(path + ".tmp", path)
    return path


def model_files(args):
    """{type: path} of the files compared."""
    if args.files == "llama":
        return bench_files.make_files(args.shape, args.types, not args.untied, args.dir, args.gguf_py,
                                      args.quantize, args.vocab, args.seed,
                                      log=lambda line: print(line, flush=True))
    return {qtype: gen_file(args, qtype) for qtype in args.types}


class Ours:
    """build/host/bench_pp_tg on one file, kept running between commands."""

    def __init__(self, binary, path):
        self.proc = subprocess.Popen([binary, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.ask("warmup")

    def ask(self, command):
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise SystemExit(f"bench_compare: bench_pp_tg stopped at {command!r}")
        return line.split()

    def run(self, test, threads):
        self.proc.stdin.write(f"threads {threads}\n")  # answered by no line
        return float(self.ask(f"{test[:2]} {test[2:]}")[2])

    def weight_bytes(self):
        return float(self.ask("bytes")[1])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def theirs(binary, path, test, threads, info, timeout=1800):
    """llama-bench's tok/s for the test; None when it ran past timeout seconds."""
    n = test[2:]
    pp, tg = (n, "0") if test.startswith("pp") else ("0", n)
    try:
        r = subprocess.run([binary, "-m", path, "-t", str(threads), "-p", pp, "-n", tg, "-r", "1", "-o", "jsonl"],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    rows = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    if r.returncode != 0 or not rows:
        raise SystemExit(f"bench_compare: llama-bench failed on {path}: {r.stderr.strip()[-400:]}")
    info.setdefault("commit", rows[0].get("build_commit", "unknown"))
    info.setdefault("build", rows[0].get("build_number", "?"))
    info.setdefault("cpu", rows[0].get("cpu_info", "?"))
    return float(rows[0]["avg_ts"])


CACHE_MIB, DRAM_MIB = 64, 4096


def read_bandwidth(binary, threads, sizes):
    """{(threads, MiB): GB/s} from bench_bandwidth for buffers of those sizes (MiB)."""
    r = subprocess.run([binary, "--threads", ",".join(map(str, threads)), "--sizes", ",".join(map(str, sizes))],
                       capture_output=True, text=True, check=True)
    found = {}
    for line in r.stdout.splitlines():
        word, t, mib, gbs = line.split()
        found[(int(t), int(mib))] = float(gbs)
    return found


class Clock:
    """Seconds left of --budget (None: no limit)."""

    def __init__(self, budget):
        self.end = time.monotonic() + budget if budget > 0 else None

    def left(self):
        return None if self.end is None else self.end - time.monotonic()

    def over(self):
        return self.end is not None and self.left() <= 0


def measure(args, files, bandwidth, clock, compare, info):
    """{(type, threads, test): ([ours...], [theirs...])}, round by round, each
    round over every thread count, type and test, until the rounds or the
    budget run out. Also {type: decode weight GB}."""
    samples = {}
    procs = {qtype: Ours(args.ours, path) for qtype, path in files.items()}
    weight_gb = {qtype: proc.weight_bytes() / 1e9 for qtype, proc in procs.items()}
    for qtype in files if bandwidth else ():
        mib = max(1, round(weight_gb[qtype] * 1e9 / 2**20))
        bandwidth.update(read_bandwidth(args.bandwidth, args.threads, (mib,)))
    try:
        for rnd in range(1, args.rounds + 1):
            for threads in args.threads:
                if rnd > args.rounds_for.get(threads, args.rounds):
                    continue
                for qtype in files:
                    for test in args.tests:
                        if clock.over():
                            print(f"bench_compare: budget of {args.budget:.0f} s reached in round {rnd}", flush=True)
                            return samples, weight_gb
                        mine = procs[qtype].run(test, threads)
                        other = None
                        if compare:
                            left = clock.left()
                            other = theirs(args.llama_bench, files[qtype], test, threads, info,
                                           1800 if left is None else max(1, left))
                            if other is None:
                                continue  # cut by the budget: the pair is dropped
                        pair = samples.setdefault((qtype, threads, test), ([], []))
                        pair[0].append(mine)
                        if compare:
                            pair[1].append(other)
                        print(f"round {rnd} {qtype} {test} {threads} thread(s): ours {mine:.1f}"
                              + (f" llama.cpp {other:.1f} tok/s" if compare else " tok/s"), file=sys.stderr, flush=True)
    finally:
        for proc in procs.values():
            proc.close()
    return samples, weight_gb


def print_rows(args, samples, weight_gb, bandwidth, compare):
    header = f"{'type':<7} {'test':<6} {'threads':>7} {'rounds':>6} {'ours tok/s':>11}"
    if bandwidth:
        header += f" {'GB/token':>8} {'limit GB/s':>10} {'share':>6}"
    if compare:
        header += f" {'llama.cpp':>10} {'ratio':>6}"
    print(header, flush=True)
    for qtype in args.types:
        for threads in args.threads:
            for test in args.tests:
                if (qtype, threads, test) not in samples:
                    continue
                mine_all, theirs_all = samples[(qtype, threads, test)]
                mine = statistics.median(mine_all)
                row = f"{qtype:<7} {test:<6} {threads:>7} {len(mine_all):>6} {mine:>11.1f}"
                if bandwidth:
                    mib = max(1, round(weight_gb[qtype] * 1e9 / 2**20))
                    limit = bandwidth[(threads, mib)]
                    share = f"{100 * weight_gb[qtype] * mine / limit:5.0f}%" if test[:2] == "tg" else ""
                    row += f" {weight_gb[qtype]:>8.3f} {limit:>10.1f} {share:>6}"
                if compare:
                    other = statistics.median(theirs_all)
                    row += f" {other:>10.1f} {mine / other:>5.2f}x"
                print(row, flush=True)


def print_markdown(args, samples, weight_gb, bandwidth, compare):
    """Cells: ours / llama.cpp tok/s / **ratio** (rounds), decode's share of the limit."""
    print("\n| type | test | " + " | ".join(f"{t} thread{'s' if t > 1 else ''}" for t in args.threads) + " |")
    print("|---|---|" + "---|" * len(args.threads))
    for qtype in args.types:
        for test in args.tests:
            cells = []
            for threads in args.threads:
                got = samples.get((qtype, threads, test))
                if not got:
                    cells.append("-")
                    continue
                mine = statistics.median(got[0])
                cell = f"{mine:.1f}"
                if compare:
                    other = statistics.median(got[1])
                    cell += f" / {other:.1f} / **{mine / other:.2f}x**"
                if bandwidth and test[:2] == "tg":
                    mib = max(1, round(weight_gb[qtype] * 1e9 / 2**20))
                    cell += f" ({100 * weight_gb[qtype] * mine / bandwidth[(threads, mib)]:.0f}%)"
                if len(got[0]) != args.rounds:
                    cell += f" [{len(got[0])} round{'s' if len(got[0]) > 1 else ''}]"
                cells.append(cell)
            print(f"| {qtype} | {test} | " + " | ".join(cells) + " |")


def main():
    args = parse_args()
    clock = Clock(args.budget)
    for binary in (args.gen, args.ours) if args.files == "gen" else (args.ours,):
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"bench_compare: {binary} not built (make host)")
    compare = bool(args.llama_bench)
    if compare and not os.access(args.llama_bench, os.X_OK):
        raise SystemExit(f"bench_compare: LLAMA_BENCH={args.llama_bench} is not an executable llama-bench")
    files = model_files(args)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    maker = ("llama.cpp's gguf-py and llama-quantize (tools/bench_files.py, "
             + ("untied" if args.untied else "tied") + ")") if args.files == "llama" else "build/host/gen_gguf"
    print(f"{args.shape} shape, random weights, files by {maker}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"medians of up to {args.rounds} round{'s' if args.rounds > 1 else ''}"
          + (", ours and llama-bench interleaved" if compare else " (no LLAMA_BENCH: our figures alone)")
          + f"; load average at start {load:.1f}", flush=True)
    if args.bandwidth and not os.access(args.bandwidth, os.X_OK):
        print(f"bench_compare: {args.bandwidth} not built: no share of the read bandwidth", flush=True)
        args.bandwidth = ""
    bandwidth = read_bandwidth(args.bandwidth, args.threads, (CACHE_MIB, DRAM_MIB)) if args.bandwidth else {}
    for t in args.threads if bandwidth else ():
        print(f"read bandwidth, {t} thread{'s' if t > 1 else ''}: {bandwidth[(t, CACHE_MIB)]:.1f} GB/s "
              f"({CACHE_MIB} MiB, in cache), {bandwidth[(t, DRAM_MIB)]:.1f} GB/s ({DRAM_MIB} MiB, DRAM)", flush=True)
    info = {}
    samples, weight_gb = measure(args, files, bandwidth, clock, compare, info)
    print_rows(args, samples, weight_gb, bandwidth, compare)
    if args.markdown:
        print_markdown(args, samples, weight_gb, bandwidth, compare)
    if compare:
        commit = os.environ.get("LLAMA_COMMIT") or info.get("commit", "unknown")
        print(f"llama.cpp: {args.llama_bench}, commit {commit} (build {info.get('build')}; "
              f"LLAMA_COMMIT=... names it when the build does not know), CPU {info.get('cpu')}; "
              f"load average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
