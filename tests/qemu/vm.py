"""vm.py - boot an image in QEMU and talk to the kernel over COM1.

COM1 is a unix-socket chardev that QEMU waits on (wait=on), so nothing the
kernel prints is lost; the monitor is a second socket for sendkey/screendump.
A reader thread timestamps every byte; expect() matches markers on the raw
stream (the prompt has no newline) and fails fast on an exception dump.
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time

PANIC_MARKER = b"KERNEL PANIC"
PROMPT = b"\n> "


class VMError(Exception):
    pass


class VM:
    def __init__(self, image, ovmf, memory="1G", smp=1, usb_stick=False, extra_args=(),
                 vga=True, name="vm", machine="q35", cpu="max", firmware_args=None, serial=True, nic="none"):
        """firmware_args replaces -bios ovmf (e.g. two pflash drives); serial=False
        gives the machine no serial port (-serial none): read the screen instead;
        nic is -nic's value (e.g. "user,model=e1000,hostfwd=..."), none by default."""
        self.name = name
        self.dir = tempfile.mkdtemp(prefix="llmk-")
        self.serial_path = os.path.join(self.dir, "serial.sock")
        self.monitor_path = os.path.join(self.dir, "monitor.sock")
        self.log_path = os.path.join(self.dir, "serial.log")
        firmware = firmware_args if firmware_args is not None else ["-bios", ovmf]
        serial_args = ["-chardev", f"socket,id=ser0,path={self.serial_path},server=on,wait=on",
                       "-serial", "chardev:ser0"] if serial else ["-serial", "none"]
        args = ["qemu-system-x86_64", "-machine", machine, "-cpu", cpu, "-accel", "tcg",
                "-m", memory, "-smp", str(smp)] + firmware + ["-nodefaults", "-nic", nic,
                "-no-reboot", "-display", "none",
                "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"] + serial_args + [
                "-monitor", f"unix:{self.monitor_path},server=on,wait=off"]
        if vga:
            args += ["-vga", "std"]
        if usb_stick:
            args += ["-device", "qemu-xhci,id=xhci",
                     "-drive", f"if=none,id=stick,format=raw,file={image}",
                     "-device", "usb-storage,bus=xhci.0,drive=stick,bootindex=0"]
        else:
            args += ["-drive", f"format=raw,file={image}"]
        args += list(extra_args)
        self.args = args
        self.buf = bytearray()
        self.times = []          # (offset in buf, time) for each chunk received
        self.cursor = 0          # expect() searches from here
        self.lock = threading.Condition()
        self.closed = False
        self.start_time = time.monotonic()
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.monitor = None
        self.serial = self.reader = None
        if serial:
            self.serial = self._connect(self.serial_path)
            self.reader = threading.Thread(target=self._read_loop, daemon=True)
            self.reader.start()

    def _connect(self, path, timeout=20):
        deadline = time.monotonic() + timeout
        while True:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(path)
                return s
            except OSError:
                s.close()
                if self.proc.poll() is not None:
                    out = self.proc.stdout.read().decode(errors="replace")
                    raise VMError(f"QEMU exited at start ({self.proc.returncode}): {out.strip()}")
                if time.monotonic() > deadline:
                    raise VMError(f"cannot connect to {path}")
                time.sleep(0.02)

    def _read_loop(self):
        with open(self.log_path, "wb") as log:
            while True:
                try:
                    data = self.serial.recv(65536)
                except OSError:
                    data = b""
                with self.lock:
                    if not data:
                        self.closed = True
                        self.lock.notify_all()
                        return
                    self.times.append((len(self.buf), time.monotonic()))
                    self.buf += data
                    self.lock.notify_all()
                log.write(data)
                log.flush()

    # ------------------------------------------------------------ output
    def text(self, start=0, end=None):
        with self.lock:
            return bytes(self.buf[start:end]).decode("utf-8", errors="replace")

    def tail(self, n=1500):
        with self.lock:
            return bytes(self.buf[-n:]).decode("utf-8", errors="replace")

    def expect(self, marker, timeout=30, allow_panic=False):
        """Waits for marker (bytes, str or compiled regex) after the cursor.
        Returns the text between the cursor and the end of the match and moves
        the cursor past it."""
        if isinstance(marker, str):
            marker = marker.encode()
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                if isinstance(marker, bytes):
                    i = self.buf.find(marker, self.cursor)
                    m_end = i + len(marker) if i >= 0 else -1
                else:
                    m = marker.search(self.buf, self.cursor)
                    i, m_end = (m.start(), m.end()) if m else (-1, -1)
                if i >= 0:
                    out = bytes(self.buf[self.cursor:m_end]).decode("utf-8", errors="replace")
                    self.cursor = m_end
                    return out
                if not allow_panic and self.buf.find(PANIC_MARKER, self.cursor) >= 0:
                    raise VMError(f"kernel panic while waiting for {marker!r}:\n{self.tail()}")
                if self.closed:
                    raise VMError(f"QEMU closed COM1 while waiting for {marker!r}:\n{self.tail()}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise VMError(f"timeout ({timeout}s) waiting for {marker!r}; last output:\n{self.tail()}")
                self.lock.wait(min(left, 0.5))

    def time_of(self, offset):
        """Host time at which byte `offset` of the stream arrived."""
        with self.lock:
            t = None
            for off, when in self.times:
                if off > offset:
                    break
                t = when
            return t

    def wait_prompt(self, timeout=30):
        return self.expect(PROMPT, timeout)

    # ------------------------------------------------------------ input
    def send(self, data):
        if isinstance(data, str):
            data = data.encode()
        self.serial.sendall(data)

    def command(self, line, timeout=30):
        """Sends a line, returns everything printed up to the next prompt
        (the echoed line included, the prompt excluded)."""
        self.send(line + "\r")
        out = self.expect(PROMPT, timeout)
        return out[: -len(PROMPT)].replace("\r", "")

    def monitor_command(self, cmd, timeout=10):
        if self.monitor is None:
            self.monitor = self._connect(self.monitor_path)
            self._monitor_read_until(b"(qemu) ", timeout)
        self.monitor.sendall(cmd.encode() + b"\n")
        return self._monitor_read_until(b"(qemu) ", timeout)

    def _monitor_read_until(self, marker, timeout):
        self.monitor.settimeout(timeout)
        data = b""
        while not data.endswith(marker):
            chunk = self.monitor.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.decode(errors="replace")

    # ------------------------------------------------------------ end
    def wait_exit(self, timeout=30):
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise VMError(f"QEMU did not exit within {timeout}s; last output:\n{self.tail()}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for s in (self.serial, self.monitor):
            if s:
                try:
                    s.close()
                except OSError:
                    pass
        if self.reader:
            self.reader.join(2)
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def number(pattern, text, what):
    """First number captured by pattern in text, or an assertion error naming what."""
    m = re.search(pattern, text)
    if not m:
        raise AssertionError(f"no {what} in output: {text!r}")
    return float(m.group(1))
