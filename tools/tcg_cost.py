#!/usr/bin/env python3
"""tcg_cost.py - a rough QEMU TCG cost of a host run, per function, from a
callgrind profile taken with per-instruction counts:

    valgrind --tool=callgrind --dump-instr=yes --dump-line=no \\
        --toggle-collect=timed_prefill --callgrind-out-file=OUT \\
        build/host/bench_forward MODEL --kernels sse2 --prefill-only 16
    python3 tools/tcg_cost.py OUT build/host/bench_forward [--per 80] [--detail FUNCTION]

Why: under QEMU 7.2's TCG (the development machines') an SSE arithmetic
instruction costs about one helper call whatever it computes (pmullw as much
as pmaddwd, a float op somewhat more), while SSE moves are cheap, so guest
time follows the count of SSE arithmetic instructions more than callgrind's
plain instruction count; general-purpose instructions are not free either.
The weights (10 per SSE arithmetic instruction, 0.5 per SSE move or load,
2.7 per general-purpose instruction with a memory operand, 1.9 per other
one) are a least-squares fit of QEMU -cpu qemu64 /bench times (ns per
instruction: 2.75, 0.15, 0.75, 0.52) over stories15M int8 decode, and
prefill of 5 and 64 tokens with the pmaddwd and the general-purpose-register
(int8_swar.c) gemms; they predict those prefill/decode ratios within ~3%
(2.14 / 3.06 / 2.35 / 3.29 against 2.20 / 3.03 / 2.39 / 3.28 measured). The
earlier weights (10 / 2 / 1 / 1) fitted SSE-only code but predicted the SWAR
gemm at twice its real speed.
--per divides the totals (e.g. by the tokens the profile ran)."""
import argparse
import collections
import re
import subprocess

SSE_MOVE = re.compile(r"^(movdq|movap|movup|movs[sd]$|movd$|movq$|movlps|movhps|movhlps|movlhps)")


def weight(mnemonic, operands):
    if "xmm" in operands or mnemonic.startswith("cvt"):
        return 0.5 if SSE_MOVE.match(mnemonic) else 10
    return 2.7 if "(" in operands and not mnemonic.startswith(("lea", "nop")) else 1.9


def disassemble(binary):
    """address -> (mnemonic, operands, function)"""
    table, function = {}, "?"
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = re.match(r"^([0-9a-f]+) <(.*)>:", line)
        if m:
            function = m.group(2)
            continue
        m = re.match(r"^\s+([0-9a-f]+):\s+(\S+)\s*(.*)$", line)
        if m:
            table[int(m.group(1), 16)] = (m.group(2), m.group(3), function)
    return table


def costs(profile):
    """(address, executions) of each cost line; call lines' inclusive costs are skipped."""
    last, after_call = 0, False
    for line in open(profile):
        if line.startswith("calls="):
            after_call = True
            continue
        if not line[:1] or line[0] not in "0123456789+-*":
            continue
        position, *counts = line.split()
        if position.startswith("0x"):
            last = int(position, 16)
        elif position[0] in "+-":
            last += int(position, 0) if position[0] == "+" else -int(position[1:], 0)
        if after_call:
            after_call = False
            continue
        yield last, int(counts[0]) if counts else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("binary")
    ap.add_argument("--per", type=float, default=1.0)
    ap.add_argument("--detail", help="also list this function's cost by instruction")
    ap.add_argument("--top", type=int, default=12)
    args = ap.parse_args()
    table = disassemble(args.binary)
    by_function, by_instruction = collections.Counter(), collections.Counter()
    total = 0
    for address, count in costs(args.profile):
        mnemonic, operands, function = table.get(address, ("?", "", "?"))
        cost = weight(mnemonic, operands) * count
        total += cost
        by_function[function] += cost
        if function == args.detail:
            by_instruction[mnemonic + (" (memory)" if "(" in operands else "")] += count
    print(f"TCG cost {total / args.per / 1e6:.2f} M units")
    for function, cost in by_function.most_common(args.top):
        print(f"  {cost / args.per / 1e6:9.2f} M  {100 * cost / max(total, 1):5.1f}%  {function}")
    for instruction, count in by_instruction.most_common(args.top * 2):
        print(f"    {count / args.per / 1e6:9.3f} M executed  {instruction}")


if __name__ == "__main__":
    main()
