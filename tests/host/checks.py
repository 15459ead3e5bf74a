"""checks.py - the "ok - NAME" / "FAIL - NAME: WHY" lines of the Python host
tests, and the count of failures for their exit status."""

failures = 0


def check(ok, name, why=""):
    global failures
    print(f"ok - {name}" if ok else f"FAIL - {name}: {why}")
    if not ok:
        failures += 1
    return ok
