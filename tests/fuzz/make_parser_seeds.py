#!/usr/bin/env python3
"""Seeds for the loader's and drivers' parsers: make_parser_seeds.py OUT_DIR
writes OUT_DIR/gpt (disk images with a ramdisk partition, the first byte
choosing the block size as tests/fuzz/fuzz_gpt.c reads it) and
OUT_DIR/usb_descriptors (what a keyboard and a hub send), laid out from the
UEFI specification's GPT and USB 2.0's chapters 9 and 11."""
import os
import struct
import sys

RAMDISK_TYPE = bytes.fromhex("76addd c42f6a454ea3c071aa5f798057".replace(" ", ""))


def gpt_disk(block, tar_bytes=600, entries=4, version=1, offset=None):
    """LBA 0 protective (zeros here), LBA 1 header, LBA 2 entries, then the
    partition: the 4 KiB ramdisk header and the tar's first block."""
    entry_blocks = max(1, entries * 128 // block)
    first = 2 + entry_blocks
    offset = 4096 if offset is None else offset
    part_blocks = (offset + tar_bytes + block - 1) // block
    header = b"EFI PART" + struct.pack("<IIII", 0x10000, 92, 0, 0)
    header += struct.pack("<QQQQ", 1, 0, first, first + part_blocks) + bytes(16)
    header += struct.pack("<QIII", 2, entries, 128, 0)
    table = bytearray(entry_blocks * block)
    table[0:16] = bytes(16)  # an unused entry first
    e = RAMDISK_TYPE + bytes(16) + struct.pack("<QQQ", first, first + part_blocks - 1, 0)
    table[128:128 + len(e)] = e
    rd = b"LLMKRDSK" + struct.pack("<IIQ", version, offset, tar_bytes)
    disk = bytes(block) + header.ljust(block, b"\0") + bytes(table) + rd.ljust(4096, b"\0")
    return disk + b"x" * min(tar_bytes, block)


def usb_seeds():
    device = bytes([18, 1, 0x00, 0x02, 0, 0, 0, 64, 0x27, 0x06, 0x01, 0x00, 0, 0, 1, 2, 0, 1])
    config = bytes([9, 2, 34, 0, 1, 1, 0, 0xa0, 50])
    iface = bytes([9, 4, 0, 0, 1, 3, 1, 1, 0])
    hid = bytes([9, 0x21, 0x11, 0x01, 0, 1, 0x22, 63, 0])
    ep = bytes([7, 5, 0x81, 3, 8, 0, 10])
    keyboard = config + iface + hid + ep
    hub_config = bytes([9, 2, 25, 0, 1, 1, 0, 0xe0, 0]) + bytes([9, 4, 0, 0, 1, 9, 0, 0, 0]) + \
        bytes([7, 5, 0x81, 3, 1, 0, 12])
    hub = bytes([9, 0x29, 4, 0x00, 0x00, 50, 0, 0, 0xff])
    super_device = bytes([18, 1, 0x00, 0x03, 0, 0, 0, 9]) + bytes(10)
    bad = bytes([9, 2, 0xff, 0xff, 1, 1, 0, 0, 0, 1, 4, 0xff])
    return {"device": device, "keyboard": keyboard, "hub-config": hub_config, "hub": hub,
            "super-device": super_device, "bad-lengths": bad}


def main():
    out = sys.argv[1]
    os.makedirs(f"{out}/gpt", exist_ok=True)
    os.makedirs(f"{out}/usb_descriptors", exist_ok=True)
    seeds = {"gpt-512": (0, gpt_disk(512)), "gpt-1024": (1, gpt_disk(1024)),
             "gpt-512-empty-tar": (0, gpt_disk(512, tar_bytes=0)),
             "gpt-512-bad-offset": (0, gpt_disk(512, offset=100)),
             "gpt-512-many-entries": (0, gpt_disk(512, entries=16))}
    for name, (selector, disk) in seeds.items():
        with open(f"{out}/gpt/{name}", "wb") as f:
            f.write(bytes([selector]) + disk)
    for name, data in usb_seeds().items():
        with open(f"{out}/usb_descriptors/{name}", "wb") as f:
            f.write(data)


main()
