#!/usr/bin/env python3
"""Runs host unit test binaries (and *.py test scripts) and summarises them.

    python3 tests/run_host_tests.py [--label host] [--jobs N] --shared DIR BIN...

Each test runs with MODELS_DIR=DIR/models; its output is streamed as it
comes (with --jobs above 1, N tests run at once and each one's output is
printed whole when it ends) and its check lines counted (`ok - `, `FAIL - `, `skip - `, see
tests/host/check.h). A test passes when it exits 0 and printed no FAIL line;
it is skipped when it exits 77 (test data missing) having printed no FAIL
line; anything else fails it. An `ok - ` line that says the check was not
tested fails too (a check that did not run is a skip).

The closing line counts checks, not programs: `LABEL: N passed, N failed,
N skipped` adds up every test's ok, FAIL and skip lines; a test that printed
none counts as one check (passed, failed or skipped by its exit), and a test
that failed without a FAIL line adds one failure. With the environment
variable CI set, every skip is a failure (a skipped test, and each `skip - `
line) unless tests/ci_allowed_skips.txt lists it as a check this machine
cannot run (tests/skip_policy.py); those stay skipped, with their reason.
The exit status is 1 when anything failed. See tests/test_summary.py for
TEST_SUMMARY_DIR.
"""
import argparse
import io
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from skip_policy import Policy
from test_summary import summary_line, write_summary, in_ci, skip_banner

SKIP_STATUS = 77
# An ok line that admits the check did not run.
NOT_RUN = re.compile(r"\bnot (tested|run)\b|\buntested\b", re.I)


class Counts:
    def __init__(self, policy=None, out=sys.stdout):
        self.ok = self.fail = self.skip = 0
        self.out = out
        self.policy = policy  # set under CI: a skip it does not allow fails
        self.skipped = []  # the skip lines, for the closing list

    def add(self, line):
        if line.startswith("ok - "):
            if NOT_RUN.search(line):
                print(f"FAIL - an ok line for a check that did not run (report it as skip): {line.strip()}",
                      file=self.out)
                self.fail += 1
            else:
                self.ok += 1
        elif line.startswith("FAIL - "):
            self.fail += 1
        elif line.startswith("skip - "):
            allowed = self.policy.allowed(line) if self.policy else "CI is not set"
            if allowed is None:
                print(f"FAIL - a skipped check under CI (not on tests/ci_allowed_skips.txt): {line.strip()}",
                      file=self.out)
                self.fail += 1
            else:
                self.skip += 1
                self.skipped.append(f"{line.strip()} [{allowed}]")


def run_one(binary, env, timeout, out=sys.stdout, policy=None):
    """Runs one test, its output to out; returns (exit status, Counts, seconds)."""
    counts = Counts(policy, out)
    start = time.monotonic()
    # Python test scripts run under this interpreter (they need not be executable).
    command = [sys.executable, binary] if binary.endswith(".py") else [binary]
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=env, text=True, errors="replace", bufsize=1)
    except OSError as exc:
        print(f"FAIL - {binary}: cannot run: {exc}", file=out, flush=True)
        counts.fail += 1
        return 1, counts, 0.0
    try:
        for line in proc.stdout:
            out.write("    " + line if line.endswith("\n") else "    " + line + "\n")
            counts.add(line)  # may add a FAIL line of its own
            out.flush()
        status = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        print(f"FAIL - {binary}: timed out after {timeout} s", file=out, flush=True)
        counts.fail += 1
        return 1, counts, time.monotonic() - start
    return status, counts, time.monotonic() - start


def verdict(status, counts):
    """'passed', 'skipped' or 'failed', and why."""
    if counts.fail:
        return "failed", f"{counts.fail} failing checks, exit status {status}"
    if status == SKIP_STATUS:
        if in_ci():
            return "failed", "skipped, and CI is set: CI must run every test"
        return "skipped", "test data or a tool missing"
    if status == 0:
        return "passed", ""
    how = f"exit status {status}" if status >= 0 else f"killed by signal {-status}"
    return "failed", how


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default="../shared", help="shared directory (models in DIR/models)")
    parser.add_argument("--label", default="host", help="the word before the summary line's colon")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per test binary")
    parser.add_argument("--jobs", type=int, default=1, help="tests run at once")
    parser.add_argument("binaries", nargs="*", help="test binaries to run")
    args = parser.parse_args()

    env = dict(os.environ)
    env["MODELS_DIR"] = os.path.join(args.shared, "models")

    results = {"passed": [], "failed": [], "skipped": []}
    policy = Policy() if in_ci() else None
    checks = Counts()
    lock = threading.Lock()

    def run_and_report(binary):
        path = binary if os.sep in binary else os.path.join(".", binary)
        if args.jobs <= 1:
            print(f"== {binary}", flush=True)
            status, counts, seconds = run_one(path, env, args.timeout, policy=policy)
            text = ""
        else:
            buffer = io.StringIO()  # kept whole until the test ends: several run at once
            status, counts, seconds = run_one(path, env, args.timeout, buffer, policy)
            text = f"== {binary}\n" + buffer.getvalue()
        outcome, why = verdict(status, counts)
        detail = f"{outcome.upper() if outcome != 'passed' else outcome}{f' ({why})' if why else ''}"
        with lock:
            checks.ok += counts.ok
            checks.fail += counts.fail
            checks.skip += counts.skip
            checks.skipped += counts.skipped
            # The program itself counts as a check where no line of its own says what happened.
            if outcome == "failed" and not counts.fail:
                checks.fail += 1
            elif outcome == "skipped":
                checks.skip += 1
                checks.skipped.append(f"{binary}: the whole program (exit status {SKIP_STATUS})")
            elif outcome == "passed" and not counts.ok and not counts.skip:
                checks.ok += 1
            results[outcome].append(binary)
            sys.stdout.write(text)
            print(f"== {binary}: {detail} ({counts.ok} ok, {counts.fail} failed, {counts.skip} skipped checks, "
                  f"{seconds:.1f} s)", flush=True)

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        list(pool.map(run_and_report, args.binaries))

    print(f"{args.label} programs: {len(results['passed'])} passed, {len(results['failed'])} failed, "
          f"{len(results['skipped'])} skipped")
    if results["failed"]:
        print("failed: " + " ".join(results["failed"]))
    if checks.skipped:
        skip_banner(f"{args.label}: {len(checks.skipped)} checks did not run:\n      " +
                    "\n      ".join(checks.skipped))
    line = summary_line(args.label, checks.ok, checks.fail, checks.skip)
    write_summary(args.label, line)
    print(line)
    return 1 if results["failed"] or checks.fail else 0


if __name__ == "__main__":
    sys.exit(main())
