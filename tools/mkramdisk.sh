#!/bin/sh
# mkramdisk.sh OUT.tar FILE... - the ramdisk: a USTAR archive of the given
# files under their base names (the kernel reads it in place).
set -eu
out=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for f in "$@"; do
    [ -f "$f" ] || { echo "mkramdisk: no such file: $f" >&2; exit 1; }
    ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$dir/$(basename "$f")"
done
# --dereference stores the files, not the links; sorted names, fixed owner
# and mtime make the archive reproducible. cp --sparse=always leaves runs of
# zeros as holes, so padding files cost no disk.
(cd "$dir" && tar --format=ustar --dereference --owner=0 --group=0 --mtime=@0 \
    -cf - $(ls "$dir" | sort)) | cp --sparse=always /dev/stdin "$out.tmp"
chmod 644 "$out.tmp"
mv "$out.tmp" "$out"
echo "ramdisk: $out ($(wc -c < "$out") bytes: $(ls "$dir" | sort | tr '\n' ' '))"
