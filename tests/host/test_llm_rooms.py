#!/usr/bin/env python3
"""test_llm_rooms.py - llm/'s rooms keep to the map in llm/README.md:

- every #include "..." of a file in a room names its own room, or a room or
  file the README's table lets it include (`lib/` counts as a room there);
  nothing of kernel/, boot/, tools/ or tests/;
- inside compute/, a set's folder includes no wider set's folder (scalar,
  sse2, avx2, avx512 in that order);
- no .c file directly in llm/, every llm/ folder has a README.md, and every
  room on disk has its row in the table (and every row its room).

Exit 0 all passed, 1 any failed.
"""
import os
import re
import sys

from check import check, exit_status

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLM = os.path.join(ROOT, "llm")
ROW = re.compile(r"^\|\s*`(\w+)/`\s*\|[^|]*\|([^|]*)\|\s*$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SETS = ["scalar", "sse2", "avx2", "avx512"]


def read_table():
    """{room: set of what it may include ('lib/', 'tensor/', 'model/llama2c.h')}."""
    table = {}
    with open(os.path.join(LLM, "README.md"), encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line.rstrip("\n"))
            if m:
                table[m.group(1)] = set(re.findall(r"`([^`]+)`", m.group(2)))
    return table


def violations(room, allowed):
    bad = []
    for folder, _, files in os.walk(os.path.join(LLM, room)):
        rel_folder = os.path.relpath(folder, LLM).split(os.sep)  # [room] or [room, sub]
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            with open(os.path.join(folder, name), encoding="utf-8") as f:
                includes = INCLUDE.findall(f.read())
            where = "/".join(rel_folder + [name])
            for inc in includes:
                parts = inc.split("/")
                if parts[0] == "lib":
                    ok = "lib/" in allowed
                elif parts[0] == "llm" and len(parts) >= 3:
                    target, rest = parts[1], "/".join(parts[1:])
                    ok = target == room or f"{target}/" in allowed or rest in allowed
                    # compute/<set>/ may use a narrower set's folder, never a wider one's.
                    if ok and target == room == "compute" and len(rel_folder) > 1 and len(parts) > 3:
                        mine, theirs = rel_folder[1], parts[2]
                        if mine in SETS and theirs in SETS and SETS.index(theirs) > SETS.index(mine):
                            ok = False
                else:
                    ok = False
                if not ok:
                    bad.append(f"{where} includes {inc}")
    return bad


def main():
    table = read_table()
    rooms = sorted(d for d in os.listdir(LLM) if os.path.isdir(os.path.join(LLM, d)))
    check(len(table) >= 6 and sorted(table) == rooms, "every llm/ room has its row in llm/README.md's table",
          f"table {sorted(table)}, folders {rooms}")
    for room in sorted(table):
        if room not in rooms:
            continue
        bad = violations(room, table[room])
        check(not bad, f"llm/{room}/ includes only what the table allows ({', '.join(sorted(table[room]))})",
              "; ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else ""))
    loose = sorted(f for f in os.listdir(LLM) if f.endswith(".c"))
    check(not loose, "no .c file directly in llm/", " ".join(loose))
    no_readme = sorted(os.path.relpath(folder, ROOT) for folder, _, files in os.walk(LLM) if "README.md" not in files)
    check(not no_readme, "every llm/ folder has a README.md", " ".join(no_readme))
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
