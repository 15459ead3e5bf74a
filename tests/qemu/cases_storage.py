"""cases_storage.py - QEMU cases for where the ramdisk lives: its own GPT
partition (what make image writes) booted as a disk and as a USB stick, a
partition too small for its tar, ramdisks over 4 GiB and 8 GiB (make
test-big), tools/mkimage.sh refusing a file it cannot store and
tools/mkramdisk.sh refusing to write an archive when tar fails."""
import os
import re
import subprocess
import sys

from cases_boot import boot_to_prompt
from cases_llm import answer, first_difference, golden, set_all

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CFG = "model=stories260K.bin\ntokenizer=tok512.bin\n"
PARTITION_READ = re.compile(r"loader: ramdisk partition: (\d+) MiB in (\d+) ms \((\d+) MB/s\)")
PROGRESS = re.compile(r"loader: reading the ramdisk: (\d+)% \((\d+) of \d+ MiB, (\d+) MB/s, (\d+) s left\)")
BIG_PAD_BYTES = 4608 << 20  # 4.5 GiB of zeros: past FAT32's and 32-bit limits
HUGE_PAD_BYTES = (9 << 30) + 3  # 9 GiB: past ustar's 8 GiB size field (and not a whole block)
BIG_ENV = "LLMK_BIG_TESTS"  # set by make test-big


def skip(ctx, reason):
    # Skip lives in the harness script (__main__), the module Context comes from.
    return sys.modules[type(ctx).__module__].Skip(reason)


def small_files(ctx):
    return [ctx.model("stories260K.bin"), ctx.model("tok512.bin")]


def partition_image(ctx, name="partition", extra_files=()):
    return ctx.image(name, small_files(ctx) + list(extra_files), CFG, ramdisk_partition=True)


def sparse_file(ctx, name, size):
    path = os.path.join(ctx.image_dir, name)
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def allocated_bytes(path):
    return os.stat(path).st_blocks * 512


def assert_golden_answer(vm, ctx):
    """The greedy answer the FAT route is checked against (shared golden text)."""
    set_all(vm, temp=0, steps=200)
    text, stats = answer(vm, "Once upon a time")
    want = golden(ctx, "stories260K__once_upon_a_time.txt")
    assert text == want, f"answer from the partition ramdisk: {first_difference(text, want)}"
    return stats


def check_progress_pace(progress, read_ms):
    """The first line once the read has taken a second (its MiB over its MB/s
    give the time it was printed at), then one per two seconds at most."""
    first_s = int(progress[0][1]) * 1.048576 / max(1, int(progress[0][2]))
    assert 0.9 <= first_s <= 1.9, f"first progress line after {first_s:.2f} s, not about 1 s: {progress[:2]}"
    assert len(progress) <= 1 + read_ms // 2000, f"{len(progress)} progress lines in a {read_ms} ms read"


def test_ramdisk_partition_answers(ctx):
    img = partition_image(ctx)
    with boot_to_prompt(ctx, image=img) as vm:
        m = PARTITION_READ.search(vm.text())
        assert m, f"no partition read line: {vm.text()[-1500:]!r}"
        assert int(m.group(2)) >= 1000 or "loader: reading" not in vm.text(), \
            f"progress lines for a {m.group(2)} ms read: {vm.text()[-1500:]!r}"
        assert "stories260K.bin" in vm.command("/ls")
        assert_golden_answer(vm, ctx)
    # USB mass storage: the loader reaches the partition through another Block I/O.
    with boot_to_prompt(ctx, image=img, usb_stick=True) as vm:
        assert PARTITION_READ.search(vm.text()), f"no partition read from the stick: {vm.text()[-1500:]!r}"
        out = vm.command("/ls")
        assert "stories260K.bin" in out and "tok512.bin" in out, f"/ls after USB boot: {out!r}"


def gpt_field(img, number, label):
    out = subprocess.run(["sgdisk", "-i", str(number), img], stdout=subprocess.PIPE, check=True).stdout.decode()
    return re.search(label + r": (\S+)", out).group(1)


def test_ramdisk_partition_too_small_for_its_tar(ctx):
    img = partition_image(ctx, "partition-too-small")
    # Shrink the partition to 256 KiB under its 1 MiB tar; the header still claims the whole tar.
    start = int(gpt_field(img, 2, "First sector"))
    type_guid = gpt_field(img, 2, "Partition GUID code")
    subprocess.run(["sgdisk", "-d", "2", "-n", f"2:{start}:+256K", "-t", f"2:{type_guid}",
                    "-c", "2:llmkernel-ramdisk", img], stdout=subprocess.DEVNULL, check=True)
    with boot_to_prompt(ctx, image=img) as vm:
        log = vm.text()
        assert re.search(r"ramdisk partition \(262144 bytes\) is too small for its tar \(\d+ bytes", log), \
            f"no plain message about the short partition: {log[-1500:]!r}"
        assert "booting without a ramdisk" in log
        out = vm.command("/ls")
        assert "stories260K.bin" not in out, f"/ls lists files of a refused ramdisk: {out!r}"
        assert vm.command("/echo alive").strip().endswith("alive")


