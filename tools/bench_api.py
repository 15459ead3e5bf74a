#!/usr/bin/env python3
"""bench_api.py - decode speed through the HTTP API against the console's
(issue 20: within 5%), and time to the first streamed token. Boots QEMU
(TCG) with the model, net=dhcp and the guest's port 8080 forwarded to a
free port on 127.0.0.1; each round answers the same prompt, greedy, with
the same number of new tokens, on the console (its [... decode X tok/s ...]
line), through POST /v1/completions whole and with stream: true. Prints
medians over the rounds:

- decode tok/s: the kernel's own figure for each (the console's [...] line,
  the API's timings.predicted_per_second), and their ratio to the console;
- client tok/s: new tokens over the client's wall time (whole: request to
  answer; streamed: first chunk to last, tokens - 1 over it);
- time to first streamed token: request sent to the first data: chunk.

    python3 tools/bench_api.py [--model M.gguf | --model M.bin --tokenizer T.bin]
                               [--tokens 64] [--rounds 5] [--prompt TEXT] [--smp 1] [--kernel K.elf]

The default model is ../shared/models/stories260K.bin with tok512.bin; for a
stories15M-sized one: build/host/gen_gguf /tmp/s15.gguf --shape stories15M
--type Q8_0 --spm ../shared/models/tokenizer.bin. Measurements, not checks.
"""
import argparse
import http.client
import json
import os
import re
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "qemu"))
from harness import Context  # noqa: E402
from cases_llm import answer, set_all  # noqa: E402
from cases_net import free_port  # noqa: E402

DECODE = re.compile(r"decode ([0-9.]+) tok/s")
TOKENS = re.compile(r"\[(\d+) tokens")


def post(port, body):
    """(answer JSON, seconds) of a whole answer."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    start = time.monotonic()
    conn.request("POST", "/v1/completions", json.dumps(body), {"Content-Type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    seconds = time.monotonic() - start
    conn.close()
    if r.status != 200:
        raise SystemExit(f"POST /v1/completions: {r.status} {data[:300]!r}")
    return json.loads(data), seconds


def post_stream(port, body):
    """(last chunk, number of text chunks, first chunk's time, last chunk's
    time), times from the request."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    start = time.monotonic()
    conn.request("POST", "/v1/completions", json.dumps(dict(body, stream=True)),
                 {"Content-Type": "application/json"})
    r = conn.getresponse()
    if r.status != 200:
        raise SystemExit(f"POST /v1/completions (stream): {r.status} {r.read()[:300]!r}")
    first = last = None
    chunks, final = 0, None
    while True:
        line = r.fp.readline()
        if not line:
            break
        if not line.startswith(b"data: "):
            continue
        if line.strip() == b"data: [DONE]":
            break
        chunk = json.loads(line[6:])
        if chunk["choices"][0]["finish_reason"] is not None:
            final = chunk
            continue
        now = time.monotonic() - start
        first = now if first is None else first
        last = now
        chunks += 1
    conn.close()
    if final is None or first is None:
        raise SystemExit("the stream ended without its last chunk")
    return final, chunks, first, last


def after_api_line(vm, path):
    """Past the request's console line and the prompt shown again after it,
    so that the next console command reads its own output."""
    vm.expect(re.compile(rf"api: POST {path} 200".encode()), timeout=60)
    vm.wait_prompt(timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", default=os.path.join(ROOT, "..", "shared"))
    ap.add_argument("--ovmf", default="/usr/share/ovmf/OVMF.fd")
    ap.add_argument("--model")
    ap.add_argument("--tokenizer")
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--tokens", type=int, default=64, help="new tokens per answer")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--smp", type=int, default=1)
    ap.add_argument("--memory", default="2G")
    ap.add_argument("--kernel", help="another kernel.elf (default build/kernel.elf)")
    args = ap.parse_args()

    ctx = Context(args.shared, args.ovmf)
    model = args.model or ctx.model("stories260K.bin")
    files, cfg = [model], f"model={os.path.basename(model)}\n"
    if args.tokenizer or not args.model:
        tokenizer = args.tokenizer or ctx.model("tok512.bin")
        files.append(tokenizer)
        cfg += f"tokenizer={os.path.basename(tokenizer)}\n"
    img = ctx.image("bench-api", files, cfg + "net=dhcp\n", ramdisk_partition=True, kernel=args.kernel)
    port = free_port()
    vm = ctx.boot(img, memory=args.memory, smp=args.smp,
                  nic=f"user,model=virtio-net-pci,hostfwd=tcp:127.0.0.1:{port}-:8080")
    with vm:
        vm.expect("api: HTTP on port 8080", timeout=600)
        vm.wait_prompt(timeout=60)
        tok = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        tok.request("POST", "/tokenize", json.dumps({"content": args.prompt, "add_special": True}))
        prompt_n = len(json.loads(tok.getresponse().read())["tokens"])
        tok.close()
        after_api_line(vm, "/tokenize")
        # The console's steps count positions, the prompt's included.
        set_all(vm, temp=0, steps=prompt_n + args.tokens - 1)
        body = {"prompt": args.prompt, "max_tokens": args.tokens, "temperature": 0}
        rows = {k: [] for k in ("console", "api", "api_client", "stream", "stream_client", "ttft", "n")}
        for i in range(args.rounds):
            _, stats = answer(vm, args.prompt, timeout=1200)
            line = stats.group(0)
            rows["console"].append(float(DECODE.search(line).group(1)))
            rows["n"].append(int(TOKENS.search(line).group(1)))
            got, seconds = post(port, body)
            n = got["usage"]["completion_tokens"]
            rows["api"].append(got["timings"]["predicted_per_second"])
            rows["api_client"].append(n / seconds)
            after_api_line(vm, "/v1/completions")
            final, chunks, first, last = post_stream(port, body)
            rows["stream"].append(final["timings"]["predicted_per_second"])
            n = final["usage"]["completion_tokens"]
            rows["stream_client"].append((n - 1) / (last - first) if last > first else 0)
            rows["ttft"].append(first * 1000)
            after_api_line(vm, "/v1/completions")
            print(f"round {i + 1}: console {rows['console'][-1]:.1f}, api {rows['api'][-1]:.1f}, "
                  f"stream {rows['stream'][-1]:.1f} tok/s (decode); first streamed token "
                  f"{rows['ttft'][-1]:.0f} ms", flush=True)
        vm.send("/poweroff\r")
    med = {k: statistics.median(v) for k, v in rows.items()}
    # Ratios per round (the three ran back to back), then their median: a
    # shared machine's speed drifts more between rounds than within one.
    ratio = {k: statistics.median(a / c for a, c in zip(rows[k], rows["console"])) for k in ("api", "stream")}
    name = os.path.basename(model)
    print(f"\n{name}, prompt {args.prompt!r} ({prompt_n} tokens), {med['n']:.0f} new tokens, "
          f"medians of {args.rounds} rounds, -smp {args.smp}, TCG, virtio-net")
    print("| path | decode tok/s (kernel) | vs console (median of the rounds' ratios) | client tok/s |")
    print("|---|---|---|---|")
    print(f"| console | {med['console']:.1f} | 1.000 | |")
    print(f"| API, whole | {med['api']:.1f} | {ratio['api']:.3f} | {med['api_client']:.1f} |")
    print(f"| API, streamed | {med['stream']:.1f} | {ratio['stream']:.3f} | "
          f"{med['stream_client']:.1f} |")
    print(f"time to first streamed token: {med['ttft']:.0f} ms (median; min {min(rows['ttft']):.0f}, "
          f"max {max(rows['ttft']):.0f})")


if __name__ == "__main__":
    main()
