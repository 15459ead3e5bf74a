"""check.py - the one way a host test script reports a check, the same lines
as check.h: `ok - NAME`, `FAIL - NAME: WHY`, `skip - NAME: WHY` (a check that
cannot run here, never reported as ok). tests/run_host_tests.py counts them."""

import os
import shutil

failures = 0


def check(ok, name, why=""):
    global failures
    print(f"ok - {name}" if ok else f"FAIL - {name}: {why}", flush=True)
    if not ok:
        failures += 1
    return ok


def check_skipped(name, why):
    print(f"skip - {name}: {why}", flush=True)


def exit_status():
    """0 when every check passed, 1 otherwise."""
    return 1 if failures else 0


def missing_prerequisite(files=(), binaries=(), programs=()):
    """77 (the runner's skip status) after a SKIP line when a test-data file,
    a built binary or an installed program (on PATH) is missing; None when
    everything is there."""
    for path in files:
        if not os.path.exists(path):
            print(f"SKIP: {path} not found (set MODELS_DIR)")
            return 77
    for binary in binaries:
        if not os.access(binary, os.X_OK):
            print(f"SKIP: {binary} not built (make host)")
            return 77
    for program in programs:
        if not shutil.which(program):
            print(f"SKIP: {program} not found (tools/install-deps.sh)")
            return 77
    return None
