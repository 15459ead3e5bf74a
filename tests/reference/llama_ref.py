"""llama_ref.py - the Python tests' door to llama.cpp: runs llama_ref.mjs
(node-llama-cpp, installed by tools/install-references.sh) and returns its
JSON answer. missing() says why the reference cannot run (the tests then
print a `skip - ` line, which CI counts as a failure: tests/run_host_tests.py);
compare_greedy() is the one rule every greedy comparison follows."""
import json
import os
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.join(HERE, "llama_ref.mjs")
PACKAGE = os.path.join(HERE, "node_modules", "node-llama-cpp", "package.json")


class ReferenceError(Exception):
    pass


def missing():
    """None when the reference can run, else why not."""
    if not shutil.which("node"):
        return "node is not installed (sh tools/install-deps.sh)"
    if not os.path.exists(PACKAGE):
        return f"{PACKAGE} is missing (sh tools/install-references.sh)"
    return None


def run(args, timeout=900):
    r = subprocess.run(["node", DRIVER, *map(str, args)], capture_output=True, timeout=timeout)
    if r.returncode != 0:
        raise ReferenceError(f"llama_ref.mjs {' '.join(map(str, args[:2]))}: exit {r.returncode}: "
                             f"{r.stderr.decode(errors='replace')[-600:]}")
    return json.loads(r.stdout)


def _with_ids(args, ids):
    """args plus --ids FILE holding ids, and the file's path (to delete)."""
    fd, path = tempfile.mkstemp(suffix=".json", prefix="llama_ref_")
    with os.fdopen(fd, "w") as f:
        json.dump(list(map(int, ids)), f)
    return [*args, "--ids", path], path


def version():
    return run(["version"])["reference"]


def tokenize(model, text):
    return run(["tokenize", model, text])["ids"]


def greedy(model, n, prompt=None, ids=None, kv="f32", ctx=None, timeout=900):
    """llama.cpp's prompt ids (BOS added as llama.cpp adds it), its n greedy
    tokens and each step's margin (top-1 minus top-2 logit)."""
    args = ["greedy", model, n, "--kv", kv] + (["--ctx", ctx] if ctx else [])
    if ids is None:
        return run(args + ["--prompt", prompt], timeout)
    args, path = _with_ids(args, ids)
    try:
        return run(args, timeout)
    finally:
        os.remove(path)


def top1(model, ids, start, kv="f32", ctx=None, timeout=900):
    """Teacher-forced over ids: for each position from start on, llama.cpp's
    top-1 token there (predicted from the ids before it) and its margin."""
    args, path = _with_ids(["top1", model, "--from", start, "--kv", kv] + (["--ctx", ctx] if ctx else []), ids)
    try:
        return run(args, timeout)
    finally:
        os.remove(path)


# Our kernel sets' logits differ from each other by up to 0.031 on gen_gguf's small Q4_K_M models (scalar,
# SSE2, AVX2 and AVX-512 over the same file, measured with --logits-out), and llama.cpp sums in orders of its
# own: a step where both programs' top two are closer than this is a coin toss between summation orders.
NEAR_TIE = 0.035


def compare_greedy(ours, ref, tie=0.0, gaps=None):
    """(True, detail) when ours equals llama.cpp's greedy tokens (ref: a greedy
    or top1 answer); else (False, where they part and llama.cpp's margin
    there). ours: per step, the list of tokens at our maximum logit (one
    unless logits are exactly equal). An exact tie in both programs that
    holds llama.cpp's token (its margin 0, its token at our maximum) agrees.
    gaps: per step, our maximum logit minus our logit of llama.cpp's token;
    where given, a step where both llama.cpp's margin and our gap are below
    NEAR_TIE (both programs see a near tie) agrees, at most one step in
    eight. tie: a step where llama.cpp's own top-1 margin is below it (a near
    tie that rounding in another KV type can flip) also accepts llama.cpp's
    second choice. detail counts each kind of step. More than half the steps
    exact ties fail: such a model cannot tell a right answer from a wrong one."""
    want, margins, seconds = ref["tokens"], ref["margins"], ref["seconds"]
    ours = [list(o) for o in ours]
    exact = ties = near = 0
    for i, (maxima, b) in enumerate(zip(ours, want)):
        if maxima == [b]:
            continue
        if margins[i] == 0 and b in maxima:
            exact += 1
            continue
        if gaps is not None and margins[i] < NEAR_TIE and gaps[i] < NEAR_TIE and (near + 1) * 8 <= len(want):
            near += 1
            continue
        if margins[i] < tie and maxima == [seconds[i]]:
            ties += 1
            continue
        gap = f", ours {gaps[i]:.4f} above it" if gaps is not None else ""
        return False, (f"step {i}: ours {maxima[:4]}, llama.cpp {b} (its top-1 margin there {margins[i]:.4f}, "
                       f"second choice {seconds[i]}{gap}); ours {[m[0] for m in ours[:i + 3]]} vs {list(want[:i + 3])}")
    if len(ours) < len(want):
        return False, f"ours has {len(ours)} tokens, llama.cpp {len(want)}"
    if exact * 2 > len(want):
        return False, f"{exact} of {len(want)} steps are exact ties: this model proves nothing (rows repeat)"
    clear = [m for m in margins if m > 0]
    tied = f", {ties} near ties (margin < {tie}) took llama.cpp's second choice" if tie else ""
    exact_text = f", {exact} exact ties (equal logits in both)" if exact else ""
    near_text = f", {near} near ties in both (under {NEAR_TIE})" if near else ""
    return True, (f"{len(want)} tokens, llama.cpp's smallest nonzero margin {min(clear, default=0):.4f}"
                  f"{exact_text}{near_text}{tied}")
