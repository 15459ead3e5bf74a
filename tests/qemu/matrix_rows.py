"""matrix_rows.py - the rows of make test-matrix (cases_matrix.py). Each
dimension's values appear in one or more rows, combined so that every value
is covered without the full product (31 boots).

What this OVMF allows: -vga std without a size comes up at 1280x800; VGA and
bochs-display come up at their xres/yres up to 2560x1600. At 3840x2160 OVMF
starts in 1280x800 (it does not take that size as the preferred one) but
lists the 4K mode when the video memory holds it, so those rows ask for it
in boot.cfg (video=WxH or video=max, the loader's SetMode). ramfb starts at
800x600 and OVMF's ramfb driver offers no mode above 1024x768 (640x480,
800x600, 1024x768). Every row with a framebuffer reads the prompt and the
answer off a screendump. virtio-gpu-pci's GOP has no linear framebuffer (the
loader reports fb 0x0): the kernel's own driver (kernel/drivers/virtio_gpu.c)
sets up a scanout from RAM at the device's size, read back by screendump; a
device too short of host memory for it refuses the resource, and the kernel
must say so in one line and carry on with serial."""
from dataclasses import dataclass, field

# CPUs with AVX2 + FMA, so the boot-time probe also times the AVX2 kernels;
# the others must run SSE2 and never touch AVX.
AVX2_CPUS = {"Haswell", "Skylake-Client", "EPYC", "max"}


@dataclass
class Row:
    name: str
    machine: str = "q35"
    cpu: str = "max"
    smp: int = 1
    memory: str = "1G"
    firmware: str = "OVMF.fd"      # or "OVMF_CODE_4M.fd" (pflash, with a copy of OVMF_VARS_4M.fd)
    display: list = field(default_factory=lambda: ["-vga", "std"])
    size: tuple = (1280, 800)      # the framebuffer the kernel must get; None: no framebuffer
    serial: bool = True            # False: -serial none, screen + USB keyboard only
    model_fits: bool = True        # False: the model must be refused, the shell still reached
    timeout: int = 240             # boot to prompt, seconds
    video: str = ""                # boot.cfg video= (the loader's GOP mode choice)
    ps2: bool = True               # False: the machine has no i8042 (-machine ...,i8042=off)
    log: str = ""                  # a line the boot log must hold


def vga(w, h):
    return ["-device", f"VGA,xres={w},yres={h},vgamem_mb=64"]


def virtio_gpu(w, h, extra=""):
    return ["-device", f"virtio-gpu-pci,xres={w},yres={h}{extra}"]


def bochs(w, h):
    return ["-device", f"bochs-display,xres={w},yres={h},vgamem=64M"]


FW4M = "OVMF_CODE_4M.fd"

ROWS = [
    # CPUs, over both machines and both firmwares.
    Row("pc-qemu64-smp1", machine="pc", cpu="qemu64"),
    Row("q35-qemu64-smp2-ovmf4m", cpu="qemu64", smp=2, firmware=FW4M),
    Row("pc-nehalem-smp2-ovmf4m", machine="pc", cpu="Nehalem", smp=2, firmware=FW4M),
    Row("q35-nehalem-16g", cpu="Nehalem", memory="16G"),
    Row("pc-haswell-smp8", machine="pc", cpu="Haswell", smp=8),
    Row("q35-haswell-20g-ovmf4m", cpu="Haswell", smp=2, memory="20G", firmware=FW4M),
    Row("q35-skylake-smp16", cpu="Skylake-Client", smp=16),
    Row("pc-skylake-ovmf4m", machine="pc", cpu="Skylake-Client", firmware=FW4M),
    Row("q35-epyc-smp8-ovmf4m", cpu="EPYC", smp=8, firmware=FW4M),
    Row("pc-epyc-smp16-16g", machine="pc", cpu="EPYC", smp=16, memory="16G"),
    Row("q35-max-smp16-ovmf4m", smp=16, firmware=FW4M),
    Row("pc-max-20g", machine="pc", memory="20G", smp=2),
    # Too little RAM for a model: refused, shell reached.
    Row("pc-max-128m", machine="pc", memory="128M", model_fits=False),
    Row("q35-qemu64-128m-ovmf4m", cpu="qemu64", memory="128M", firmware=FW4M, model_fits=False),
    # Displays and resolutions.
    Row("q35-vga-800x600", display=vga(800, 600), size=(800, 600)),
    Row("pc-vga-1920x1080-ovmf4m", machine="pc", display=vga(1920, 1080), size=(1920, 1080), firmware=FW4M),
    Row("q35-vga-2560x1600", display=vga(2560, 1600), size=(2560, 1600)),
    Row("q35-vga-3840x2160", display=vga(3840, 2160), size=(3840, 2160), video="3840x2160"),
    Row("pc-bochs-3840x2160-max-ovmf4m", machine="pc", display=bochs(3840, 2160), size=(3840, 2160), video="max",
        firmware=FW4M),
    Row("q35-virtio-gpu-pci-1280x800", display=virtio_gpu(1280, 800), size=(1280, 800),
        log="virtio-gpu: 1280x800 scanout"),
    Row("pc-virtio-gpu-pci-1920x1080-ovmf4m", machine="pc", display=virtio_gpu(1920, 1080), size=(1920, 1080),
        firmware=FW4M, log="virtio-gpu: 1920x1080 scanout"),
    Row("q35-virtio-gpu-pci-3840x2160", display=virtio_gpu(3840, 2160), size=(3840, 2160),
        log="virtio-gpu: 3840x2160 scanout"),
    # 1 MiB of host memory cannot hold the 4 MB resource: refused, serial only.
    Row("q35-virtio-gpu-pci-refuses", display=virtio_gpu(1280, 800, ",max_hostmem=1048576"), size=None,
        log="virtio-gpu: 00:"),
    Row("pc-virtio-vga", machine="pc", display=["-device", "virtio-vga"]),
    Row("q35-bochs-1600x900-ovmf4m", display=bochs(1600, 900), size=(1600, 900), firmware=FW4M),
    Row("pc-bochs-2560x1440", machine="pc", display=bochs(2560, 1440), size=(2560, 1440)),
    Row("q35-ramfb", display=["-device", "ramfb"], size=(800, 600)),
    Row("q35-ramfb-1024x768", display=["-device", "ramfb"], size=(1024, 768), video="1024x768"),
    # No serial port and no PS/2 controller: the prompt and the answer read on
    # the screen, typed on a USB keyboard (the only keyboard the machine has).
    Row("q35-noserial-usbkbd", serial=False, ps2=False, smp=2),
    Row("q35-noserial-usbkbd-virtio-gpu", serial=False, ps2=False, display=virtio_gpu(1280, 800), size=(1280, 800)),
    Row("pc-noserial-usbkbd-bochs-ovmf4m", machine="pc", serial=False, ps2=False, display=bochs(1024, 768),
        size=(1024, 768), firmware=FW4M),
]
