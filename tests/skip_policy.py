"""skip_policy.py - which `skip - ` lines a CI run accepts: only those on
tests/ci_allowed_skips.txt whose CPU flag this machine lacks (a check the
machine cannot run). Every other skip is a failure under CI."""
import os
import re

LIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ci_allowed_skips.txt")
SKIP_LINE = re.compile(r"^skip - (.*?)(?:: (.*))?$")


def cpu_flags(path="/proc/cpuinfo"):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def load(path=LIST):
    """[(cpu flag, name regex, reason)] from the list."""
    entries = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ")]
            if len(parts) != 3:
                raise ValueError(f"{path}:{number}: want 'CPU flag | name regex | reason': {line!r}")
            entries.append((parts[0], re.compile(parts[1]), parts[2]))
    return entries


class Policy:
    def __init__(self, entries=None, flags=None):
        self.entries = load() if entries is None else entries
        self.flags = cpu_flags() if flags is None else flags

    def allowed(self, line):
        """The written reason when CI may accept this skip line, else None."""
        m = SKIP_LINE.match(line.rstrip("\n"))
        if not m:
            return None
        name = m.group(1)
        for flag, pattern, reason in self.entries:
            if flag not in self.flags and pattern.search(name):
                return f"{reason} (no {flag} here)"
        return None
