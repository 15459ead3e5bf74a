#!/usr/bin/env python3
"""Checks what the Makefile decides, through `make -n` (nothing is built):

- a split GGUF model, MODEL=NAME-00001-of-0000N.gguf, brings its other
  pieces into the ramdisk (MODEL_PIECES), and only its own: not another
  set's pieces, nothing for a model that is not split;
- `make test` runs the python tests with LLAMA_CPP_BIN pointing at a
  llama.cpp build beside the project (LLAMA_CPP_DIR, default ../llama.cpp,
  with build/bin/llama-gguf-split: test_gguf_split.py's extra check), and
  with LLAMA_CPP_BIN empty when there is none;
- `make test`, test-big and test-matrix install the references first;
- `make image` puts the unsigned loader on the stick; SIGN=1 builds the
  kernel's SHA-256 into a loader, signs it with SIGN_KEY/SIGN_CERT and adds
  the certificate; SHIM=1 puts shim first and our signed loader as grubx64.efi.
- `make build-all` builds everything the runners of `make test` need (the
  loader, the kernel, every host tool, host test and fuzzer), and `make test`
  builds it with -j$(nproc) before the first runner starts.

Exit 0 all passed, 1 any failed.
"""
import os
import subprocess
import sys
import tempfile

from check import check, exit_status

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def make_n(*args):
    # The environment's LLAMA_CPP_BIN (make test sets it for this very script) would override the Makefile's choice.
    env = {k: v for k, v in os.environ.items() if k not in ("LLAMA_CPP_BIN", "MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    return subprocess.run(["make", "-n", *args], cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)


def ramdisk_line(out):
    return next((line for line in out.splitlines() if "tools/mkramdisk.sh" in line), "")


def touch(path):
    with open(path, "wb") as f:
        f.write(b"GGUF")


def check_split_pieces(work):
    models = os.path.join(work, "models")
    os.mkdir(models)
    pieces = [os.path.join(models, f"x-{i:05d}-of-00003.gguf") for i in (1, 2, 3)]
    others = [os.path.join(models, "y-00001-of-00002.gguf"), os.path.join(models, "y-00002-of-00002.gguf"),
              os.path.join(models, "x-00002-of-00004.gguf"), os.path.join(models, "plain.gguf")]
    for path in pieces + others:
        touch(path)
    build = "BUILD=" + os.path.join(work, "build")

    r = make_n("image", "MODEL=" + pieces[0], "TOKENIZER=", build)
    line = ramdisk_line(r.stdout)
    check(r.returncode == 0 and line.split()[-3:] == pieces,
          "make -n image MODEL=x-00001-of-00003.gguf puts all 3 pieces in the ramdisk, in order",
          f"exit {r.returncode}: {line!r} {r.stderr[-300:]!r}")
    check(all(os.path.basename(o) not in line for o in others),
          "another set's pieces (y-..., x-...-of-00004) stay out", line)

    r = make_n("image", "MODEL=" + others[3], "TOKENIZER=", build)
    line = ramdisk_line(r.stdout)
    check(r.returncode == 0 and line.endswith(" " + others[3]) and "-of-" not in line,
          "a model that is not split comes alone", f"exit {r.returncode}: {line!r}")

    r = make_n("image", "MODEL=" + pieces[0], "TOKENIZER=", "EXTRA=" + others[3], build)
    line = ramdisk_line(r.stdout)
    check(r.returncode == 0 and line.split()[-4:] == pieces + [others[3]],
          "the pieces come before EXTRA's files", f"exit {r.returncode}: {line!r}")


def python_test_line(out):
    return next((line for line in out.splitlines() if "tests/run_host_tests.py --label python" in line), "")


def check_llama_cpp_detection(work):
    beside = os.path.join(work, "llama.cpp")
    os.makedirs(os.path.join(beside, "build", "bin"))
    touch(os.path.join(beside, "build", "bin", "llama-gguf-split"))
    build = "BUILD=" + os.path.join(work, "build")

    r = make_n("python-test", "LLAMA_CPP_DIR=" + beside, build)
    line = python_test_line(r.stdout)
    check(r.returncode == 0 and line.startswith(f"LLAMA_CPP_BIN={os.path.join(beside, 'build', 'bin')} "),
          "make test passes LLAMA_CPP_BIN when a llama.cpp build is beside the project",
          f"exit {r.returncode}: {line!r} {r.stderr[-300:]!r}")

    r = make_n("python-test", "LLAMA_CPP_DIR=" + os.path.join(work, "nowhere"), build)
    line = python_test_line(r.stdout)
    check(r.returncode == 0 and line.startswith("LLAMA_CPP_BIN= "),
          "without a llama.cpp build, LLAMA_CPP_BIN is empty",
          f"exit {r.returncode}: {line!r}")

    r = make_n("python-test", "LLAMA_CPP_DIR=" + os.path.join(work, "nowhere"), "LLAMA_CPP_BIN=/opt/cpp/bin", build)
    line = python_test_line(r.stdout)
    check(line.startswith("LLAMA_CPP_BIN=/opt/cpp/bin "), "LLAMA_CPP_BIN given to make wins", line)


def mkimage_line(out):
    return next((line for line in out.splitlines() if "tools/mkimage.sh" in line), "")


def check_signing(work):
    b = os.path.join(work, "build")
    build = "BUILD=" + b
    r = make_n("image", build)
    line = mkimage_line(r.stdout)
    check(r.returncode == 0 and f" {b}/BOOTX64.EFI {b}/kernel.elf " in line and "sign-efi" not in r.stdout,
          "make image: the unsigned loader, nothing signed", f"exit {r.returncode}: {line!r} {r.stderr[-300:]!r}")

    r = make_n("image", "SIGN=1", "SIGN_KEY=/k/my.key", "SIGN_CERT=/k/my.crt", build)
    line = mkimage_line(r.stdout)
    signing = f"sh tools/sign-efi.sh /k/my.key /k/my.crt {b}/signed/loader-unsigned.efi {b}/signed/BOOTX64.EFI"
    check(r.returncode == 0 and signing in r.stdout, "make image SIGN=1 signs the loader with SIGN_KEY, SIGN_CERT",
          f"exit {r.returncode}: {r.stdout[-600:]!r} {r.stderr[-300:]!r}")
    check(f"sh tools/gen-kernel-hash.sh {b}/kernel.elf > {b}/signed/kernel_hash.c" in r.stdout,
          "make image SIGN=1 builds the kernel's SHA-256 into that loader", r.stdout[-600:])
    check(f"--esp-file {b}/signed/llmk-owner.cer=llmk-owner.cer" in line and f" {b}/signed/BOOTX64.EFI {b}/kernel.elf " in line,
          "make image SIGN=1: the signed loader and the certificate on the stick", line)

    r = make_n("image", "SHIM=1", build)
    line = mkimage_line(r.stdout)
    check(r.returncode == 0 and " /usr/lib/shim/shimx64.efi.signed " in line
          and f"--esp-file {b}/signed/BOOTX64.EFI=EFI/BOOT/grubx64.efi" in line
          and "--esp-file /usr/lib/shim/mmx64.efi.signed=EFI/BOOT/mmx64.efi" in line,
          "make image SHIM=1: shim as BOOTX64.EFI, our signed loader as grubx64.efi, MokManager beside",
          f"exit {r.returncode}: {line!r} {r.stderr[-300:]!r}")


def check_references_installed(work):
    build = "BUILD=" + os.path.join(work, "build")
    for target in ("test", "test-big", "test-matrix"):
        r = make_n(target, build)
        lines = r.stdout.splitlines()
        install = next((i for i, line in enumerate(lines) if "test_summary.py --install-references" in line), None)
        runner = next((i for i, line in enumerate(lines) if "harness.py" in line or "$(MAKE)" in line
                       or "--no-print-directory" in line), None)
        # make -n still runs test's recursive $(MAKE) line, which may fail here: its order is what counts.
        check(install is not None and (runner is None or install < runner),
              f"make {target} installs the references (tools/install-references.sh) before its tests",
              f"exit {r.returncode}: install at line {install}, tests at line {runner}")


def names(pattern_dir, prefix, suffix=".c"):
    return sorted(f[: -len(suffix)] for f in os.listdir(os.path.join(ROOT, pattern_dir))
                  if f.startswith(prefix) and f.endswith(suffix))


def check_build_all(work):
    build = os.path.join(work, "build")
    r = make_n("-B", "build-all", "BUILD=" + build)
    outputs = set()
    for line in r.stdout.splitlines():
        words = line.split()
        outputs.update(words[i + 1] for i, w in enumerate(words[:-1]) if w == "-o")
        if words and words[-1].endswith(".EFI"):  # objcopy ... loader.so BOOTX64.EFI
            outputs.add(words[-1])
    want = [os.path.join(build, "kernel.elf"), os.path.join(build, "BOOTX64.EFI")]
    want += [os.path.join(build, "host", t) for t in names("tools", "")]
    want += [os.path.join(build, "host", "tests", t) for t in names("tests/host", "test_")]
    want += [os.path.join("build", "fuzz", f) for f in names("tests/fuzz", "fuzz_")]
    missing = [w for w in want if w not in outputs]
    check(r.returncode == 0 and len(want) > 50 and not missing,
          f"make build-all builds the loader, the kernel, every tool, host test and fuzzer ({len(want)} programs)",
          f"exit {r.returncode}, missing {missing[:5]} {r.stderr[-300:]!r}")

    # Under -n, make still runs recipe lines that call $(MAKE) (with -n), so
    # the order of the printed commands is the order make test runs them.
    r = make_n("test", "BUILD=" + build)
    lines = r.stdout.splitlines()
    jobs = os.cpu_count()
    submake = next((i for i, line in enumerate(lines) if f"-j{jobs} build-all" in line), None)
    kernel = next((i for i, line in enumerate(lines) if "-o " + want[0] in line), None)
    runner = next((i for i, line in enumerate(lines) if "tests/run_host_tests.py --label host" in line), None)
    check(None not in (submake, kernel, runner) and submake < kernel < runner,
          f"make test builds build-all with -j{jobs} (nproc) before the first runner",
          f"build-all sub-make at line {submake}, kernel link at {kernel}, host runner at {runner}")


def main():
    with tempfile.TemporaryDirectory() as work:
        check_split_pieces(work)
        check_llama_cpp_detection(work)
        check_references_installed(work)
        check_build_all(work)
    with tempfile.TemporaryDirectory() as work:
        check_signing(work)
    return exit_status()


if __name__ == "__main__":
    sys.exit(main())
