#!/bin/sh
# install-deps.sh - the Debian/Ubuntu packages to build, boot and test.
set -eu
pkgs="build-essential qemu-system-x86 ovmf gnu-efi nasm mtools dosfstools gdisk python3 python3-numpy clang unifont sbsigntool shim-signed openssl xkb-data libxkbcommon0 libx11-data libjsmn-dev"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
if [ -n "$missing" ]; then
    $sudo apt-get update
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y $missing
fi
# lwIP's source (TCP/IP for the kernel) from Debian's source package, into
# the ignored deps/lwip; the Makefile also runs this on a first build.
sh "$(dirname "$0")/fetch-lwip.sh" "$(dirname "$0")/../deps/lwip"
