"""cases_secure_boot.py - QEMU cases for Secure Boot (docs/hardware.md):
OVMF_CODE_4M.secboot.fd with a copy of a variable store that has Secure Boot
on. With an owner key from tools/make-keys.sh (make keys) added to db by
tools/ovmf_vars_enroll_db.py, our loader signed with it boots and answers;
an unsigned loader and one signed with another key are refused by the
firmware, a kernel changed by one byte by our loader, and nothing of ours
runs. With Microsoft's keys (OVMF_VARS_4M.ms.fd), Debian's signed shim
starts, refuses our loader until its certificate is enrolled as a MOK, and
MokManager's enrolment is driven over the serial console."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from cases_llm import answer, first_difference, golden, set_all
from checks import assert_no_panic

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, "build")
# The loader with the kernel's SHA-256 built in (make build/signed/loader-unsigned.efi).
HASHED_LOADER = os.path.join(BUILD, "signed", "loader-unsigned.efi")
OVMF_DIR = "/usr/share/OVMF"
SECBOOT_CODE = os.path.join(OVMF_DIR, "OVMF_CODE_4M.secboot.fd")
SNAKEOIL_VARS = os.path.join(OVMF_DIR, "OVMF_VARS_4M.snakeoil.fd")
MS_VARS = os.path.join(OVMF_DIR, "OVMF_VARS_4M.ms.fd")
SNAKEOIL_KEY = "/usr/share/ovmf/PkKek-1-snakeoil.key"
SNAKEOIL_CERT = "/usr/share/ovmf/PkKek-1-snakeoil.pem"
SHIM_DIR = "/usr/lib/shim"

LOADER_BANNER = "LLM kernel UEFI loader"
KERNEL_LINE = re.compile(rb"\nkernel: ")
FIRMWARE_DENIED = re.compile(rb"BdsDxe: failed to load Boot\w+ [^\n]*Access Denied")
READY = re.compile(rb"kernel: ready in ([0-9.]+) ms")


def need(ctx, *paths):
    """Skips the case (a failure with CI set) when a file or tool is missing."""
    # Skip lives in the harness script (__main__), the module Context comes from.
    skip = sys.modules[type(ctx).__module__].Skip
    for p in paths:
        if not os.path.exists(p):
            raise skip(f"missing {p} (sh tools/install-deps.sh installs ovmf, shim-signed, sbsigntool)")
    for tool in ("sbsign", "sbverify", "openssl"):
        if not shutil.which(tool):
            raise skip(f"{tool} is not installed (sh tools/install-deps.sh)")


def work_dir(ctx, name):
    d = os.path.join(ctx.image_dir, "secure-boot", name)
    os.makedirs(d, exist_ok=True)
    return d


def sign(key, cert, loader, out, password=None):
    env = dict(os.environ)
    env.pop("SIGN_KEY_PASS", None)
    if password:
        env["SIGN_KEY_PASS"] = password
    r = subprocess.run(["sh", os.path.join(ROOT, "tools/sign-efi.sh"), key, cert, loader, out],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, f"sign-efi.sh failed: {r.stdout.decode(errors='replace')}"
    return out


def snakeoil_signed(ctx):
    return sign(SNAKEOIL_KEY, SNAKEOIL_CERT, HASHED_LOADER,
                os.path.join(work_dir(ctx, "loaders"), "snakeoil.efi"), "snakeoil")


def new_key_pair(ctx, name):
    """A fresh pair from tools/make-keys.sh: (key, PEM cert, DER cert)."""
    keys = work_dir(ctx, name)
    r = subprocess.run(["sh", os.path.join(ROOT, "tools/make-keys.sh"), keys], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)  # "exists: kept" when a case before made it
    assert r.returncode == 0, f"make-keys.sh: {r.stdout.decode(errors='replace')}"
    return tuple(os.path.join(keys, "llmk-owner." + ext) for ext in ("key", "crt", "cer"))


def vars_trusting(ctx, der_cert):
    """A copy of the snakeoil store whose db also holds der_cert."""
    out = tempfile.mktemp(suffix="-vars.fd", dir=work_dir(ctx, "vars"))
    r = subprocess.run([sys.executable, os.path.join(ROOT, "tools/ovmf_vars_enroll_db.py"), SNAKEOIL_VARS,
                        der_cert, out], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert r.returncode == 0, f"ovmf_vars_enroll_db.py: {r.stdout.decode(errors='replace')}"
    return out


def secure_firmware(ctx, vars_template, vars_copy=None):
    """pflash CODE (read-only) + a private copy of the variable store: the
    firmware writes to it, and /usr/share must never change."""
    if vars_copy is None:
        vars_copy = tempfile.mktemp(suffix="-vars.fd", dir=work_dir(ctx, "vars"))
        shutil.copyfile(vars_template, vars_copy)
    return ["-global", "driver=cfi.pflash01,property=secure,value=on",
            "-drive", f"if=pflash,format=raw,unit=0,readonly=on,file={SECBOOT_CODE}",
            "-drive", f"if=pflash,format=raw,unit=1,file={vars_copy}"]


def boot_secure(ctx, image, vars_template=SNAKEOIL_VARS, vars_copy=None):
    return ctx.boot(image, machine="q35,smm=on", firmware_args=secure_firmware(ctx, vars_template, vars_copy))


def model_files(ctx):
    return [ctx.model("stories260K.bin"), ctx.model("tok512.bin")]


CFG = "ramdisk=ramdisk.tar\nmodel=stories260K.bin\ntokenizer=tok512.bin\n"


def assert_nothing_of_ours_ran(vm, what, settle=3):
    """Waits a while longer, then: no loader banner, no kernel line."""
    time.sleep(settle)
    text = vm.text()
    assert LOADER_BANNER not in text, f"{what}: our loader ran:\n{vm.tail(1500)}"
    assert not KERNEL_LINE.search(text.encode()), f"{what}: the kernel ran:\n{vm.tail(1500)}"


def test_secure_boot_signed_loader_boots(ctx):
    need(ctx, SECBOOT_CODE, SNAKEOIL_VARS, HASHED_LOADER)
    key, cert, der = new_key_pair(ctx, "owner-keys")
    loader = sign(key, cert, HASHED_LOADER, os.path.join(work_dir(ctx, "loaders"), "owner.efi"))
    img = ctx.image("sb-signed", model_files(ctx), CFG, loader=loader)
    with boot_secure(ctx, img, vars_copy=vars_trusting(ctx, der)) as vm:
        vm.expect("loader: Secure Boot: on (signed build)", timeout=90)
        out = vm.expect(re.compile(rb"kernel\.elf SHA-256 [0-9a-f]{64} matches the signed loader "
                                   rb"\(checked in \d+ ms\)"), timeout=30)
        want_digest = hashlib.sha256(open(os.path.join(BUILD, "kernel.elf"), "rb").read()).hexdigest()
        assert f"SHA-256 {want_digest} matches" in out, f"the loader's digest is not hashlib's {want_digest}: {out[-300:]!r}"
        print("  " + re.search(r"kernel\.elf SHA-256 .*", out).group(0))
        vm.expect(READY, timeout=60)
        vm.wait_prompt(timeout=20)
        set_all(vm, temp=0, steps=200)
        text, _ = answer(vm, "Once upon a time")
        want = golden(ctx, "stories260K__once_upon_a_time.txt")
        assert text == want, f"signed boot: {first_difference(text, want)}"
        assert_no_panic(vm, "a Secure Boot boot")


def test_secure_boot_refuses_unsigned_loader(ctx):
    need(ctx, SECBOOT_CODE, SNAKEOIL_VARS, HASHED_LOADER)
    img = ctx.image("sb-unsigned", model_files(ctx), CFG, loader=HASHED_LOADER)
    with boot_secure(ctx, img) as vm:
        vm.expect(FIRMWARE_DENIED, timeout=90)
        assert_nothing_of_ours_ran(vm, "unsigned loader")


def test_secure_boot_refuses_other_key(ctx):
    """db trusts one owner key (and snakeoil); the loader is signed with another."""
    need(ctx, SECBOOT_CODE, SNAKEOIL_VARS, HASHED_LOADER)
    _, _, trusted_der = new_key_pair(ctx, "owner-keys")
    key, cert, _ = new_key_pair(ctx, "other-keys")
    other = sign(key, cert, HASHED_LOADER, os.path.join(work_dir(ctx, "loaders"), "other-key.efi"))
    img = ctx.image("sb-other-key", model_files(ctx), CFG, loader=other)
    with boot_secure(ctx, img, vars_copy=vars_trusting(ctx, trusted_der)) as vm:
        vm.expect(FIRMWARE_DENIED, timeout=90)
        assert_nothing_of_ours_ran(vm, "loader signed with a key not in db")


def test_secure_boot_refuses_changed_kernel(ctx):
    need(ctx, SECBOOT_CODE, SNAKEOIL_VARS, SNAKEOIL_KEY, HASHED_LOADER)
    kernel = os.path.join(work_dir(ctx, "kernel"), "kernel.elf")
    with open(os.path.join(BUILD, "kernel.elf"), "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x01  # one bit of one byte in the middle of the file
    with open(kernel, "wb") as f:
        f.write(data)
    img = ctx.image("sb-changed-kernel", model_files(ctx), CFG, loader=snakeoil_signed(ctx), kernel=kernel)
    with boot_secure(ctx, img) as vm:
        vm.expect("loader: Secure Boot: on (signed build)", timeout=90)
        vm.expect(re.compile(rb"loader: error: kernel\.elf is not the kernel this signed loader was built "
                                   rb"with \(SHA-256 [0-9a-f]{64}, expected [0-9a-f]{64}\)"), timeout=30)
        time.sleep(3)
        assert not KERNEL_LINE.search(vm.text().encode()), f"the changed kernel ran:\n{vm.tail(1500)}"
        assert vm.proc.poll() is None, f"QEMU exited ({vm.proc.returncode}) instead of the loader halting"


DOWN, ENTER = "\x1b[B", "\r"
ANSI = re.compile(r"\x1b\[[0-9;=]*[A-Za-z]")


def screen_text(vm, start):
    """What the firmware console drew since start, escapes and box drawing gone."""
    return re.sub(r"[^\x20-\x7e\n]", " ", ANSI.sub(" ", vm.text(start)))


def choose(vm, wait_for, item_index):
    """Waits for a menu's last item, moves down item_index times, presses Enter."""
    vm.expect(wait_for, timeout=30)
    time.sleep(0.5)  # the menu reads keys once it has drawn
    vm.send(DOWN * item_index + ENTER)


