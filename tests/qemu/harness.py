#!/usr/bin/env python3
"""harness.py - the QEMU test harness: boots disk images of our kernel under
OVMF and checks what a user would see on the serial console and the screen.

    python3 tests/qemu/harness.py [--shared ../shared] [-k SUBSTRING] [--list]

Each case prints `ok - NAME (secs)`, `FAIL - NAME: reason` or `skip - NAME:
reason` (its test data is missing); the last line is `qemu: N passed,
N failed, N skipped`. Exit status 1 if any case failed. With the environment
variable CI set, missing test data fails the case instead of skipping it.
"""
import argparse
import os
import shutil
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from test_summary import in_ci, skip_banner, summary_line, write_summary  # noqa: E402
from vm import VM  # noqa: E402
import cases_boot  # noqa: E402
import cases_llm  # noqa: E402
import cases_usb  # noqa: E402
import cases_smp  # noqa: E402
import cases_screen  # noqa: E402
import cases_gguf  # noqa: E402
import cases_robust  # noqa: E402
import cases_parallel  # noqa: E402
import cases_robust_gguf  # noqa: E402
import cases_storage  # noqa: E402
import cases_big_models  # noqa: E402
import cases_context  # noqa: E402
import cases_gguf_split  # noqa: E402
import cases_hardware  # noqa: E402
import cases_matrix  # noqa: E402
import cases_moe  # noqa: E402
import cases_gemma3  # noqa: E402
import cases_chat_templates  # noqa: E402
import cases_half_weights  # noqa: E402
import cases_secure_boot  # noqa: E402
import cases_api  # noqa: E402
import cases_api_load  # noqa: E402
import cases_net  # noqa: E402
import cases_keymap  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")


class Context:
    """What every case gets: paths, and images built on demand."""

    def __init__(self, shared, ovmf):
        self.shared = os.path.abspath(shared)
        self.models = os.path.join(self.shared, "models")
        self.ovmf = ovmf
        # Per run, so that two harness runs never rewrite each other's images.
        self.image_dir = os.path.join(BUILD, "test-images", str(os.getpid()))
        os.makedirs(self.image_dir, exist_ok=True)
        self.images = {}

    def model(self, name):
        path = os.path.join(self.models, name)
        if not os.path.exists(path):
            raise Skip(f"test data missing: {path}")
        return path

    def image(self, name, files=(), cfg=None, ramdisk_name="ramdisk.tar", kernel=None,
              ramdisk_partition=False, loader=None, esp_files=()):
        """Builds build/test-images/NAME.img: the loader, the kernel, a ramdisk
        of `files` (host paths) and boot.cfg text `cfg` (None: no boot.cfg).
        ramdisk_partition: the ramdisk in its own GPT partition (as make image
        does) instead of the file ramdisk_name on the ESP. loader: another
        EFI/BOOT/BOOTX64.EFI; esp_files: more (host path, ESP path) pairs."""
        if name in self.images:
            return self.images[name]
        work = os.path.join(self.image_dir, name)
        os.makedirs(work, exist_ok=True)
        ramdisk = os.path.join(work, ramdisk_name)
        if files:
            run(["sh", os.path.join(ROOT, "tools/mkramdisk.sh"), ramdisk] + list(files))
        else:
            open(ramdisk, "wb").close()
        cfg_path = os.path.join(work, "boot.cfg")
        with open(cfg_path, "w", encoding="latin-1") as f:
            f.write(cfg or "")
        img = os.path.join(self.image_dir, name + ".img")
        layout = ["--ramdisk-partition"] if ramdisk_partition else []
        for src, dest in esp_files:
            layout += ["--esp-file", f"{src}={dest}"]
        run(["sh", os.path.join(ROOT, "tools/mkimage.sh")] + layout + [img,
             loader or os.path.join(BUILD, "BOOTX64.EFI"), kernel or os.path.join(BUILD, "kernel.elf"),
             ramdisk, cfg_path])
        if cfg is None:  # an image without boot.cfg
            run(["mdel", "-i", img + "@@1M", "::/boot.cfg"])
        self.images[name] = img
        return img

    def default_image(self):
        return self.image("default", [self.model("stories260K.bin"), self.model("tok512.bin")],
                          "ramdisk=ramdisk.tar\nmodel=stories260K.bin\ntokenizer=tok512.bin\n")

    def boot(self, image=None, **kw):
        vm = VM(image or self.default_image(), self.ovmf, **kw)
        return vm


