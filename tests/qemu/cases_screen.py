"""cases_screen.py - QEMU cases for what the framebuffer shows: the status
line (model, decode speed, memory), answers that scroll past a screenful and
Chinese, Japanese, Korean and Cyrillic text. The screen is read from a
screendump with screen.py (the kernel's own fonts)."""
import os
import re
import subprocess
import time

import screen
from cases_boot import boot_to_prompt
from cases_gguf import ROOT, numpy_python
from cases_llm import answer, set_all

STATUS = re.compile(r"model: (\S+) \| ([0-9.]+) tok/s \| memory (\d+) of (\d+) MiB used")


def screen_text(vm, name="screen.ppm"):
    """The screen's text lines, read once the kernel has gone quiet."""
    time.sleep(1.0)
    path = os.path.join(vm.dir, name)
    if os.path.exists(path):
        os.unlink(path)
    vm.monitor_command(f"screendump {path}")
    for _ in range(50):  # QEMU writes the file asynchronously on some versions
        if os.path.exists(path) and os.path.getsize(path) > 0:
            break
        time.sleep(0.1)
    time.sleep(0.3)
    return screen.read_text(path)


def squeeze(text):
    return re.sub(r"\s+", "", text)


def test_screen_status_line_after_answer(ctx):
    with boot_to_prompt(ctx) as vm:
        set_all(vm, temp=0, steps=40)
        _, stats = answer(vm, "Once upon a time")
        lines = screen_text(vm)
        joined = "\n".join(lines)
        assert lines, "the screen is empty"
        status = STATUS.search(lines[-1])
        assert status, f"last screen row is not the status line: {lines[-1]!r}\nscreen:\n{joined}"
        assert status.group(1) == "stories260K.bin", f"status names {status.group(1)!r}"
        assert status.group(2) == stats.group(3), \
            f"status shows {status.group(2)} tok/s, the answer's line said {stats.group(3)}"
        used, total = int(status.group(3)), int(status.group(4))
        assert 0 < used < total, f"memory figures {used} of {total} MiB make no sense"
        assert "stop:" in joined, f"the [stats] line is not on screen:\n{joined}"


def test_screen_long_answer_scrolls(ctx):
    with boot_to_prompt(ctx) as vm:
        set_all(vm, temp=0, steps=512)
        for i in range(40):  # fill the screen, so that the answer must scroll it
            vm.command(f"/echo filler {i}")
        text, stats = answer(vm, "Once upon a time", timeout=400)
        lines = screen_text(vm)
        joined = "\n".join(lines)
        answer_rows = sum(len(line) // 80 + 1 for line in text.split("\n"))
        assert answer_rows >= 8, f"answer too short to test scrolling: {text!r}"
        assert not any(line == "filler 0" for line in lines), f"the screen did not scroll:\n{joined}"
        tail = squeeze(text)[-120:]
        assert tail in squeeze(joined), f"the answer's last words {tail!r} are not on screen:\n{joined}"
        assert STATUS.search(lines[-1]), f"status line lost after scrolling: {lines[-1]!r}"
        assert lines[-2].startswith(">"), f"the prompt is not just above the status line:\n{joined}"


def test_screen_many_lines_fast(ctx):
    """Scrolling a screenful costs little: 300 echoed lines in a few seconds
    (under TCG), and the last ones are on screen."""
    with boot_to_prompt(ctx) as vm:
        t0 = time.monotonic()
        for i in range(300):
            vm.command(f"/echo scroll line {i} " + "x" * 40, timeout=30)
        took = time.monotonic() - t0
        lines = screen_text(vm)
        joined = "\n".join(lines)
        assert any(line.startswith("scroll line 299 ") for line in lines), f"last line not on screen:\n{joined}"
        assert STATUS.search(lines[-1]) or "model: " in lines[-1], f"no status line: {lines[-1]!r}"
        assert took < 60, f"300 scrolled lines took {took:.1f}s"


def test_screen_unicode_typed_and_echoed(ctx):
    """Lines typed as UTF-8 on the serial port: the line editor echoes them
    (Backspace over a wide character on the way), /echo prints them; both
    show on screen as Unifont glyphs, wide characters in two cells."""
    if not os.path.exists(screen.UNIFONT_TABLE):
        raise AssertionError(f"{screen.UNIFONT_TABLE} missing: the kernel build makes it")
    chinese, cyrillic, kana_hangul = "你好，世界！中文测试", "Пример: жизнь и мир", "こんにちは 한국어"
    with boot_to_prompt(ctx) as vm:
        vm.send(f"/echo {chinese}界".encode() + b"\x7f\r")  # Backspace takes the whole 界
        printed = vm.wait_prompt().replace("\r", "").split("\n")
        assert chinese in printed and f"{chinese}界" not in printed, f"echo of the Chinese line: {printed!r}"
        vm.command(f"/echo {cyrillic}")
        vm.command(f"/echo {kana_hangul}")
        lines = screen_text(vm)
        joined = "\n".join(lines)
        for text in (chinese, cyrillic, kana_hangul):
            assert f"> /echo {text}" in lines, f"typed line {text!r} not on screen:\n{joined}"
            assert text in lines, f"printed line {text!r} not on screen:\n{joined}"


def test_screen_unicode_answer_streamed(ctx):
    """A script model (tools/gguf_write.py --unicode-script) answers a chat
    turn with a Chinese line and a Cyrillic line, token by token: the answer
    on serial is that UTF-8, and the screen shows the glyphs."""
    work = os.path.join(ctx.image_dir, "unicode-model")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "unicode-script.gguf")
    subprocess.run([numpy_python(), os.path.join(ROOT, "tools", "gguf_write.py"), path, "--unicode-script"],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=60)
    img = ctx.image("gguf-unicode", [path], "model=unicode-script.gguf\n")
    chinese, cyrillic = "你好，世界！", "Пример: жизнь"
    with boot_to_prompt(ctx, image=img) as vm:
        set_all(vm, temp=0, steps=20)
        assert "chat: on" in vm.command("/chat")
        text, _ = answer(vm, "hi")
        assert text.rstrip("\n") == f"{chinese}\n\n{cyrillic}", f"streamed answer: {text!r}"
        lines = screen_text(vm)
        joined = "\n".join(lines)
        assert chinese in lines and cyrillic in lines, f"the answer's lines are not on screen:\n{joined}"


CASES = [test_screen_status_line_after_answer, test_screen_long_answer_scrolls, test_screen_many_lines_fast,
         test_screen_unicode_typed_and_echoed, test_screen_unicode_answer_streamed]
