"""cases_api.py - the OpenAI-compatible API over the console's JSON-lines
mode (/api): at temperature 0 its text is the console's greedy answer and
llama2.c's golden text, streamed chunks add up to the whole answer, usage
counts and tokenize/detokenize agree with the reference tokenizer
(llama.cpp through node-llama-cpp), and every kind of bad request gets its
4xx JSON error while the kernel keeps serving."""
import json
import os
import re
import socket
import subprocess
import sys
import time

from cases_boot import boot_to_prompt
from cases_llm import answer, golden, set_all, first_difference
from cases_net import free_port, heap_bytes, net_image

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFERENCE = os.path.join(ROOT, "tests", "reference")
LINE = re.compile(rb'\{"status":(\d+),"(body|data)":[^\n]*\n')


class Api:
    """The console in /api mode: one JSON request per line, JSON lines back."""

    def __init__(self, vm):
        self.vm = vm
        vm.send("/api\r")
        vm.expect("\"/api off\" returns to the shell", timeout=30)

    def raw(self, line, timeout=120):
        """Sends one line (bytes or str); returns (status, body or None, chunks)."""
        self.vm.send((line if isinstance(line, bytes) else line.encode()) + b"\r")
        chunks = []
        while True:
            out = self.vm.expect(LINE, timeout=timeout)
            text = LINE.search(out.encode()).group(0).decode().rstrip("\r\n")
            msg = json.loads(text)
            if "body" in msg:
                assert not chunks, f"a whole answer after {len(chunks)} chunks: {text[:200]}"
                return msg["status"], msg["body"], None
            if msg["data"] == "[DONE]":
                return msg["status"], None, chunks
            chunks.append(msg["data"])

    def request(self, method, path, body=None, timeout=120):
        req = {"method": method, "path": path}
        if body is not None:
            req["body"] = body
        return self.raw(json.dumps(req), timeout)

    def off(self):
        self.vm.send("/api off\r")
        self.vm.expect("api: back to the shell", timeout=30)
        self.vm.wait_prompt(timeout=30)


