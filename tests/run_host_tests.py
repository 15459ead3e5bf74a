#!/usr/bin/env python3
"""Runs host unit test binaries and summarises the results.

    python3 tests/run_host_tests.py --shared DIR BIN...

Each binary (or *.py test script, run with this Python) runs with
MODELS_DIR=DIR/models; its output is streamed as it
comes. Exit status 0 = passed, 77 = skipped (test data missing), anything
else = failed. The last line is e.g. "host tests: 12 passed, 0 failed,
1 skipped"; the exit status is 1 when any binary failed.
"""
import argparse
import os
import subprocess
import sys
import time

SKIP_STATUS = 77


def run_one(binary, env, timeout):
    """Runs one test binary; returns (status, ok_lines, fail_lines, seconds)."""
    oks = fails = 0
    start = time.monotonic()
    # Python test scripts run under this interpreter (they need not be executable).
    command = [sys.executable, binary] if binary.endswith(".py") else [binary]
    try:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=env, text=True, errors="replace", bufsize=1)
    except OSError as exc:
        print(f"FAIL - {binary}: cannot run: {exc}", flush=True)
        return 1, 0, 1, 0.0
    try:
        for line in proc.stdout:
            sys.stdout.write("    " + line if line.endswith("\n") else "    " + line + "\n")
            sys.stdout.flush()
            if line.startswith("ok - "):
                oks += 1
            elif line.startswith("FAIL - "):
                fails += 1
        status = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        print(f"FAIL - {binary}: timed out after {timeout} s", flush=True)
        return 1, oks, fails + 1, time.monotonic() - start
    return status, oks, fails, time.monotonic() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default="../shared", help="shared directory (models in DIR/models)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds per test binary")
    parser.add_argument("binaries", nargs="*", help="test binaries to run")
    args = parser.parse_args()

    env = dict(os.environ)
    env["MODELS_DIR"] = os.path.join(args.shared, "models")

    passed = failed = skipped = 0
    total_ok = total_fail = 0
    failed_names = []
    for binary in args.binaries:
        path = binary if os.sep in binary else os.path.join(".", binary)
        print(f"== {binary}", flush=True)
        status, oks, fails, seconds = run_one(path, env, args.timeout)
        total_ok += oks
        total_fail += fails
        if status == SKIP_STATUS:
            skipped += 1
            verdict = "SKIPPED"
        elif status == 0 and fails == 0:
            passed += 1
            verdict = "passed"
        else:
            failed += 1
            failed_names.append(binary)
            how = f"exit status {status}" if status >= 0 else f"killed by signal {-status}"
            verdict = f"FAILED ({how}, {fails} failing checks)"
        print(f"== {binary}: {verdict} ({oks} ok, {fails} failed checks, {seconds:.1f} s)", flush=True)

    print(f"checks: {total_ok} ok, {total_fail} failed")
    if failed_names:
        print("failed: " + " ".join(failed_names))
    print(f"host tests: {passed} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
