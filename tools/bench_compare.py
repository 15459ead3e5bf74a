#!/usr/bin/env python3
"""bench_compare.py - llama-bench's pp and tg tests, ours and (when a
llama-bench binary is given) llama.cpp's on the same GGUF files, interleaved.

    python3 tools/bench_compare.py [--shape stories110M|llama-3.2-1b|gemma-3-1b|qwen3moe-mini]
        [--types F32,Q8_0,Q4_0,Q4_K_M] (also F16, BF16) [--threads 1,2] [--tests pp128,tg128,pp512]
        [--rounds 5] [--llama-bench PATH] [--dir build/bench] [--bandwidth build/host/bench_bandwidth]

The files are random-weight models written by build/host/gen_gguf into
--dir (once; they are kept). Ours is build/host/bench_pp_tg, which keeps
the model loaded and runs one test per command; theirs is
`llama-bench -m FILE -t N -p P -n G -r 1 -o jsonl` (its defaults otherwise:
f16 KV cache, flash attention auto, a warm-up run). Each round runs ours
then theirs, test by test; a row is the median of the rounds. Without
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
    a = p.parse_args()
    a.types, a.tests = a.types.split(","), a.tests.split(",")
    a.threads = [int(t) for t in a.threads.split(",")]
    for test in a.tests:
        if test[:2] not in ("pp", "tg") or not test[2:].isdigit():
            p.error(f"a test is ppN or tgN, not {test!r}")
    if a.rounds < 1:
        p.error("--rounds must be 1 or more")
    return a


def model_file(args, qtype):
    """The generated file for the shape and type, written when missing."""
    path = os.path.join(args.dir, f"{args.shape}-gen-{qtype}.gguf")
    if not os.path.exists(path):
        os.makedirs(args.dir, exist_ok=True)
        print(f"bench_compare: generating {path} ({args.shape} shape, random weights, {qtype})", flush=True)
        subprocess.run([args.gen, path + ".tmp", "--shape", args.shape, "--type", qtype], check=True,
                       stdout=subprocess.DEVNULL)
        os.replace(path + ".tmp", path)
    return path


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


def theirs(binary, path, test, threads, info):
    n = test[2:]
    pp, tg = (n, "0") if test.startswith("pp") else ("0", n)
    r = subprocess.run([binary, "-m", path, "-t", str(threads), "-p", pp, "-n", tg, "-r", "1", "-o", "jsonl"],
                       capture_output=True, text=True, timeout=1800)
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


def main():
    args = parse_args()
    for binary in (args.gen, args.ours):
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"bench_compare: {binary} not built (make host)")
    compare = bool(args.llama_bench)
    if compare and not os.access(args.llama_bench, os.X_OK):
        raise SystemExit(f"bench_compare: LLAMA_BENCH={args.llama_bench} is not an executable llama-bench")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{args.shape} shape, random weights (build/host/gen_gguf); {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"medians of {args.rounds} round{'s' if args.rounds > 1 else ''}"
          + (", ours and llama-bench interleaved" if compare else " (no LLAMA_BENCH: our figures alone)")
          + f"; load average at start {load:.1f}", flush=True)
    if args.bandwidth and not os.access(args.bandwidth, os.X_OK):
        print(f"bench_compare: {args.bandwidth} not built: no share of the read bandwidth", flush=True)
        args.bandwidth = ""
    bandwidth = read_bandwidth(args.bandwidth, args.threads, (CACHE_MIB, DRAM_MIB)) if args.bandwidth else {}
    for t in args.threads if bandwidth else ():
        print(f"read bandwidth, {t} thread{'s' if t > 1 else ''}: {bandwidth[(t, CACHE_MIB)]:.1f} GB/s "
              f"({CACHE_MIB} MiB, in cache), {bandwidth[(t, DRAM_MIB)]:.1f} GB/s ({DRAM_MIB} MiB, DRAM)", flush=True)
    header = f"{'type':<7} {'test':<6} {'threads':>7} {'ours tok/s':>11}"
    if bandwidth:
        header += f" {'GB/token':>8} {'limit GB/s':>10} {'share':>6}"
    if compare:
        header += f" {'llama.cpp':>10} {'ratio':>6}"
    print(header, flush=True)
    info = {}
    for qtype in args.types:
        path = model_file(args, qtype)
        ours = Ours(args.ours, path)
        weight_gb = ours.weight_bytes() / 1e9
        if bandwidth:
            mib = max(1, round(weight_gb * 1e9 / 2**20))
            bandwidth.update(read_bandwidth(args.bandwidth, args.threads, (mib,)))
        for threads in args.threads:
            samples = {t: ([], []) for t in args.tests}
            for _ in range(args.rounds):
                for test in args.tests:
                    samples[test][0].append(ours.run(test, threads))
                    if compare:
                        samples[test][1].append(theirs(args.llama_bench, path, test, threads, info))
            for test in args.tests:
                mine = statistics.median(samples[test][0])
                row = f"{qtype:<7} {test:<6} {threads:>7} {mine:>11.1f}"
                if bandwidth:
                    limit = bandwidth[(threads, mib)]
                    share = f"{100 * weight_gb * mine / limit:5.0f}%" if test[:2] == "tg" else ""
                    row += f" {weight_gb:>8.3f} {limit:>10.1f} {share:>6}"
                if compare:
                    other = statistics.median(samples[test][1])
                    row += f" {other:>10.1f} {mine / other:>5.2f}x"
                print(row, flush=True)
        ours.close()
    if compare:
        commit = os.environ.get("LLAMA_COMMIT") or info.get("commit", "unknown")
        print(f"llama.cpp: {args.llama_bench}, commit {commit} (build {info.get('build')}; "
              f"LLAMA_COMMIT=... names it when the build does not know), CPU {info.get('cpu')}; "
              f"load average at end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
