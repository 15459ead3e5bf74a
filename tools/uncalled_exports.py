#!/usr/bin/env python3
# uncalled_exports.py - exported functions of llm/ lib/ kernel/ that no other file names (tests aside):
# candidates to remove or make static. Run after make all host, from the repository root.
# Usage: python3 tools/uncalled_exports.py   (prints "file: name: no caller|used in its own file[; tests: ...]")
"""Exported functions of llm/ lib/ kernel/ that nothing outside their own file calls (tests aside).
Symbols: nm over build/kernel-obj and build/host/obj (defined text symbols). Callers: a word match in the
tracked sources of boot/ kernel/ lib/ llm/ tools/ (assembly too), header declarations and the definition's own file left out."""
import os, re, subprocess, sys, collections
root = sys.argv[1] if len(sys.argv) > 1 else '.'
os.chdir(root)
defs = {}
for objdir in ['build/kernel-obj', 'build/host/obj']:
    for dp, _, fs in os.walk(objdir):
        for f in fs:
            if not f.endswith('.o'): continue
            src = os.path.relpath(os.path.join(dp, f), objdir)[:-2] + '.c'
            if not src.startswith(('llm/', 'lib/', 'kernel/')): continue
            out = subprocess.run(['nm', '--defined-only', os.path.join(dp, f)], capture_output=True, text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) == 3 and parts[1] == 'T': defs.setdefault(parts[2], src)
files = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard', 'boot', 'kernel', 'lib', 'llm', 'tools', 'Makefile'], capture_output=True, text=True).stdout.split()
files = [f for f in files if f.endswith(('.c', '.asm', '.S', '.s', '.ld', 'Makefile'))]
text = {f: open(f, errors='replace').read() for f in files}
tests = {f: open(f, errors='replace').read() for f in subprocess.run(['git', 'ls-files', 'tests'], capture_output=True, text=True).stdout.split() if f.endswith('.c') or f.endswith('.h')}
for name, src in sorted(defs.items(), key=lambda x: (x[1], x[0])):
    pat = re.compile(r'\b' + re.escape(name) + r'\b')
    others = [f for f, t in text.items() if f != src and pat.search(t)]
    if others: continue
    own = len(pat.findall(text.get(src, '')))
    in_tests = [f for f, t in tests.items() if pat.search(t)]
    how = 'used in its own file' if own > 1 else 'no caller'
    print(f'{src}: {name}: {how}' + (f'; tests: {", ".join(sorted(in_tests))}' if in_tests else ''))
