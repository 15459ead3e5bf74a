"""cases_net.py - QEMU cases for the network transport (kernel/net,
kernel/drivers/net): each NIC family (virtio-net on q35, e1000 on
-machine pc, e1000e on q35) gets a DHCP lease from QEMU's user network
(10.0.2.15, QEMU's built-in server is the reference), then a 1 MiB burst of
random bytes goes through hostfwd to the RFC 862 echo service (boot.cfg
net_echo=1) and every byte must come back in order, with the kernel heap
the same before and after. Also: no NIC, a NIC that fails to start
(legacy-only virtio), and net=static. Host ports are picked free at run
time; QEMU only listens on 127.0.0.1."""
import os
import re
import socket
import threading
import time

from cases_boot import READY

LEASE = "net: address 10.0.2.15 mask 255.255.255.0 gateway 10.0.2.2 (dhcp)"
BURST = 1 << 20
HEAP = re.compile(r"heap in use\s+[0-9.]+ MiB \((\d+) bytes\)")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def net_image(ctx, name, cfg):
    return ctx.image(name, [ctx.model("stories260K.bin"), ctx.model("tok512.bin")],
                     "model=stories260K.bin\ntokenizer=tok512.bin\n" + cfg)


def boot_net(ctx, image, model, machine="q35", guest="", port=None, extra=()):
    """Boots to the prompt with -nic user,model=MODEL (model None: -nic none)
    and, given a port, host 127.0.0.1:port forwarded to guest port 7."""
    nic = "none" if model is None else f"user,model={model}"
    if port:
        nic += f",hostfwd=tcp:127.0.0.1:{port}-{guest}:7"
    vm = ctx.boot(image, machine=machine, nic=nic, extra_args=list(extra))
    try:
        vm.expect(READY, timeout=120)
        vm.wait_prompt(timeout=30)
    except BaseException:
        vm.close()  # QEMU holds the image's lock: never leave it running
        raise
    return vm


def heap_bytes(vm):
    out = vm.command("/mem")
    m = HEAP.search(out)
    assert m, f"/mem has no heap line: {out!r}"
    return int(m.group(1))


def echo_burst(port, size):
    """Sends size random bytes and reads the echo concurrently; returns
    (sent, received, seconds)."""
    data = os.urandom(size)
    got = bytearray()
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        def reader():
            while len(got) < size:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got.extend(chunk)
        t = threading.Thread(target=reader)
        start = time.monotonic()
        t.start()
        s.sendall(data)
        t.join(60)
        seconds = time.monotonic() - start
    return data, bytes(got), seconds


def assert_echoed(data, got, what):
    if got == data:
        return
    at = next((i for i in range(min(len(got), len(data))) if got[i] != data[i]), min(len(got), len(data)))
    raise AssertionError(f"{what}: {len(got)} of {len(data)} bytes came back, first difference at byte {at}")


def wait_heap(vm, expected, seconds=10):
    """The heap once the closed connection is freed (its FIN handshake ends
    within milliseconds; polled up to `seconds`)."""
    deadline = time.monotonic() + seconds
    while True:
        now = heap_bytes(vm)
        if now == expected or time.monotonic() > deadline:
            return now
        time.sleep(0.5)


def check_echo(ctx, model, machine, expect_model):
    port = free_port()
    image = net_image(ctx, "net-dhcp-echo", "net=dhcp\nnet_echo=1\n")
    with boot_net(ctx, image, model, machine, port=port) as vm:
        log = vm.text()
        assert re.search(rf"net: {expect_model} 52:54:00:12:34:56, link up", log), f"no NIC line:\n{vm.tail()}"
        assert LEASE in log, f"no DHCP lease from QEMU's server:\n{vm.tail()}"
        status = vm.command("/net")
        assert "link up" in status and "10.0.2.15" in status, f"/net: {status!r}"
        assert re.search(r"echo on port 7: 0 connections served, 0 open", status), f"/net: {status!r}"
        heap_before = heap_bytes(vm)
        data, got, seconds = echo_burst(port, BURST)
        assert_echoed(data, got, f"{expect_model} echo burst")
        print(f"  {expect_model}: 1 MiB echoed in {seconds:.2f} s")
        heap_after = wait_heap(vm, heap_before)
        assert heap_after == heap_before, f"heap {heap_before} bytes before the connection, {heap_after} after"
        status = vm.command("/net")
        assert re.search(r"echo on port 7: 1 connections served, 0 open, 0 refused, 0 timed out, 0 errors",
                         status), f"/net after the burst: {status!r}"
        m = re.search(r"frames in (\d+)", status)
        assert m and int(m.group(1)) >= BURST // 1514, f"/net frame count: {status!r}"