def test_ramdisk_bigger_than_ram(ctx):
    """Both layouts: the loader names the figures and the shell runs without models."""
    pad = sparse_file(ctx, "pad-400M.bin", 400 << 20)
    for in_partition in (True, False):
        img = ctx.image(f"bigger-than-ram-{in_partition}", small_files(ctx) + [pad], CFG,
                        ramdisk_partition=in_partition)
        with boot_to_prompt(ctx, image=img, memory="256M") as vm:
            log = vm.text()
            m = re.search(r"loader: not enough RAM for (the ramdisk|\\ramdisk\.tar): it needs (\d+) MiB in one "
                          r"piece; free RAM is (\d+) MiB, the largest free block (\d+) MiB", log)
            assert m, f"no plain message about RAM (partition {in_partition}): {log[-1500:]!r}"
            assert int(m.group(2)) >= 400 and int(m.group(3)) < 256, f"figures: {m.group(0)!r}"
            assert "booting without a ramdisk" in log
            out = vm.command("/ls")
            assert "stories260K.bin" not in out, f"/ls lists files of an unread ramdisk: {out!r}"


def test_mkimage_refuses_file_fat32_cannot_hold(ctx):
    work = os.path.join(ctx.image_dir, "refused")
    os.makedirs(work, exist_ok=True)
    big = sparse_file(ctx, "refused/huge.tar", BIG_PAD_BYTES)
    cfg = os.path.join(work, "boot.cfg")
    with open(cfg, "w") as f:
        f.write(CFG)
    out = os.path.join(work, "out.img")
    build = os.path.join(ROOT, "build")
    r = subprocess.run(["sh", os.path.join(ROOT, "tools/mkimage.sh"), out, os.path.join(build, "BOOTX64.EFI"),
                        os.path.join(build, "kernel.elf"), big, cfg],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = r.stderr.decode()
    assert r.returncode != 0, f"mkimage stored a {BIG_PAD_BYTES}-byte file on FAT32: {r.stdout!r}"
    assert err.count("\n") == 1 and err.startswith("mkimage: ") and "FAT32" in err, f"reason: {err!r}"
    left = [n for n in os.listdir(work) if n.startswith("out.img")]
    assert not left, f"a failed mkimage left {left}"


def wait_big_read(vm, min_bytes, timeout):
    """Waits for the prompt after a partition read of at least min_bytes and
    prints its figures; returns the read line's match."""
    vm.wait_prompt(timeout=timeout)
    m = PARTITION_READ.search(vm.text())
    assert m and int(m.group(1)) >= min_bytes >> 20, f"partition read: {vm.text()[-1500:]!r}"
    print(f"  {m.group(1)} MiB read in {int(m.group(2)) / 1000:.1f} s ({m.group(3)} MB/s); "
          f"prompt {vm.time_of(vm.cursor - 1) - vm.start_time:.0f} s after launch")
    return m


def test_mkramdisk_refuses_when_tar_fails(ctx):
    """A tar that writes part of an archive and exits 2 (as GNU tar does on a
    file it cannot read or store): one line of reason, no archive at all."""
    work = os.path.join(ctx.image_dir, "tar-fails")
    os.makedirs(os.path.join(work, "bin"), exist_ok=True)
    fake_tar = os.path.join(work, "bin", "tar")
    with open(fake_tar, "w") as f:
        f.write("#!/bin/sh\nhead -c 20480 /dev/zero\n"
                "echo 'tar: model.gguf: Cannot open: Permission denied' >&2\n"
                "echo 'tar: Exiting with failure status due to previous errors' >&2\nexit 2\n")
    os.chmod(fake_tar, 0o755)
    out = os.path.join(work, "ramdisk.tar")
    with open(out, "w") as f:
        f.write("an older archive")
    env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ["PATH"])
    r = subprocess.run(["sh", os.path.join(ROOT, "tools/mkramdisk.sh"), out, ctx.model("stories260K.bin")],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    err = r.stderr.decode()
    assert r.returncode != 0, f"mkramdisk succeeded with a failing tar: {r.stdout!r}"
    assert err.count("\n") == 1 and err.startswith("mkramdisk: tar failed") and "Permission denied" in err, \
        f"reason: {err!r}"
    left = [n for n in os.listdir(work) if n.startswith("ramdisk.tar")]
    assert not left, f"a failed mkramdisk left {left}"


def test_big_ramdisk_over_8gib_long_name(ctx):
    """make test-big: a 9 GiB file (sparse zeros), which ustar cannot store,
    then the model under a 200-byte name (ustar's limit is 100), in the GNU
    tar mkramdisk.sh writes; the model's data starts past 9 GiB of archive."""
    if not os.environ.get(BIG_ENV):
        raise skip(ctx, f"reads 9 GiB under TCG: run by make test-big ({BIG_ENV}=1)")
    pad = sparse_file(ctx, "huge-padding.bin", HUGE_PAD_BYTES)  # sorts before the model
    long_name = "stories260K-" + "x" * 184 + ".bin"
    model = os.path.join(ctx.image_dir, long_name)
    if not os.path.exists(model):
        os.symlink(ctx.model("stories260K.bin"), model)
    img = ctx.image("huge", [pad, model, ctx.model("tok512.bin")],
                    f"model={long_name}\ntokenizer=tok512.bin\n", ramdisk_partition=True)
    assert allocated_bytes(img) < (64 << 20), f"image not sparse: {allocated_bytes(img)} bytes on disk"
    # The first tar header, read here: a GNU base-256 size (0x80, then big-endian).
    with open(img, "rb") as f:
        f.seek(int(gpt_field(img, 2, "First sector")) * 512 + 4096)
        header = f.read(512)
    assert header[:16].rstrip(b"\0") == b"huge-padding.bin" and header[124] == 0x80 and \
        int.from_bytes(header[125:136], "big") == HUGE_PAD_BYTES, f"first header: {header[:140]!r}"
    vm = ctx.boot(image=img, memory="20G")
    with vm:
        wait_big_read(vm, HUGE_PAD_BYTES, timeout=1200)
        out = vm.command("/ls")
        assert re.search(rf"\b{HUGE_PAD_BYTES}  huge-padding\.bin", out), f"/ls: {out!r}"
        size = os.path.getsize(ctx.model("stories260K.bin"))
        assert re.search(rf"\b{size}  {long_name}", out), f"/ls: {out!r}"
        assert_golden_answer(vm, ctx)


def test_big_ramdisk_over_4gib(ctx):
    """make test-big: a 4.5 GiB ramdisk (sparse zeros before the model) in its
    partition, read into -m 8G (q35 puts 2 GiB below 4 GiB, the rest above: a
    4.5 GiB block needs 8G); the model then lives above 4 GiB."""
    if not os.environ.get(BIG_ENV):
        raise skip(ctx, f"reads 4.5 GiB under TCG: run by make test-big ({BIG_ENV}=1)")
    pad = sparse_file(ctx, "padding.bin", BIG_PAD_BYTES)  # sorts before the model in the tar
    img = partition_image(ctx, "big", [pad])
    assert os.path.getsize(img) > BIG_PAD_BYTES
    assert allocated_bytes(img) < (64 << 20), f"image not sparse: {allocated_bytes(img)} bytes on disk"
    vm = ctx.boot(image=img, memory="8G")
    with vm:
        m = wait_big_read(vm, BIG_PAD_BYTES, timeout=900)
        progress = PROGRESS.findall(vm.text())
        assert progress, f"no progress lines during a {m.group(2)} ms read"
        assert [int(p[0]) for p in progress] == sorted(int(p[0]) for p in progress), f"progress {progress}"
        check_progress_pace(progress, int(m.group(2)))
        out = vm.command("/ls")
        assert "padding.bin" in out and "stories260K.bin" in out, f"/ls: {out!r}"
        assert_golden_answer(vm, ctx)


def test_bench_qemu_ramdisk_figures(ctx):
    """tools/bench_qemu.py --ramdisk-mib (issue 12: the read speed in MB/s, launch to prompt) on a 64 MiB
    ramdisk, and the read speed of its other boots too: the tool runs and finds its figures."""
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools/bench_qemu.py"), "--shared", ctx.shared,
                        "--ovmf", ctx.ovmf, "--boots", "1", "--ramdisk-mib", "64"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=600)
    out = r.stdout.decode(errors="replace")
    assert r.returncode == 0, f"bench_qemu.py failed: {out[-1500:]}"
    m = re.search(r"^ramdisk (\d+) MiB \(-m 2G\): launch to prompt median ([0-9.]+) s", out, re.M)
    assert m and 60 <= int(m.group(1)) <= 64 and float(m.group(2)) > 0, f"no 64 MiB launch figure: {out!r}"
    reads = re.findall(r"^ramdisk read \(loader, partition\): (?:median )?(\d+ MB/s|under 1 ms)", out, re.M)
    assert len(reads) == 2 and reads[0] != "0 MB/s", f"want the read speed of both boots: {out!r}"


CASES = [
    test_ramdisk_partition_answers,
    test_ramdisk_partition_too_small_for_its_tar,
    test_ramdisk_bigger_than_ram,
    test_mkimage_refuses_file_fat32_cannot_hold,
    test_big_ramdisk_over_4gib,
    test_mkramdisk_refuses_when_tar_fails,
    test_big_ramdisk_over_8gib_long_name,
    test_bench_qemu_ramdisk_figures,
]
