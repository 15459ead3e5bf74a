#!/usr/bin/env python3
"""test_summary.py - the summary lines of the test runners, and the one
`make test` ends with.

Every runner (tests/run_host_tests.py for the host tests and the python
tests, tests/fuzz/run_fuzz.sh replay, tests/qemu/harness.py) ends with the
line `LABEL: N passed, N failed, N skipped`; when TEST_SUMMARY_DIR is set it
also writes that line to TEST_SUMMARY_DIR/LABEL.summary.

    python3 tests/test_summary.py --check-shared SHARED
    python3 tests/test_summary.py --install-references
    python3 tests/test_summary.py DIR LABEL... [--make-status N]

--check-shared runs first: when SHARED/models is missing it fails at once
with CI set, else says loudly that the tests needing it will be skipped.
--install-references runs tools/install-references.sh (llama.cpp through
node-llama-cpp, @huggingface/jinja, openai); when it fails it fails at once
with CI set, else says so in one loud line (the checks that need them then
report `skip - ` lines, counted as skipped in the closing line).

reads DIR/LABEL.summary for each LABEL, prints them, and ends with
`test: N passed, N failed, N skipped`, the totals. A runner that left no
summary (it crashed or never started: a build failure) counts as one failed,
and so does a non-zero --make-status when no runner reported a failure.
Exit status 1 when anything failed.
"""
import os
import re
import subprocess
import sys

SUMMARY = re.compile(r"^(\w+): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$")


def in_ci():
    """True when the environment variable CI is set (CI runs `CI=true bash .ci/run`)."""
    return os.environ.get("CI", "").lower() not in ("", "0", "false", "no")


def summary_line(label, passed, failed, skipped):
    return f"{label}: {passed} passed, {failed} failed, {skipped} skipped"


def write_summary(label, line):
    directory = os.environ.get("TEST_SUMMARY_DIR")
    if directory:
        os.makedirs(directory, exist_ok=True)
        with open(os.path.join(directory, label + ".summary"), "w") as f:
            f.write(line + "\n")


def skip_banner(text):
    """A skip nobody can miss."""
    print("#" * 70)
    print(f"SKIP: {text}")
    print("#" * 70, flush=True)


def check_shared(shared):
    """`make test`'s first step: 0 to go on, 1 to stop (CI without test data)."""
    models = os.path.join(shared, "models")
    if os.path.isdir(models):
        return 0
    if in_ci():
        print(f"FAIL - {models} is missing and CI is set: the tests need the shared test data")
        print(summary_line("test", 0, 1, 0))
        return 1
    skip_banner(f"{models} is missing: every test that needs the shared models will be skipped")
    return 0


def install_references():
    """`make test`'s (and test-big's, test-matrix's) first step: 0 to go on, 1 to stop."""
    script = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools",
                          "install-references.sh")
    if subprocess.run(["sh", script]).returncode == 0:
        return 0
    if in_ci():
        print("FAIL - the independent references did not install (sh tools/install-references.sh) and CI is set")
        print(summary_line("test", 0, 1, 0))
        return 1
    skip_banner("the references (node-llama-cpp ...) did not install: every llama.cpp check will be skipped")
    return 0


def main(argv):
    if argv[:1] == ["--check-shared"]:
        return check_shared(argv[1])
    if argv[:1] == ["--install-references"]:
        return install_references()
    make_status = 0
    if "--make-status" in argv:
        i = argv.index("--make-status")
        make_status = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    directory, labels = argv[0], argv[1:]
    passed = failed = skipped = 0
    print("==== summary")
    for label in labels:
        path = os.path.join(directory, label + ".summary")
        try:
            with open(path) as f:
                line = f.read().strip()
        except OSError:
            line = ""
        m = SUMMARY.match(line)
        if not m or m.group(1) != label:
            print(f"{label}: FAILED: no summary from this runner (crashed, or its build failed)")
            failed += 1
            continue
        print(line)
        passed += int(m.group(2))
        failed += int(m.group(3))
        skipped += int(m.group(4) or 0)
    if make_status and not failed:
        print(f"make: FAILED: exit status {make_status} although no runner reported a failure")
        failed += 1
    if skipped:
        skip_banner(f"{skipped} tests did not run (see the SKIP lines above)")
    print(summary_line("test", passed, failed, skipped))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
