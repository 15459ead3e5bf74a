#!/bin/sh
# mkimage.sh [--ramdisk-partition] [--esp-file SRC=PATH]... OUT.img BOOTX64.EFI kernel.elf ramdisk.tar boot.cfg
#
# --esp-file SRC=PATH also stores the host file SRC as PATH on the ESP (the
# Secure Boot pieces: shim's second stage, MokManager, our certificate).
# A GPT disk image; needs no root (sgdisk + mtools + dd). The same image
# boots as a hard disk or a USB stick: `dd` of it to a stick is the install.
#
# Default: one EFI System Partition (FAT32) holding everything, the ramdisk
# as the file ramdisk.tar (FAT32 caps a file at 4 GiB - 1 byte).
# --ramdisk-partition: a small ESP with the loader, kernel and boot.cfg, and
# the ramdisk in a partition of its own (no size limit but the disk's):
#   type GUID  C4DDAD76-6A2F-4E45-A3C0-71AA5F798057, name "llmkernel-ramdisk"
#   bytes 0..4095: header, little-endian: "LLMKRDSK" | u32 version 1 |
#                  u32 offset of the tar (4096) | u64 size of the tar in bytes
#   bytes 4096..:  the tar, as tools/mkramdisk.sh wrote it
# The loader reads only the header's size, so the partition may be larger.
#
# Fails with a one-line reason, and leaves no image, when something cannot
# be stored: an image without the model must never look like a good one.
set -eu
RAMDISK_TYPE_GUID=C4DDAD76-6A2F-4E45-A3C0-71AA5F798057
RAMDISK_PART_NAME=llmkernel-ramdisk
HEADER_BYTES=4096
FAT32_FILE_MAX=4294967295
MIB=1048576

partition=0
extra_files=""
while [ $# -gt 0 ]; do
    case $1 in
    --ramdisk-partition) partition=1; shift ;;
    --esp-file) extra_files="$extra_files $2"; shift 2 ;;
    *) break ;;
    esac
done
if [ $# -ne 5 ]; then
    echo "usage: mkimage.sh [--ramdisk-partition] [--esp-file SRC=PATH]... OUT.img BOOTX64.EFI kernel.elf ramdisk.tar boot.cfg" >&2
    exit 2
fi
out=$1 efi=$2 kernel=$3 ramdisk=$4 cfg=$5

fail() {
    echo "mkimage: $*" >&2
    exit 1
}
# Whatever stops the script, no half-written image stays behind.
trap 'rm -f "$out.tmp"' EXIT

for f in "$efi" "$kernel" "$ramdisk" "$cfg" $(for e in $extra_files; do echo "${e%%=*}"; done); do
    [ -f "$f" ] || fail "no such file: $f"
done
size_of() { wc -c < "$1" | tr -d ' '; }

if [ $partition = 1 ]; then esp_files="$efi $kernel $cfg"; else esp_files="$efi $kernel $ramdisk $cfg"; fi
for e in $extra_files; do esp_files="$esp_files ${e%%=*}"; done
esp_bytes=0
for f in $esp_files; do
    n=$(size_of "$f")
    if [ "$n" -gt $FAT32_FILE_MAX ]; then
        hint=""
        [ "$f" = "$ramdisk" ] && hint=" (--ramdisk-partition, as make image uses, has no such limit)"
        fail "$f is $n bytes: a FAT32 file holds at most $FAT32_FILE_MAX$hint"
    fi
    esp_bytes=$((esp_bytes + n))
done

# FAT32 wants at least ~33 MiB; leave room for FAT tables and slack.
esp_mib=$((esp_bytes / MIB * 11 / 10 + 40))
rd_mib=0
if [ $partition = 1 ]; then
    tar_bytes=$(size_of "$ramdisk")
    rd_mib=$(((HEADER_BYTES + tar_bytes + MIB - 1) / MIB))
fi
total_mib=$((1 + esp_mib + rd_mib + 1)) # GPT at both ends

rm -f "$out.tmp"
truncate -s ${total_mib}M "$out.tmp"
if [ $partition = 1 ]; then
    rd_start=$((2048 + esp_mib * 2048)) # in 512-byte sectors, 1 MiB aligned
    sgdisk -o -n 1:2048:+${esp_mib}M -t 1:ef00 -c 1:"EFI System" \
        -n 2:$rd_start:+${rd_mib}M -t 2:$RAMDISK_TYPE_GUID -c 2:$RAMDISK_PART_NAME \
        "$out.tmp" > /dev/null || fail "sgdisk cannot write the partition table"
else
    sgdisk -o -n 1:2048:+${esp_mib}M -t 1:ef00 -c 1:"EFI System" "$out.tmp" > /dev/null ||
        fail "sgdisk cannot write the partition table"
fi

esp="$out.tmp@@1M"
mformat -i "$esp" -F -v LLMKERNEL :: || fail "mformat cannot format the ESP"
mmd -i "$esp" ::/EFI ::/EFI/BOOT || fail "mmd cannot make ::/EFI/BOOT"

# mcopy exits 0 even when it refuses a file ("File too big"): check that
# every file arrived with its full size.
store() { # store HOST_FILE ESP_PATH
    msg=$(mcopy -i "$esp" "$1" "::/$2" 2>&1) || fail "cannot store $1 on the ESP: $msg"
    stored=$(mdir -i "$esp" "::/$2" 2>/dev/null | sed -n 's/^ *1 file *\([0-9 ]*\) bytes$/\1/p' | tr -d ' ')
    [ "$stored" = "$(size_of "$1")" ] ||
        fail "cannot store $1 on the ESP (${stored:-no} bytes stored): $(echo $msg)"
}
store "$efi" EFI/BOOT/BOOTX64.EFI
store "$kernel" kernel.elf
store "$cfg" boot.cfg
for e in $extra_files; do store "${e%%=*}" "${e#*=}"; done

le_bytes() { # le_bytes VALUE COUNT: VALUE as COUNT little-endian bytes
    v=$1 i=0
    while [ $i -lt "$2" ]; do
        printf "\\$(printf %03o $((v & 255)))"
        v=$((v >> 8)) i=$((i + 1))
    done
}

if [ $partition = 1 ]; then
    part_sectors=$(sgdisk -i 2 "$out.tmp" | sed -n 's/^Partition size: \([0-9]*\) sectors.*/\1/p')
    [ $((${part_sectors:-0} * 512)) -ge $((HEADER_BYTES + tar_bytes)) ] ||
        fail "the ramdisk partition (${part_sectors:-0} sectors) is too small for $ramdisk ($tar_bytes bytes)"
    start_byte=$((rd_start * 512))
    { printf LLMKRDSK; le_bytes 1 4; le_bytes $HEADER_BYTES 4; le_bytes "$tar_bytes" 8; } |
        dd of="$out.tmp" bs=32 seek=$start_byte oflag=seek_bytes conv=notrunc status=none ||
        fail "cannot write the ramdisk header"
    # conv=sparse skips zero blocks: the image stays as sparse as the tar.
    dd if="$ramdisk" of="$out.tmp" bs=4M seek=$((start_byte + HEADER_BYTES)) oflag=seek_bytes \
        conv=notrunc,sparse status=none || fail "cannot write $ramdisk into the ramdisk partition"
else
    store "$ramdisk" ramdisk.tar
fi

mv "$out.tmp" "$out"
if [ $partition = 1 ]; then
    echo "image: $out (${total_mib} MiB: ESP ${esp_mib} MiB, ramdisk partition ${rd_mib} MiB)"
else
    echo "image: $out (${total_mib} MiB, ESP ${esp_mib} MiB)"
fi
