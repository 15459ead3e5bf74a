"""check.py - the one way a host test script reports a check, the same lines
as check.h: `ok - NAME`, `FAIL - NAME: WHY`, `skip - NAME: WHY` (a check that
cannot run here, never reported as ok). tests/run_host_tests.py counts them."""

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