def test_net_virtio_dhcp_echo(ctx):
    check_echo(ctx, "virtio-net-pci", "q35", "virtio-net")


def test_net_e1000_dhcp_echo(ctx):
    check_echo(ctx, "e1000", "pc", "e1000")


def test_net_e1000e_dhcp_echo(ctx):
    check_echo(ctx, "e1000e", "q35", "e1000e")


def peer_gone(sock, seconds):
    """True once the kernel closed or reset the connection (within seconds)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def slow_reader_dropped(port, seconds):
    """A client that sends without ever reading: the echo's writes stall,
    and the transport must drop the connection."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.settimeout(seconds)
    try:
        s.sendall(os.urandom(16 << 20))
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    finally:
        s.close()


def test_net_static_address_limits_timeouts(ctx):
    """net=static, then the transport's limits: a fifth connection past the
    echo's 4 is closed at once, idle ones are dropped after net_timeout
    seconds, a client that never reads is dropped too, and the heap is
    the same afterwards."""
    port = free_port()
    image = net_image(ctx, "net-static", "net=static\nip=10.0.2.20\ngw=10.0.2.2\nmask=255.255.255.0\n"
                      "net_echo=1\nnet_timeout=3\n")
    with boot_net(ctx, image, "virtio-net-pci", guest="10.0.2.20", port=port) as vm:
        assert "net: address 10.0.2.20 mask 255.255.255.0 gateway 10.0.2.2 (static)" in vm.text(), vm.tail()
        heap_before = heap_bytes(vm)
        data, got, _ = echo_burst(port, 64 << 10)
        assert_echoed(data, got, "static address echo")
        idle = []
        for i in range(4):
            s = socket.create_connection(("127.0.0.1", port), timeout=20)
            s.sendall(b"%d" % i)
            assert s.recv(16) == b"%d" % i, f"connection {i} not echoed"
            idle.append(s)
        with socket.create_connection(("127.0.0.1", port), timeout=20) as fifth:
            assert peer_gone(fifth, 10), "a fifth connection past max_connections 4 stayed open"
        start = time.monotonic()
        for s in idle:
            assert peer_gone(s, 20), "an idle connection outlived net_timeout=3"
            s.close()
        waited = time.monotonic() - start
        assert slow_reader_dropped(port, 30), "a client that never reads was not dropped"
        status = vm.command("/net")
        assert "10.0.2.20" in status and "(static)" in status, f"/net: {status!r}"
        assert re.search(r"echo on port 7: 6 connections served, 0 open, 1 refused, 5 timed out, 0 errors",
                         status), f"/net: {status!r}"
        heap_after = wait_heap(vm, heap_before)
        assert heap_after == heap_before, f"heap {heap_before} bytes before, {heap_after} after"
        print(f"  idle connections dropped {waited:.1f} s after the fifth was refused")


def test_net_without_nic_goes_on(ctx):
    image = net_image(ctx, "net-dhcp-echo", "net=dhcp\nnet_echo=1\n")
    with boot_net(ctx, image, None) as vm:
        lines = [l for l in vm.text().splitlines() if l.startswith("net:")]
        assert lines == ["net: no network card that a driver here starts; going on without network"], lines
        assert "net: off" in vm.command("/net")
        assert "still here" in vm.command("/echo still here")


def test_net_failing_nic_one_line(ctx):
    """A legacy-only virtio-net (no virtio 1.x capabilities): the driver
    says why in one line and the kernel goes on without a network."""
    image = net_image(ctx, "net-dhcp-echo", "net=dhcp\nnet_echo=1\n")
    with boot_net(ctx, image, None, extra=["-netdev", "user,id=n0", "-device",
                                           "virtio-net-pci,netdev=n0,disable-modern=on,disable-legacy=off"]) as vm:
        lines = [l for l in vm.text().splitlines() if l.startswith("net:")]
        assert len(lines) == 2 and re.match(r"net: virtio-net at 00:\w\w\.0 failed: .+; going on without it$",
                                            lines[0]), lines
        assert lines[1].startswith("net: no network card"), lines
        assert "still here" in vm.command("/echo still here")


def test_net_off_by_default(ctx):
    """Without net= in boot.cfg no driver starts, even with a NIC present."""
    with boot_net(ctx, None, "virtio-net-pci") as vm:
        assert "net:" not in vm.text(), vm.tail()
        assert "net: off" in vm.command("/net")


CASES = [
    test_net_virtio_dhcp_echo,
    test_net_e1000_dhcp_echo,
    test_net_e1000e_dhcp_echo,
    test_net_static_address_limits_timeouts,
    test_net_without_nic_goes_on,
    test_net_failing_nic_one_line,
    test_net_off_by_default,
]
