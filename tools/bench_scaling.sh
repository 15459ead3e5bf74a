#!/bin/bash
# bench_scaling.sh - thread scaling against llama.cpp on a bare many-core
# machine (issue 24, item 4): builds llama.cpp natively from a carried
# source tarball, writes the Llama-3.2-1B shape as F16 with llama.cpp's
# gguf-py, quantises it to Q4_0 and Q8_0 with llama-quantize, then runs
# build/host/bench_pp_tg against llama-bench (pp128, tg128, interleaved) at
# 1, 2, 4, 8 and 16 threads with tools/bench_compare.py, and prints its
# markdown table. Measuring stops cleanly at BUDGET seconds from the start
# (default 420), printing what it has.
#
# 1. Here (a llama.cpp checkout at ../llama.cpp, `make host` done):
#        tools/bench_scaling.sh --pack       # fills build/scaling (~12 MiB)
# 2. On the device machine (the `run` tool: carry ["build/scaling"],
#    timeout_s 480; it needs gcc, cmake, python3 with numpy; ninja if there):
#        bash tools/bench_scaling.sh 2>&1 | tail -c 11000
#    Logs go to $OUT (6 files): env.txt, build.log, files.log, pairs.log
#    (every measured pair as it came), compare.log (read bandwidth, the rows
#    and the markdown table), timing.txt.
#
# Environment: BUDGET (s, 420), THREADS (1,2,4,8,16), TYPES (Q4_0,Q8_0),
# SHAPE (llama-3.2-1b), ROUNDS (3), ROUNDS_FOR (1=1,2=2: fewer rounds at
# low thread counts, the slow ones), TESTS (pp128,tg128), JOBS (nproc),
# PACK (build/scaling), WORK (/tmp/bench-scaling), LLAMA_BIN (a folder with
# llama-bench and llama-quantize already built: no build, for a test run),
# BUILD_OURS (set: build ours from this tree even when the carried ones run).
set -u
cd "$(dirname "$0")/.."
PACK=${PACK:-build/scaling}
if [ "${1:-}" = "--pack" ]; then
    set -e
    LLAMA=${LLAMA_CPP_DIR:-../llama.cpp}
    mkdir -p "$PACK/vocab"
    # The sources llama-bench and llama-quantize need, and gguf-py (the GPU
    # backends and the server's web UI left out: nothing here builds them).
    (cd "$LLAMA" && tar -cJf - --exclude=__pycache__ --exclude=tools/server --exclude=tools/ui \
        --exclude='ggml/src/ggml-cuda' --exclude='ggml/src/ggml-vulkan' --exclude='ggml/src/ggml-sycl' \
        --exclude='ggml/src/ggml-opencl' --exclude='ggml/src/ggml-hexagon' --exclude='ggml/src/ggml-metal' \
        --exclude='ggml/src/ggml-cann' --exclude='ggml/src/ggml-webgpu' --exclude='ggml/src/ggml-et' \
        --exclude='ggml/src/ggml-openvino' --exclude='ggml/src/ggml-virtgpu' \
        CMakeLists.txt LICENSE cmake ggml src include common vendor tools gguf-py licenses app) \
        >"$PACK/llama-src.tar.xz"
    # Our binaries pick their kernels at run time (no -march=native): they run on any x86-64.
    make -j2 build/host/bench_pp_tg build/host/bench_bandwidth >/dev/null
    strip -o "$PACK/bench_pp_tg" build/host/bench_pp_tg
    strip -o "$PACK/bench_bandwidth" build/host/bench_bandwidth
    cp -f ../shared/models/vocab/llama3.gguf ../shared/models/vocab/ggml-vocab-llama-spm.gguf "$PACK/vocab/"
    echo "${LLAMA_COMMIT:-$(cat "$LLAMA/.commit" 2>/dev/null || echo d32676d)}" >"$PACK/llama-commit"
    du -sh "$PACK"
    exit 0
fi

BUDGET=${BUDGET:-420}
THREADS=${THREADS:-1,2,4,8,16}
TYPES=${TYPES:-Q4_0,Q8_0}
SHAPE=${SHAPE:-llama-3.2-1b}
ROUNDS=${ROUNDS:-3}
ROUNDS_FOR=${ROUNDS_FOR:-1=1,2=2}
TESTS=${TESTS:-pp128,tg128}
JOBS=${JOBS:-$(nproc)}
WORK=${WORK:-/tmp/bench-scaling}
OUT=${OUT:-$WORK/out}
PYTHON=${PYTHON:-python3}
mkdir -p "$WORK" "$OUT"
step() { echo "[$SECONDS s] $*" | tee -a "$OUT/timing.txt"; }
[ -f "$PACK/llama-src.tar.xz" ] || { echo "bench_scaling: no $PACK/llama-src.tar.xz (run --pack here, carry $PACK)"; exit 1; }

