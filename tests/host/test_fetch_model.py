#!/usr/bin/env python3
"""Checks tools/fetch-model.sh against a local file:// mirror (no network):
a file with the right sha256 is downloaded (and kept on a second run), a
wrong checksum is refused and nothing is left behind, an unreachable URL is
one line on stderr with a non-zero exit, and the default list checks the real
checksums (a fake stories15M.bin on a MODEL_BASE_URL mirror is refused). Also
that the Makefile turns to models/stories15M.bin, fetched by the script, when
the test models are absent.

Exit 0 all passed, 1 any failed.
"""
import hashlib
import os
import subprocess
import sys
import tempfile

from check import check, check_skipped, exit_status

SCRIPT = "tools/fetch-model.sh"


def fetch(dest, *args, env=None):
    return subprocess.run(["sh", SCRIPT, dest, *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, **(env or {})))


def one_line_error(r):
    lines = r.stderr.strip().splitlines()
    return r.returncode != 0 and len(lines) == 1 and lines[0].startswith("fetch-model: ") and "Traceback" not in r.stderr


def main():
    with tempfile.TemporaryDirectory() as work:
        mirror, dest = os.path.join(work, "mirror"), os.path.join(work, "models")
        os.mkdir(mirror)
        payload = os.urandom(100_000)
        with open(os.path.join(mirror, "stories15M.bin"), "wb") as f:
            f.write(payload)
        digest = hashlib.sha256(payload).hexdigest()
        url = "file://" + os.path.join(mirror, "stories15M.bin")
        target = os.path.join(dest, "stories15M.bin")

        r = fetch(dest, "stories15M.bin", url, digest)
        with open(target, "rb") as f:
            got = f.read()
        check(r.returncode == 0 and got == payload and "downloading stories15M.bin" in r.stdout,
              "a file with the right sha256 is downloaded, saying so", r.stdout + r.stderr)
        r = fetch(dest, "stories15M.bin", url, digest)
        check(r.returncode == 0 and "is there" in r.stdout and "downloading" not in r.stdout,
              "a second run keeps the checked file", r.stdout + r.stderr)

        os.remove(target)
        r = fetch(dest, "stories15M.bin", url, "0" * 64)
        check(one_line_error(r) and "sha256" in r.stderr and not os.listdir(dest),
              "a wrong checksum is refused in one line and the download removed",
              f"exit {r.returncode}, {r.stderr!r}, left {os.listdir(dest)}")

        r = fetch(dest, "stories15M.bin", "file://" + os.path.join(work, "nowhere", "stories15M.bin"), digest)
        check(one_line_error(r) and "cannot download" in r.stderr and "place stories15M.bin" in r.stderr
              and not os.listdir(dest), "an unreachable URL: one line naming what to place where, exit non-zero",
              f"exit {r.returncode}, {r.stderr!r}")

        r = fetch(dest, env={"MODEL_BASE_URL": "file://" + mirror})
        check(one_line_error(r) and "cd590644d963867a2b6e5a1107f51fad663c41d79c149fbecbbb1f95fa81f49a" in r.stderr
              and not os.listdir(dest), "the default list checks stories15M.bin's real sha256 (a fake is refused)",
              f"exit {r.returncode}, {r.stderr!r}")

        r = subprocess.run(["make", "-n", "SHARED=" + os.path.join(work, "no-shared"), "BUILD=" + work + "/build",
                            work + "/build/ramdisk.tar"], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and "sh tools/fetch-model.sh models" in r.stdout
              and "models/stories15M.bin models/tokenizer.bin" in r.stdout,
              "without the test models, make fetches models/stories15M.bin and tokenizer.bin for the ramdisk",
              r.stdout[-400:] + r.stderr[-400:])
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
