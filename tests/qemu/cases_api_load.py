"""cases_api_load.py - the HTTP API under load (issue 20's load check):
200 sequential requests (new connections and keep-alive, whole and
streamed, completions and chat), then 4 clients at once, then a stream the
client hangs up on followed by a good request. Every request is answered
200 (its greedy text a prefix of llama2.c's golden answer, the same text
every time) or 503 with the queue-full JSON error; none is lost or hangs
(each has a 60 s socket time-out), the console logs one line per request,
and /mem's heap (lwIP's pbufs and PCBs come from it: MEMP_MEM_MALLOC) is
the same to the byte before and after. The client is Python's http.client."""
import http.client
import json
import re
import socket
import threading
import time

from cases_api import KEY, PROMPT, boot_api_http, post
from cases_llm import golden, first_difference
from cases_net import heap_bytes

MAX_TOKENS = 3  # small: 200 requests fit in 20 s under TCG
CONCURRENT_TOKENS = 24  # long enough that the 4 clients' requests wait in the queue
HEADERS = {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}
API_LINE = re.compile(r"^(?:> )?api: (GET|POST) (\S+) (\d+)", re.M)  # after a re-shown prompt


class Client:
    """One keep-alive HTTP/1.1 connection (reopened after a close)."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def request(self, path, body):
        """(status, parsed answer): JSON, or for a stream the list of its
        data: chunks with the last one "[DONE]"."""
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        self.conn.request("POST", path, json.dumps(body), HEADERS)
        r = self.conn.getresponse()
        data = r.read()
        if r.getheader("Connection", "").lower() == "close":
            self.close()
        if r.getheader("Content-Type") == "text/event-stream":
            events = [e for e in data.decode().split("\n\n") if e]
            assert all(e.startswith("data: ") for e in events), data[:300]
            return r.status, [e[6:] if e == "data: [DONE]" else json.loads(e[6:]) for e in events]
        return r.status, json.loads(data)

    def close(self):
        if self.conn:
            self.conn.close()
        self.conn = None


def request_body(i, stream, tokens=MAX_TOKENS):
    """Request i of a mix: completions and chats, whole or streamed."""
    body = {"model": "m", "max_tokens": tokens, "temperature": 0, "stream": stream}
    if i % 3 == 2:
        body["messages"] = [{"role": "user", "content": PROMPT}]
        return "/v1/chat/completions", body
    body["prompt"] = PROMPT
    return "/v1/completions", body


def answer_text(path, status, got, tokens):
    """The answer's text, checking its shape; None for a 503 refusal."""
    if status == 503:
        assert "queue is full" in got["error"]["message"], got
        return None
    assert status == 200, f"{path}: status {status}: {got}"
    chat = "chat" in path
    if isinstance(got, list):  # streamed
        assert got[-1] == "[DONE]" and got[-2]["choices"][0]["finish_reason"] == "length", got[-3:]
        assert got[-2]["usage"]["completion_tokens"] == tokens, got[-2]
        key = "delta" if chat else None
        return "".join((c["choices"][0]["delta"].get("content", "") if key else c["choices"][0]["text"])
                       for c in got[:-1])
    assert got["usage"]["completion_tokens"] == tokens and got["choices"][0]["finish_reason"] == "length", got
    return got["choices"][0]["message"]["content"] if chat else got["choices"][0]["text"]


class Answers:
    """Texts per route, which must be the same every time."""

    def __init__(self, want):
        self.want = want
        self.texts = {}
        self.statuses = []
        self.lock = threading.Lock()

    def check(self, path, status, got, tokens=MAX_TOKENS):
        text = answer_text(path, status, got, tokens)
        with self.lock:
            self.statuses.append(status)
            if text is None:
                return
            first = self.texts.setdefault((path, tokens), text)
            assert text == first, f"{path}: {first_difference(text, first)}"
            if "chat" not in path:  # the chat template of a model without one: no golden for it
                assert self.want.startswith(text) and text, f"{path}: {text!r} is not how {self.want[:60]!r} opens"


def api_lines(vm, start):
    return API_LINE.findall(vm.text()[start:])


def test_api_http_load(ctx):
    want = golden(ctx, "stories260K__once_upon_a_time.txt")[len(PROMPT):]
    vm, port = boot_api_http(ctx)
    with vm:
        vm.command("/set temp 0")
        before = heap_bytes(vm)
        log_start = len(vm.text())
        answers = Answers(want)
        t0 = time.monotonic()
        # 200 in a row: one keep-alive connection, except each 4th request on a new one.
        keep = Client(port)
        for i in range(200):
            path, body = request_body(i, stream=i % 5 == 4)
            if i % 4 == 3:
                one = Client(port)
                answers.check(path, *one.request(path, body))
                one.close()
            else:
                answers.check(path, *keep.request(path, body))
        keep.close()
        sequential_s = time.monotonic() - t0
        assert answers.statuses == [200] * 200, f"sequential: {answers.statuses}"

        # 4 clients at once, 6 requests each, every other streamed.
        errors = []

        def client(n):
            c = Client(port)
            try:
                for i in range(6):
                    path, body = request_body(n + i, (n + i) % 2 == 1, CONCURRENT_TOKENS)
                    answers.check(path, *c.request(path, body), CONCURRENT_TOKENS)
            except Exception as e:  # noqa: BLE001 - reported by the main thread
                errors.append(f"client {n}: {e!r}")
            finally:
                c.close()

        t1 = time.monotonic()
        threads = [threading.Thread(target=client, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(300)
        assert not any(t.is_alive() for t in threads), "a concurrent client hung"
        assert not errors, errors
        concurrent_s = time.monotonic() - t1
        assert len(answers.statuses) == 224, f"{len(answers.statuses)} answers of 224 requests"

        # A stream the client hangs up on, then a good request.
        with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
            s.sendall(post("/v1/completions", {"prompt": PROMPT, "stream": True, "temperature": 0,
                                               "max_tokens": 200}))
            data = b""
            while data.count(b"data: ") < 3:
                chunk = s.recv(4096)
                assert chunk, f"the stream ended early: {data[-200:]!r}"
                data += chunk
        path, body = request_body(0, stream=False)
        answers.check(path, *Client(port).request(path, body))

        # Every request has its console line: none lost.
        vm.expect(re.compile(rb"api: POST /v1/completions 200, 3 tokens"), timeout=30)
        time.sleep(12)  # lwIP's TIME_WAIT (2 x TCP_MSL 5 s) lets go of the closed connections
        lines = api_lines(vm, log_start)
        statuses = [int(s) for _, _, s in lines]
        assert len(lines) == 226, f"{len(lines)} console lines for 226 requests: {vm.text()[log_start:log_start + 600]!r}"
        assert statuses.count(499) == 1 and statuses[-2] == 499, f"the hang-up: {statuses[-5:]}"
        assert sorted(statuses[:-2]) == sorted(answers.statuses[:-1]), "console and client statuses differ"
        with vm.lock:
            vm.cursor = len(vm.buf)
        status = vm.command("/net")
        # At most one error: the reset of the client that hung up mid-stream.
        assert re.search(r"api on port 8080: \d+ connections served, 0 open, 0 refused, 0 timed out, [01] errors",
                         status), status
        after = heap_bytes(vm)
        assert after == before, f"heap {before} bytes before the load, {after} after"
        print(f"  200 sequential requests in {sequential_s:.1f} s, 4 clients x 6 in {concurrent_s:.1f} s "
              f"({answers.statuses.count(503)} refused with 503)")


CASES = [test_api_http_load]