def node_reference(ctx, script, *args):
    """Runs tests/reference/SCRIPT with node; its JSON output. Without the
    references the case is skipped (a failure with CI set: the harness)."""
    if not os.path.isdir(os.path.join(REFERENCE, "node_modules")):
        # Skip lives in the harness script (__main__), the module Context comes from.
        raise sys.modules[type(ctx).__module__].Skip(
            "tests/reference/node_modules is missing: run sh tools/install-references.sh")
    r = subprocess.run(["node", os.path.join(REFERENCE, script)] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    assert r.returncode == 0, f"{script} failed: {r.stderr.decode(errors='replace')[-500:]}"
    return json.loads(r.stdout)


PROMPT = "Once upon a time"


def test_api_serial_completion_matches_console_and_golden(ctx):
    want = golden(ctx, "stories260K__once_upon_a_time.txt")
    with boot_to_prompt(ctx) as vm:
        set_all(vm, temp=0, steps=200)
        console_text, stats = answer(vm, PROMPT)
        assert console_text == want, f"console: {first_difference(console_text, want)}"
        api = Api(vm)
        status, body, _ = api.request("GET", "/health")
        assert status == 200 and body == {"status": "ok"}, body
        status, body, _ = api.request("GET", "/v1/models")
        assert status == 200 and [m["id"] for m in body["data"]] == ["stories260K.bin"], body
        status, body, _ = api.request("POST", "/tokenize", {"content": PROMPT, "add_special": True})
        assert status == 200, body
        prompt_n = len(body["tokens"])
        # The console's steps count positions, the prompt's included: 200
        # positions sample 201 - prompt_n new tokens.
        new = int(stats.group(1))
        assert new == 201 - prompt_n, stats.group(0)
        req = {"model": "whatever-the-client-says", "prompt": PROMPT, "max_tokens": new,
               "temperature": 0}
        status, body, _ = api.request("POST", "/v1/completions", req)
        assert status == 200, body
        choice = body["choices"][0]
        assert choice["text"] == want[len(PROMPT):], f"api: {first_difference(choice['text'], want[len(PROMPT):])}"
        assert choice["finish_reason"] == "length", choice
        assert body["model"] == "whatever-the-client-says", body["model"]
        assert body["object"] == "text_completion", body
        usage = body["usage"]
        assert usage == {"prompt_tokens": prompt_n, "completion_tokens": new, "total_tokens": prompt_n + new}, usage
        assert body["timings"]["predicted_n"] == new and body["timings"]["prompt_n"] == prompt_n
        # Streamed: chunks as tokens come, adding up to the same text.
        status, _, chunks = api.request("POST", "/v1/completions", dict(req, stream=True))
        assert status == 200 and len(chunks) > 20, f"{len(chunks)} chunks"
        streamed = "".join(c["choices"][0]["text"] for c in chunks)
        assert streamed == choice["text"], f"streamed: {first_difference(streamed, choice['text'])}"
        assert [c["choices"][0]["finish_reason"] for c in chunks[:-1]] == [None] * (len(chunks) - 1)
        assert chunks[-1]["choices"][0]["finish_reason"] == "length" and chunks[-1]["usage"] == usage
        # A stop string ends the answer before it, streamed or not.
        cut = want[len(PROMPT):].index(" park")
        for stream in (False, True):
            status, body, chunks = api.request("POST", "/v1/completions",
                                               dict(req, stop=[" park", "zzz"], stream=stream))
            text = "".join(c["choices"][0]["text"] for c in chunks) if stream else body["choices"][0]["text"]
            last = chunks[-1] if stream else body
            assert text == want[len(PROMPT):][:cut], f"stop (stream {stream}): {text!r}"
            assert last["choices"][0]["finish_reason"] == "stop", last
        api.off()
        out = vm.command("/echo still here")
        assert out.rstrip().endswith("still here"), out


def test_api_serial_chat_matches_console_chat(ctx):
    """/chat on the console and the API's chat, both greedy: the same answers,
    the second turn's with the first answer given back as history."""
    turns = ["Once upon a time", "The little dog"]
    with boot_to_prompt(ctx) as vm:
        set_all(vm, temp=0, steps=60)
        out = vm.command("/chat")
        assert "chat: template none" in out, out
        console = [answer(vm, t)[0] for t in turns]
        vm.command("/chat off")
        api = Api(vm)
        messages = [{"role": "user", "content": turns[0]}]
        status, body, _ = api.request("POST", "/v1/chat/completions",
                                      {"messages": messages, "max_tokens": 60, "temperature": 0})
        assert status == 200, body
        first = body["choices"][0]["message"]
        assert first == {"role": "assistant", "content": console[0]}, \
            f"turn 1: {first_difference(first['content'], console[0])}"
        assert body["object"] == "chat.completion" and body["usage"]["completion_tokens"] <= 60, body
        prompt_1 = body["usage"]["prompt_tokens"]
        # The second turn: the history is text, re-tokenized (as llama-server
        # does), while /chat keeps the sampled tokens, so the answers may part
        # after a while; they open the same way and the history is all there.
        messages += [first, {"role": "user", "content": turns[1]}]
        req = {"messages": messages, "max_tokens": 60, "temperature": 0}
        status, body, _ = api.request("POST", "/v1/chat/completions", req)
        second = body["choices"][0]["message"]["content"]
        assert status == 200 and second[:40] == console[1][:40], f"turn 2: {first_difference(second, console[1])}"
        status, alone, _ = api.request("POST", "/v1/chat/completions",
                                       {"messages": messages[2:], "max_tokens": 60, "temperature": 0})
        status, tokens, _ = api.request("POST", "/tokenize", {"content": console[0]})
        assert body["usage"]["prompt_tokens"] >= prompt_1 + len(tokens["tokens"]) + \
            alone["usage"]["prompt_tokens"] - 1, (body["usage"], prompt_1, alone["usage"])
        status, _, chunks = api.request("POST", "/v1/chat/completions", dict(req, stream=True))
        assert chunks[0]["choices"][0]["delta"]["role"] == "assistant", chunks[0]
        streamed = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
        assert status == 200 and streamed == second, f"streamed: {first_difference(streamed, second)}"
        assert all(c["object"] == "chat.completion.chunk" for c in chunks)
        api.off()


def test_api_serial_tokenize_matches_llama_cpp(ctx):
    texts = ["Once upon a time", " hello world", "Lily's mom said, \"Hi!\"\n\nThe end.", "h\u00e9llo \u2713 \u65e5\u672c"]
    path = os.path.join(ctx.image_dir, "tokenize-texts.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(texts, f)
    want = node_reference(ctx, "tokenize.mjs", ctx.model("stories260K.gguf"), path)
    img = ctx.image("api-gguf", [ctx.model("stories260K.gguf")], "model=stories260K.gguf\n")
    with boot_to_prompt(ctx, image=img) as vm:
        api = Api(vm)
        for ref in want:
            status, body, _ = api.request("POST", "/tokenize", {"content": ref["text"]})
            assert status == 200 and body["tokens"] == ref["ids"], f"{ref['text']!r}: {body} != {ref['ids']}"
            status, body, _ = api.request("POST", "/tokenize", {"content": ref["text"], "add_special": True})
            assert body["tokens"][1:] == ref["ids"] and len(body["tokens"]) == len(ref["ids"]) + 1, body
            status, body, _ = api.request("POST", "/detokenize", {"tokens": ref["ids"]})
            assert status == 200 and body["content"] == ref["detokenized"], f"{body} != {ref['detokenized']!r}"
        status, body, _ = api.request("POST", "/tokenize", {"content": "Once upon", "with_pieces": True})
        assert [p["id"] for p in body["tokens"]] == want[0]["ids"][:2], body
        assert "".join(p["piece"] for p in body["tokens"]) == "Once upon", body
        api.off()


# (request line, expected status, words the error message holds)
ERRORS = [
    ('{"method":"GET","path":"/v1/nothing"}', 404, "no such route"),
    ('{"method":"GET","path":"/v1/completions"}', 405, "takes POST"),
    ('{"method":"POST","path":"/health"}', 405, "takes GET"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":5}}', 400, "prompt must be a string"),
    ('{"method":"POST","path":"/v1/completions","body":{}}', 400, "prompt is missing"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":"a","max_tokens":100000}}', 400, "max_tokens"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":"a","max_tokens":"ten"}}', 400, "max_tokens must"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":"a","temperature":"hot"}}', 400,
     "temperature must be a number"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":"a","stream":"yes"}}', 400, "true or false"),
    ('{"method":"POST","path":"/v1/chat/completions","body":{"messages":"hi"}}', 400, "messages must be an array"),
    ('{"method":"POST","path":"/v1/chat/completions","body":{"messages":[{"role":"assistant","content":"a"}]}}',
     400, "messages:"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":"a"', 400, "ends too early"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":nope}}', 400, "malformed JSON"),
    ('not json at all', 400, "JSON"),
    (b'{"method":"POST","path":"/v1/completions","body":{"prompt":"\xff\xfe"}}', 400, "not valid UTF-8"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":"\\ud800"}}', 400, "unpaired surrogate"),
    ('{"method":"POST","path":"/detokenize","body":{"tokens":[1,99999]}}', 400, "not in the vocabulary"),
    ('{"method":"POST","path":"/v1/completions","body":{"prompt":"' + "once upon a time " * 200 + '"}}', 400,
     "context"),
]


def test_api_serial_error_table(ctx):
    with boot_to_prompt(ctx) as vm:
        before = vm.command("/mem")
        api = Api(vm)
        for line, want_status, words in ERRORS:
            status, body, _ = api.raw(line)
            shown = line[:70] if isinstance(line, str) else line[:70].decode(errors="replace")
            assert status == want_status, f"{shown}: status {status}, expected {want_status}: {body}"
            err = body["error"]
            assert err["code"] == want_status and words in err["message"], f"{shown}: {err}"
        # Still serving after all that.
        status, body, _ = api.request("POST", "/v1/completions",
                                      {"prompt": PROMPT, "max_tokens": 20, "temperature": 0})
        want = golden(ctx, "stories260K__once_upon_a_time.txt")[len(PROMPT):]
        assert status == 200 and want.startswith(body["choices"][0]["text"]) and body["usage"]["completion_tokens"] == 20, body
        api.off()
        after = vm.command("/mem")
        assert heap_in_use(after) == heap_in_use(before), f"/mem before:\n{before}\nafter:\n{after}"


def heap_in_use(mem):
    m = re.search(r"heap in use[^\n]*", mem)
    assert m, mem
    return m.group(0)


def test_api_serial_from_boot_cfg(ctx):
    """api=serial in boot.cfg: the console starts in the JSON-lines mode."""
    img = ctx.image("api-serial-boot", [ctx.model("stories260K.bin"), ctx.model("tok512.bin")],
                    "model=stories260K.bin\ntokenizer=tok512.bin\napi=serial\n")
    with ctx.boot(img) as vm:
        vm.expect("\"/api off\" returns to the shell", timeout=120)
        api = Api.__new__(Api)
        api.vm = vm
        status, body, _ = api.request("GET", "/v1/models")
        assert status == 200 and body["data"][0]["id"] == "stories260K.bin", body
        api.off()
        out = vm.command("/echo shell again")
        assert out.rstrip().endswith("shell again"), out


KEY = "sekrit-key-123"


def http(port, raw, timeout=120):
    """Sends raw bytes; returns (status, headers text, body bytes) of the answer
    (read to the connection's close or Content-Length)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(raw)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        m = re.search(rb"Content-Length: (\d+)", head)
        while (m is None or len(body) < int(m.group(1))):
            chunk = s.recv(65536)
            if not chunk:
                break
            body += chunk
    status = int(head.split(b" ")[1]) if head.startswith(b"HTTP/1.1 ") else 0
    return status, head.decode(errors="replace"), body


def post(path, body, key=KEY, extra=""):
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    auth = f"Authorization: Bearer {key}\r\n" if key is not None else ""
    return (f"POST {path} HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n{extra}\r\n").encode() + data


def get(path, key=KEY, method="GET"):
    auth = f"Authorization: Bearer {key}\r\n" if key is not None else ""
    return f"{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}Connection: close\r\n\r\n".encode()


HTTP_ERRORS = [
    ("no key", get("/v1/models", key=None), 401, "API key"),
    ("wrong key", get("/v1/models", key="sekrit-key-12"), 401, "API key"),
    ("unknown route", get("/v2/nothing"), 404, "no such route"),
    ("wrong method", get("/v1/chat/completions"), 405, "takes POST"),
    ("DELETE", get("/health", method="DELETE"), 405, "takes GET"),
    ("malformed JSON", post("/v1/completions", b'{"prompt": "a",}'), 400, "malformed JSON"),
    ("truncated JSON", post("/v1/completions", b'{"prompt": "a"'), 400, "ends too early"),
    ("wrong type", post("/v1/chat/completions", {"messages": [{"role": "user", "content": 5}]}), 400,
     "content must be"),
    ("invalid UTF-8", post("/v1/completions", b'{"prompt": "\xc3\x28"}'), 400, "not valid UTF-8"),
    ("max_tokens beyond the context", post("/v1/completions", {"prompt": "a", "max_tokens": 5000}), 400,
     "max_tokens"),
    ("no Content-Length", b"POST /v1/completions HTTP/1.1\r\nAuthorization: Bearer " + KEY.encode() +
     b"\r\n\r\n", 411, "Content-Length"),
    ("chunked", b"POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 411, "chunked"),
    ("body over 1 MiB", b"POST /v1/completions HTTP/1.1\r\nContent-Length: 2000000\r\n\r\n", 413, "1 MiB"),
    ("headers over 8 KiB", b"GET /health HTTP/1.1\r\nX: " + b"a" * 9000 + b"\r\n\r\n", 431, "8 KiB"),
    ("longer body than Content-Length", post("/v1/completions", b'{"prompt":"a","max_tokens":2}').replace(
        b"Content-Length: 29", b"Content-Length: 20"), 400, "malformed JSON"),
    ("HTTP/2", b"GET /health HTTP/2.0\r\n\r\n", 505, "HTTP/1"),
    ("garbage", b"\x00\x01\x02 hello\r\n\r\n", 400, "NUL byte"),
    ("no path", b"hello world\r\n\r\n", 400, "request target"),
]


def boot_api_http(ctx, model="virtio-net-pci", machine="q35"):
    """Boots the HTTP API (net=dhcp, api_key KEY) on NIC MODEL with the
    guest's 8080 forwarded to a free host port; (vm, port)."""
    port = free_port()
    img = net_image(ctx, "api-http", f"net=dhcp\napi_key={KEY}\n")
    vm = ctx.boot(img, machine=machine, nic=f"user,model={model},hostfwd=tcp:127.0.0.1:{port}-:8080")
    try:
        vm.expect("api: HTTP on port 8080, API key required", timeout=120)
        vm.wait_prompt(timeout=30)
    except BaseException:
        vm.close()  # QEMU holds the image's lock: never leave it running
        raise
    return vm, port


def console_answers(vm):
    """The console's greedy answers to PROMPT, plain and as a /chat turn:
    (text, new tokens, chat text)."""
    set_all(vm, temp=0, steps=80)  # positions for a prompt, new tokens for a /chat turn
    console_text, stats = answer(vm, PROMPT)
    vm.command("/chat")
    chat_text, _ = answer(vm, PROMPT)
    vm.command("/chat off")
    return console_text, int(stats.group(1)), chat_text


def check_openai_client(ctx, port, console_text, new, chat_text):
    """The official openai npm client: completions and chat, whole and
    streamed, equal the console's greedy answers; a wrong key gets 401."""
    got = node_reference(ctx, "openai_client.mjs", f"http://127.0.0.1:{port}/v1", KEY, PROMPT, str(new), "80")
    assert got["models"] == ["stories260K.bin"], got["models"]
    want = console_text[len(PROMPT):]
    c = got["completion"]
    assert c["text"] == want, f"completion: {first_difference(c['text'], want)}"
    assert c["finish_reason"] == "length" and c["usage"]["completion_tokens"] == new, c
    s = got["completion_stream"]
    assert s["text"] == want and s["chunks"] > 10, f"streamed completion: {s['chunks']} chunks, " \
        f"{first_difference(s['text'], want)}"
    ch = got["chat"]
    assert ch["role"] == "assistant" and ch["content"] == chat_text, \
        f"chat: {first_difference(ch['content'], chat_text)}"
    cs = got["chat_stream"]
    assert cs["content"] == chat_text and cs["chunks"] > 10 and cs["finish_reason"] == ch["finish_reason"], cs
    assert got["wrong_key"]["status"] == 401, got["wrong_key"]


def check_openai_client_on(ctx, model, machine):
    """The openai client's checks over one NIC, the heap the same after them."""
    vm, port = boot_api_http(ctx, model, machine)
    with vm:
        console_text, new, chat_text = console_answers(vm)
        before = heap_bytes(vm)
        check_openai_client(ctx, port, console_text, new, chat_text)
        time.sleep(12)  # lwIP's TIME_WAIT (2 x TCP_MSL 5 s) lets go of the closed connections
        with vm.lock:  # past the console lines of the requests
            vm.cursor = len(vm.buf)
        after = heap_bytes(vm)
        assert after == before, f"heap {before} bytes before the HTTP requests, {after} after"


def test_api_http_openai_client_e1000_pc(ctx):
    """The openai client over QEMU's pc default NIC, the 82540EM."""
    check_openai_client_on(ctx, "e1000", "pc")


def test_api_http_openai_client_e1000e_q35(ctx):
    """The openai client over QEMU's q35 default NIC, the 82574L."""
    check_openai_client_on(ctx, "e1000e", "q35")


def test_api_http_openai_client_and_errors(ctx):
    """virtio-net: the openai client's checks (check_openai_client), the
    error table; a stream cut off by the client stops its generation and the
    next request is served; the heap is the same at the end."""
    vm, port = boot_api_http(ctx)
    with vm:
        console_text, new, chat_text = console_answers(vm)
        want = console_text[len(PROMPT):]
        before = heap_bytes(vm)
        check_openai_client(ctx, port, console_text, new, chat_text)

        for what, raw, want_status, words in HTTP_ERRORS:
            status, head, body = http(port, raw)
            assert status == want_status, f"{what}: status {status}, expected {want_status}: {head} {body[:200]!r}"
            err = json.loads(body)["error"]
            assert err["code"] == want_status and words in err["message"], f"{what}: {err}"
            assert "application/json" in head, f"{what}: {head}"

        # A client that hangs up mid-stream stops its generation at once.
        with vm.lock:
            vm.cursor = len(vm.buf)
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            s.sendall(post("/v1/completions", {"prompt": PROMPT, "stream": True, "temperature": 0, "max_tokens": 500}))
            data = b""
            while data.count(b"data: ") < 3:
                data += s.recv(4096)
            assert b"text/event-stream" in data, data[:300]
        out = vm.expect(re.compile(rb"api: POST /v1/completions \d+[^\r\n]*\r?\n"), timeout=60)  # whole line
        m = re.search(r"api: POST /v1/completions (\d+)(?:, (\d+) tokens)?[^\r\n]*\r?\n$", out)
        assert m and m.group(1) == "499", out[-300:]
        assert int(m.group(2) or 0) < 100, f"the generation went on after the hang-up: {m.group(0)}"
        status, _, body = http(port, post("/v1/completions", {"prompt": PROMPT, "max_tokens": 5, "temperature": 0}))
        assert status == 200 and want.startswith(json.loads(body)["choices"][0]["text"]), body
        status, _, body = http(port, get("/health"))
        assert status == 200 and json.loads(body) == {"status": "ok"}, body
        assert_console_takes_turns(vm, port, console_text)
        assert_queue_bounded(port)
        # A body shorter than its Content-Length: 408 once the request time-out (20 s) passes.
        start = time.monotonic()
        raw = post("/v1/completions", b'{"prompt":"a"}').replace(b"Content-Length: 14", b"Content-Length: 40")
        status, head, body = http(port, raw)
        assert status == 408 and "Content-Length" in json.loads(body)["error"]["message"], (head, body)
        assert 19 < time.monotonic() - start < 40, time.monotonic() - start
        time.sleep(12)  # lwIP's TIME_WAIT (2 x TCP_MSL 5 s) lets go of the closed connections
        with vm.lock:  # past the console lines (and re-shown prompts) of the requests
            vm.cursor = len(vm.buf)
        after = heap_bytes(vm)
        assert after == before, f"heap {before} bytes before the HTTP requests, {after} after"


def assert_console_takes_turns(vm, port, console_text):
    """A prompt typed at the console while an API request generates waits
    for it, then gets its answer (the same greedy text)."""
    with vm.lock:
        vm.cursor = len(vm.buf)
    with socket.create_connection(("127.0.0.1", port), timeout=180) as s:
        s.sendall(post("/v1/completions", {"prompt": PROMPT, "max_tokens": 400, "temperature": 0, "stream": True}))
        data = b""
        while b"data: " not in data:
            data += s.recv(4096)
        vm.send(PROMPT + "\r")  # typed while the API's answer streams
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    assert data.rstrip().endswith(b"data: [DONE]"), data[-200:]
    out = vm.expect(re.compile(rb"\n\[\d+ tokens, [^\]\n]*\]"), timeout=120).replace("\r", "")
    api_at = out.find("api: POST /v1/completions 200")
    assert api_at >= 0, f"no api line before the console's answer: {out[-500:]!r}"
    text = out[out.index(PROMPT, api_at):]
    text = text[text.index("\n") + 1:]  # after the echoed line
    text = text[:text.rindex("\n[")]
    assert text == console_text, f"console answer after the API: {first_difference(text, console_text)}"
    vm.wait_prompt(timeout=30)


def read_answer(s):
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


def assert_queue_bounded(port, clients=7):
    """One generation at a time and 4 waiting: of 7 requests sent at once,
    those past the queue get 503 with a JSON error at once; the rest are
    served in turn."""
    socks = [socket.create_connection(("127.0.0.1", port), timeout=180) for _ in range(clients)]
    try:
        for s in socks:
            s.sendall(post("/v1/completions", {"prompt": PROMPT, "max_tokens": 150, "temperature": 0}))
        answers = [read_answer(s) for s in socks]
    finally:
        for s in socks:
            s.close()
    statuses = [status for status, _ in answers]
    assert statuses.count(200) >= 4 and statuses.count(503) >= 1 and \
        statuses.count(200) + statuses.count(503) == clients, statuses
    for status, body in answers:
        if status == 503:
            assert "queue is full" in json.loads(body)["error"]["message"], body


CASES = [test_api_serial_completion_matches_console_and_golden, test_api_serial_chat_matches_console_chat,
         test_api_serial_tokenize_matches_llama_cpp, test_api_serial_error_table, test_api_serial_from_boot_cfg,
         test_api_http_openai_client_and_errors, test_api_http_openai_client_e1000_pc,
         test_api_http_openai_client_e1000e_q35]
