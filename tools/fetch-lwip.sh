#!/bin/sh
# fetch-lwip.sh DIR - lwIP's source from Debian (source package lwip,
# 2.1.3 in Debian 12) unpacked into DIR, without touching the machine's apt
# configuration: a private deb-src list, apt state and cache under DIR.
# The kernel builds lwIP's core from DIR (nothing of lwIP is committed).
set -eu
dir=${1:-deps/lwip}
[ -f "$dir/src/core/tcp.c" ] && exit 0
mkdir -p "$dir.apt/lists/partial" "$dir.apt/archives/partial" "$dir.apt/sources"
apt_dir=$(cd "$dir.apt" && pwd)
mirror=$(sed -n 's/^URIs: *//p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
cat > "$apt_dir/sources/lwip.sources" <<SRC
Types: deb-src
URIs: ${mirror:-http://deb.debian.org/debian}
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
set -- -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$apt_dir/sources" \
    -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache::Archives="$apt_dir/archives" \
    -o Debug::NoLocking=1
apt-get "$@" update >/dev/null
(cd "$apt_dir" && apt-get "$@" source --download-only lwip >/dev/null)
orig=$(ls "$apt_dir"/lwip_*.orig.tar.* | head -n 1)
mkdir -p "$dir"
tar -xf "$orig" -C "$dir" --strip-components=1
echo "lwip: $(basename "$orig") unpacked into $dir"
