#!/bin/sh
# mkimage.sh OUT.img BOOTX64.EFI kernel.elf ramdisk.tar boot.cfg
# A GPT disk with one EFI System Partition holding everything; needs no root
# (sgdisk + mtools). The same image boots as a hard disk or a USB stick.
set -eu
out=$1 efi=$2 kernel=$3 ramdisk=$4 cfg=$5
bytes=$(cat "$efi" "$kernel" "$ramdisk" "$cfg" | wc -c)
# FAT32 wants at least ~33 MiB; leave room for FAT tables and slack.
esp_mib=$(( bytes / 1048576 * 11 / 10 + 40 ))
total_mib=$(( esp_mib + 2 ))
rm -f "$out.tmp"
truncate -s ${total_mib}M "$out.tmp"
sgdisk -o -n 1:2048:+${esp_mib}M -t 1:ef00 -c 1:"EFI System" "$out.tmp" > /dev/null
mformat -i "$out.tmp@@1M" -F -v LLMKERNEL ::
mmd -i "$out.tmp@@1M" ::/EFI ::/EFI/BOOT
mcopy -i "$out.tmp@@1M" "$efi" ::/EFI/BOOT/BOOTX64.EFI
mcopy -i "$out.tmp@@1M" "$kernel" ::/kernel.elf
mcopy -i "$out.tmp@@1M" "$ramdisk" ::/ramdisk.tar
mcopy -i "$out.tmp@@1M" "$cfg" ::/boot.cfg
mv "$out.tmp" "$out"
echo "image: $out (${total_mib} MiB, ESP ${esp_mib} MiB)"
