#!/bin/sh
# mkramdisk.sh OUT.tar FILE... - the ramdisk: a tar archive of the given
# files under their base names (the kernel reads it in place, lib/tar.c).
#
# GNU format: ustar cannot hold a file of 8 GiB or more, nor a name over
# 100 bytes (tar leaves such a file out and exits 2), while GNU tar writes
# its own format for every size (base-256 size field) and name (a type 'L'
# entry before the file). pax, the other format without limits, names its
# extended headers after tar's process id unless told otherwise.
#
# Fails with a one-line reason, and leaves no archive (not even an older
# OUT.tar), when tar does.
set -eu
out=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$out.tmp"' EXIT
fail() {
    echo "mkramdisk: $*" >&2
    exit 1
}
mkdir "$dir/files"
for f in "$@"; do
    [ -f "$f" ] || fail "no such file: $f"
    name=$(basename "$f")
    [ ! -e "$dir/files/$name" ] || fail "two files named $name: the ramdisk stores base names"
    ln -s "$(cd "$(dirname "$f")" && pwd)/$name" "$dir/files/$name"
done
# --dereference stores the files, not the links; sorted names, fixed owner
# and mtime make the archive reproducible. cp --sparse=always leaves runs of
# zeros as holes, so padding files cost no disk. 1 MiB records (-b 2048)
# instead of 10 KiB: a 4.5 GiB file goes through the pipe in 2.9 s instead
# of 4.5 s. A pipeline's status is its last command's: tar's own goes
# through a file.
rm -f "$out.tmp"
ls "$dir/files" | LC_ALL=C sort >"$dir/names" # one a line: names may hold spaces
{
    (cd "$dir/files" && tar --format=gnu -b 2048 --dereference --owner=0 --group=0 --mtime=@0 \
        --verbatim-files-from -T "$dir/names" -cf -) 2>"$dir/tar.err"
    echo $? >"$dir/tar.status"
} | cp --sparse=always /dev/stdin "$out.tmp" 2>"$dir/cp.err" ||
    fail "cannot write $out.tmp: $(head -n 1 "$dir/cp.err")"
if [ "$(cat "$dir/tar.status")" != 0 ]; then
    rm -f "$out"
    fail "tar failed, no archive written: $(head -n 1 "$dir/tar.err")"
fi
chmod 644 "$out.tmp"
mv "$out.tmp" "$out"
echo "ramdisk: $out ($(wc -c < "$out") bytes: $(tr '\n' ' ' <"$dir/names"))"