class Skip(Exception):
    pass

BIG_ENV = "LLMK_BIG_TESTS"  # set by make test-big
MATRIX_ENV = "LLMK_MATRIX_TESTS"  # set by make test-matrix


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stdout.decode(errors='replace')}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--ovmf", default="/usr/share/ovmf/OVMF.fd")
    ap.add_argument("-k", dest="filter", default="")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()

    cases = []
    for module in (cases_boot, cases_llm, cases_usb, cases_smp, cases_screen, cases_gguf, cases_robust,
                   cases_parallel, cases_robust_gguf, cases_storage, cases_big_models, cases_context,
                   cases_gguf_split, cases_hardware, cases_matrix,
                   cases_moe,
                   cases_gemma3,
                   cases_chat_templates,
                   cases_keymap,
                   cases_half_weights,
                   cases_secure_boot,
                   cases_api,
                   cases_api_load,
                   cases_net,
                   ):
        cases += module.CASES
    cases = [c for c in cases if args.filter in c.__name__]
    # The test_big_ cases are make test-big's, not make test's: left out here
    # (not skipped, so a CI run of make test has nothing missing to fail on).
    if not os.environ.get(BIG_ENV):
        big = [c for c in cases if c.__name__.startswith("test_big_")]
        cases = [c for c in cases if not c.__name__.startswith("test_big_")]
        if big:
            print(f"note: {len(big)} test_big_ cases are run by make test-big ({BIG_ENV}=1), not here")
    if not os.environ.get(MATRIX_ENV):
        cases = [c for c in cases if not c.__name__.startswith("test_matrix_")]
    if args.list:
        for c in cases:
            print(c.__name__)
        return 0
    for need in ("BOOTX64.EFI", "kernel.elf"):
        if not os.path.exists(os.path.join(BUILD, need)):
            print(f"FAIL - build/{need} is missing: run make first")
            return finish(0, 1, 0)
    if not os.path.isdir(os.path.join(args.shared, "models")):
        missing = f"{args.shared}/models is absent: the QEMU tests need the shared test models"
        if in_ci():
            print(f"FAIL - {missing} (CI is set: missing test data is a failure)")
            return finish(0, 1, 0)
        skip_banner(f"{missing}; all {len(cases)} QEMU cases skipped")
        return finish(0, 0, len(cases))

    ctx = Context(args.shared, args.ovmf)
    passed = failed = skipped = 0
    t_all = time.monotonic()
    for case in cases:
        t0 = time.monotonic()
        try:
            case(ctx)
        except Skip as e:
            if in_ci():
                failed += 1
                print(f"FAIL - {case.__name__}: {e} (CI is set: missing test data is a failure)", flush=True)
            else:
                skipped += 1
                print(f"skip - {case.__name__}: {e}", flush=True)
            continue
        except Exception as e:  # noqa: BLE001 - every failure is reported the same way
            failed += 1
            detail = str(e) if isinstance(e, AssertionError) or e.__class__.__name__ == "VMError" \
                else traceback.format_exc()
            print(f"FAIL - {case.__name__}: {detail}", flush=True)
            continue
        passed += 1
        print(f"ok - {case.__name__} ({time.monotonic() - t0:.1f}s)", flush=True)
    print(f"qemu harness took {time.monotonic() - t_all:.0f}s")
    if not failed:
        shutil.rmtree(ctx.image_dir, ignore_errors=True)
    return finish(passed, failed, skipped)


def finish(passed, failed, skipped):
    """Prints (and records for `make test`) the closing line; the exit status."""
    line = summary_line("qemu", passed, failed, skipped)
    write_summary("qemu", line)
    print(line, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