{ uname -a; nproc; lscpu 2>/dev/null | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node\(s\)|L3'
  gcc --version | head -1; cmake --version | head -1; $PYTHON -c 'import numpy; print("numpy", numpy.__version__)'
  grep MemTotal /proc/meminfo; cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; } >"$OUT/env.txt" 2>&1
cat "$OUT/env.txt"

step "building llama.cpp (GGML_NATIVE=ON, -j$JOBS)"
LL=$WORK/llama.cpp
if [ -n "${LLAMA_BIN:-}" ]; then
    # A test run beside an existing build: the tarball gives gguf-py only.
    rm -rf "$LL" && mkdir -p "$LL/build" && tar -xJf "$PACK/llama-src.tar.xz" -C "$LL" gguf-py
    ln -s "$(cd "$LLAMA_BIN" && pwd)" "$LL/build/bin"
elif [ ! -x "$LL/build/bin/llama-bench" ]; then
    rm -rf "$LL" && mkdir -p "$LL" && tar -xJf "$PACK/llama-src.tar.xz" -C "$LL"
    gen=(); command -v ninja >/dev/null && gen=(-G Ninja)
    { cmake -S "$LL" -B "$LL/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_CCACHE=OFF \
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
        -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
        && cmake --build "$LL/build" -j "$JOBS" --target llama-bench llama-quantize; } >"$OUT/build.log" 2>&1
fi
[ -x "$LL/build/bin/llama-bench" ] || { tail -30 "$OUT/build.log"; echo "bench_scaling: llama.cpp did not build"; exit 1; }

step "our binaries"
OURS=$WORK/ours
mkdir -p "$OURS"
cp "$PACK/bench_pp_tg" "$PACK/bench_bandwidth" "$OURS/" 2>/dev/null
if [ -n "${BUILD_OURS:-}" ] || ! "$OURS/bench_bandwidth" --threads 1 --sizes 1 >/dev/null 2>&1; then
    # The carried ones do not run here: build them from this tree (no make needed).
    step "building bench_pp_tg and bench_bandwidth with gcc"
    flags="-std=gnu11 -O2 -I. -fno-builtin -fno-tree-loop-distribute-patterns -msse2 -mfpmath=sse -ffp-contract=off -fno-math-errno"
    mkdir -p "$OURS/obj"
    ls lib/*.c llm/*/*.c llm/*/*/*.c 2>/dev/null |
        xargs -P "$JOBS" -I{} sh -c "gcc $flags -c {} -o $OURS/obj/\$(echo {} | tr / _).o" >>"$OUT/build.log" 2>&1
    for t in bench_pp_tg bench_bandwidth; do
        gcc $flags "tools/$t.c" "$OURS"/obj/*.o -o "$OURS/$t" -lm -ldl -lpthread >>"$OUT/build.log" 2>&1
    done
fi

step "files: $SHAPE F16 by gguf-py, then llama-quantize $TYPES"
$PYTHON tools/bench_files.py --shape "$SHAPE" --types "$TYPES" --dir "$WORK/models" --gguf-py "$LL/gguf-py" \
    --quantize "$LL/build/bin/llama-quantize" \
    --vocab "$PACK/vocab/$([ "$SHAPE" = stories110M ] && echo ggml-vocab-llama-spm.gguf || echo llama3.gguf)" \
    >"$OUT/files.log" 2>&1 || { cat "$OUT/files.log"; exit 1; }
ls -l "$WORK/models" >>"$OUT/files.log"

left=$((BUDGET - SECONDS))
# bench_compare's --budget 0 means no limit: never hand it that.
[ "$left" -ge 30 ] || { step "no time left to measure ($left s of $BUDGET)"; exit 1; }
step "measuring: $TESTS at $THREADS threads, up to $ROUNDS rounds ($ROUNDS_FOR), $left s left of $BUDGET"
LLAMA_COMMIT=$(cat "$PACK/llama-commit" 2>/dev/null) $PYTHON tools/bench_compare.py --files llama --shape "$SHAPE" \
    --types "$TYPES" --threads "$THREADS" --tests "$TESTS" --rounds "$ROUNDS" --rounds-for "$ROUNDS_FOR" \
    --budget "$left" --markdown --dir "$WORK/models" --ours "$OURS/bench_pp_tg" --bandwidth "$OURS/bench_bandwidth" \
    --llama-bench "$LL/build/bin/llama-bench" 2>"$OUT/pairs.log" | tee "$OUT/compare.log"
step "done"
cat "$OUT/timing.txt"
