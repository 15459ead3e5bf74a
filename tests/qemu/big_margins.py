"""big_margins.py - how safe a make test-big comparison is, measured on the
host in minutes instead of QEMU hours: for a GGUF file and candidate prompts
(cases_big_models.prompt(k)), llama.cpp's greedy continuation with its top-1
margin at every step, and, with --llmrun, llmrun's own margins at the same
steps (teacher-forced on llama.cpp's tokens, the kernel's SSE2 set: the same
code as the kernel, so the same sums as under QEMU) and the largest
difference between the two programs' margins.

  python3 tests/qemu/big_margins.py MODEL.gguf [--prompts 0,1,2] [--llmrun build/host/llmrun]
"""
import argparse
import array
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases_big_models as big  # noqa: E402
from reference import llama_ref  # noqa: E402


def llmrun_margins(llmrun, model, ids, start, simd):
    """llmrun's (argmax, top-1 minus top-2) after each of ids[start - 1:]."""
    with tempfile.TemporaryDirectory() as work:
        out = os.path.join(work, "logits.f32")
        r = subprocess.run([llmrun, model, "--kv", big.KV, "--simd", simd, "--logits-out", out, "--tokens",
                            " ".join(map(str, ids))], capture_output=True, timeout=3600)
        if r.returncode != 0:
            sys.exit(f"llmrun: exit {r.returncode}: {r.stderr.decode(errors='replace')[-300:]}")
        width = os.path.getsize(out) // 4 // len(ids)
        values = array.array("f")
        with open(out, "rb") as f:
            f.seek((start - 1) * width * 4)
            values.frombytes(f.read())
    result = []
    for r in range(len(ids) - start + 1):
        row = values[r * width:(r + 1) * width]
        order = sorted(range(width), key=row.__getitem__, reverse=True)[:2]
        result.append((order[0], row[order[0]] - row[order[1]], row))
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--prompts", default="0")
    ap.add_argument("--llmrun")
    ap.add_argument("--steps", type=int, default=big.NEW_TOKENS + 1)
    ap.add_argument("--simd", default=big.SIMD, help="llmrun's kernel sets, comma separated")
    a = ap.parse_args()
    for k in map(int, a.prompts.split(",")):
        ref = llama_ref.greedy(a.model, a.steps, prompt=big.prompt(k), kv=big.KV)
        margins = ref["margins"]
        line = (f"prompt {k}: {len(ref['prompt_ids'])} tokens, llama.cpp's smallest margin {min(margins):.4f} "
                f"(steps {[round(m, 3) for m in margins]})")
        if a.llmrun:
            ids = ref["prompt_ids"] + ref["tokens"][:-1]
            for simd in a.simd.split(","):
                ours = llmrun_margins(a.llmrun, a.model, ids, len(ref["prompt_ids"]), simd)
                same = sum(o[0] == w for o, w in zip(ours, ref["tokens"]))
                # llmrun's logit of llama.cpp's choice minus its logit of llama.cpp's second choice.
                theirs = [o[2][w] - o[2][s] for o, w, s in zip(ours, ref["tokens"], ref["seconds"])]
                diff = max(abs(m - t) for m, t in zip(margins, theirs))
                line += (f"; llmrun --simd {simd}: {same}/{len(ours)} argmax equal, the same pair's margin "
                         f"{[round(t, 3) for t in theirs]}, largest difference {diff:.4f}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
