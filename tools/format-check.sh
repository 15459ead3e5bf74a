#!/bin/sh
# format-check.sh - is every tracked C file under boot kernel lib llm tests
# tools formatted as .clang-format says? Prints each file that is not, with
# clang-format's first complaint, and exits 1 if any; 0 when all are clean.
# Generated files (GENERATED in their first lines) are skipped: their
# generator decides their layout.
# Usage: sh tools/format-check.sh   (from the repository root; make format-check)
CLANG_FORMAT=${CLANG_FORMAT:-clang-format}
command -v "$CLANG_FORMAT" >/dev/null || { echo "format-check: $CLANG_FORMAT not found (sh tools/install-deps.sh)"; exit 2; }
bad=0
total=0
for f in $(git ls-files -- 'boot/*.[ch]' 'kernel/*.[ch]' 'lib/*.[ch]' 'llm/*.[ch]' 'tests/*.[ch]' 'tools/*.[ch]'); do
    [ -f "$f" ] || continue
    head -n 3 "$f" | grep -q GENERATED && continue
    total=$((total + 1))
    out=$("$CLANG_FORMAT" --dry-run --Werror "$f" 2>&1) && continue
    bad=$((bad + 1))
    printf '%s\n' "$out" | head -n 1
done
if [ "$bad" -gt 0 ]; then
    echo "format-check: $bad of $total files need clang-format -i"
    exit 1
fi
echo "format-check: $total files clean"