def enroll_from_disk(vm, cert_name):
    """Drives MokManager over COM1: any key, 'Enroll key from disk', the
    stick, the certificate file, 'Continue', 'Yes', 'Reboot'."""
    vm.expect("Press any key to perform MOK management", timeout=30)
    vm.send(" ")
    choose(vm, "Enroll hash from disk", 1)  # Continue boot / Enroll key from disk / ...
    choose(vm, "LLMKERNEL", 0)  # the volumes: only the stick
    start = vm.cursor
    vm.expect("ramdisk.tar", timeout=30)
    listing = screen_text(vm, start).split("genuine key before Enrolling it")[-1].split()
    assert cert_name in listing, f"MokManager does not list {cert_name}: {listing}"
    time.sleep(0.5)
    vm.send(DOWN * listing.index(cert_name) + ENTER)
    choose(vm, "Continue", 1)  # [Enroll MOK]: View key 0 / Continue
    choose(vm, re.compile(rb"Enroll the key\(s\)\?[\s\S]*Yes"), 1)  # No / Yes
    choose(vm, "Reboot", 0)  # Reboot / Enroll key from disk / ...


def test_secure_boot_shim_and_mok(ctx):
    """Microsoft's keys only: the firmware starts Debian's Microsoft-signed
    shim, shim refuses our loader (its certificate is in neither db nor the
    MOK list) and starts MokManager; the certificate is enrolled from the
    stick over the console; after the reboot shim starts our loader, which
    boots to the prompt, Secure Boot on all along."""
    shim = os.path.join(SHIM_DIR, "shimx64.efi.signed")
    mok_manager = os.path.join(SHIM_DIR, "mmx64.efi.signed")
    need(ctx, SECBOOT_CODE, MS_VARS, SNAKEOIL_KEY, HASHED_LOADER, shim, mok_manager)
    cert = os.path.join(work_dir(ctx, "loaders"), "llmk-owner.cer")
    subprocess.run(["openssl", "x509", "-in", SNAKEOIL_CERT, "-outform", "DER", "-out", cert], check=True)
    img = ctx.image("sb-shim", model_files(ctx), CFG, loader=shim,
                    esp_files=[(snakeoil_signed(ctx), "EFI/BOOT/grubx64.efi"),
                               (mok_manager, "EFI/BOOT/mmx64.efi"), (cert, "llmk-owner.cer")])
    vars_copy = os.path.join(work_dir(ctx, "vars"), "shim-vars.fd")
    shutil.copyfile(MS_VARS, vars_copy)
    with boot_secure(ctx, img, vars_copy=vars_copy) as vm:
        vm.expect("Verification failed: (0x1A) Security Violation", timeout=90)
        assert LOADER_BANNER not in vm.text(), f"our loader ran before its key was enrolled:\n{vm.tail(1500)}"
        time.sleep(0.5)
        vm.send(ENTER)  # the error box's OK: shim then starts MokManager
        enroll_from_disk(vm, "llmk-owner.cer")
        vm.wait_exit(timeout=30)  # MokManager reboots; -no-reboot ends QEMU
        assert LOADER_BANNER not in vm.text(), f"our loader ran before the reboot:\n{vm.tail(1500)}"
    with boot_secure(ctx, img, vars_copy=vars_copy) as vm:
        vm.expect("loader: Secure Boot: on (signed build)", timeout=90)
        vm.expect(READY, timeout=60)
        vm.wait_prompt(timeout=20)
        assert "Security Violation" not in vm.text(), f"shim refused the loader again:\n{vm.tail(1500)}"
        out = vm.command("/echo booted through shim")
        assert out.rstrip().endswith("booted through shim"), f"/echo: {out!r}"


CASES = [
    test_secure_boot_signed_loader_boots,
    test_secure_boot_refuses_unsigned_loader,
    test_secure_boot_refuses_other_key,
    test_secure_boot_refuses_changed_kernel,
    test_secure_boot_shim_and_mok,
]
