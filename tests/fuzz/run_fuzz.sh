#!/bin/sh
# run_fuzz.sh - runs the libFuzzer harnesses built into build/fuzz.
#
#   run_fuzz.sh fuzz SECONDS JOBS NAME...   fuzz each NAME for SECONDS, JOBS at
#       a time; new inputs go to build/fuzz/work/NAME, crashes to
#       build/fuzz/artifacts/NAME, logs to build/fuzz/logs/NAME.log
#   run_fuzz.sh replay NAME...              each NAME over tests/fuzz/corpus/NAME
#       and tests/fuzz/regressions/NAME once (no mutation); fails on any crash;
#       ends with "fuzz: N passed, N failed, N skipped"
set -u
FUZZ_DIR=build/fuzz
mode=${1:?mode: fuzz or replay}
shift

# Directories that exist, for libFuzzer's corpus arguments.
existing() {
    for d in "$@"; do [ -d "$d" ] && printf '%s ' "$d"; done
}

if [ "$mode" = replay ]; then
    passed=0 failed=0 skipped=0
    for name in "$@"; do
        dirs=$(existing tests/fuzz/corpus/$name tests/fuzz/regressions/$name)
        if [ -z "$dirs" ]; then
            # CI runs every check: a harness with nothing to replay is a failure there.
            case "${CI:-}" in
            "" | 0 | false | no)
                echo "skip - fuzz-replay $name: no saved inputs"
                skipped=$((skipped + 1)) ;;
            *)
                echo "FAIL - fuzz-replay $name: no saved inputs, and CI is set"
                failed=$((failed + 1)) ;;
            esac
            continue
        fi
        count=$(find $dirs -type f | wc -l)
        log=$FUZZ_DIR/logs/replay-$name.log
        mkdir -p $FUZZ_DIR/logs
        # -runs=0: execute the given corpora once, no mutation.
        $FUZZ_DIR/fuzz_$name -runs=0 -rss_limit_mb=2048 $dirs >"$log" 2>&1
        rc=$?
        if [ $rc -eq 0 ]; then
            echo "ok - fuzz-replay $name ($count inputs)"
            passed=$((passed + 1))
        elif [ $rc -eq 78 ] && head -n1 "$log" | grep -q 'is missing'; then
            # The harness's test data (a shared vocabulary) is missing: its first line says which
            # (78, EX_CONFIG: libFuzzer's own exit status for a crash is 77).
            why=$(head -n1 "$log")
            case "${CI:-}" in
            "" | 0 | false | no)
                echo "skip - fuzz-replay $name: $why"
                skipped=$((skipped + 1)) ;;
            *)
                echo "FAIL - fuzz-replay $name: $why, and CI is set"
                failed=$((failed + 1)) ;;
            esac
        else
            echo "FAIL - fuzz-replay $name: crash or leak, see $log"
            grep -m3 -E 'ERROR|invariant|runtime error' "$log"
            failed=$((failed + 1))
        fi
    done
    # The closing line every runner ends with (tests/test_summary.py).
    summary="fuzz: $passed passed, $failed failed, $skipped skipped"
    if [ -n "${TEST_SUMMARY_DIR:-}" ]; then
        mkdir -p "$TEST_SUMMARY_DIR" && echo "$summary" >"$TEST_SUMMARY_DIR/fuzz.summary"
    fi
    echo "$summary"
    [ $failed -eq 0 ]
    exit
fi

[ "$mode" = fuzz ] || { echo "run_fuzz.sh: unknown mode '$mode'" >&2; exit 2; }
seconds=${1:?seconds}
jobs=${2:?jobs}
shift 2
mkdir -p $FUZZ_DIR/logs
status=0
run_one() {
    name=$1
    mkdir -p $FUZZ_DIR/work/$name $FUZZ_DIR/artifacts/$name
    dirs=$(existing tests/fuzz/corpus/$name tests/fuzz/regressions/$name build/fuzz-corpus/$name)
    # tests/fuzz/fuzz_NAME.options: flags of that harness's own (given last, they win).
    options=$(cat tests/fuzz/fuzz_$name.options 2>/dev/null)
    $FUZZ_DIR/fuzz_$name -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=8192 -timeout=10 \
        -print_final_stats=1 -artifact_prefix=$FUZZ_DIR/artifacts/$name/ $options \
        $FUZZ_DIR/work/$name $dirs >$FUZZ_DIR/logs/$name.log 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' $FUZZ_DIR/logs/$name.log)
    crashes=$(ls $FUZZ_DIR/artifacts/$name | wc -l)
    echo "fuzz $name: exit $rc, ${execs:-?} executions, $crashes artifacts in $FUZZ_DIR/artifacts/$name"
    return $rc
}
# Simple job pool: JOBS harnesses at a time.
running=0
pids=""
for name in "$@"; do
    run_one "$name" &
    pids="$pids $!"
    running=$((running + 1))
    if [ $running -ge "$jobs" ]; then
        for p in $pids; do wait $p || status=1; done
        pids=""
        running=0
    fi
done
for p in $pids; do wait $p || status=1; done
exit $status
