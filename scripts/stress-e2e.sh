#!/usr/bin/env bash
# The end-to-end tier (pytest -m e2e: tests/conftest.py end_to_end) RUNS times in a row (default
# 10) while two busy loops keep both CPUs of this 2-core machine loaded, as `make test` runs it:
# side by side on PY_WORKERS workers, then the serial tests alone. A test that fails here is
# flaky under load: its bound does not come from what it measured or injected (issue 37). Prints
# every failure and error with its test id and run number, and a summary; exit 1 if any run
# failed. The busy loops are stopped on any exit, Ctrl-C included. Logs: $STRESS_LOGS (default a
# temporary folder, kept and named at the end); a failed run also keeps its tests' temporary
# folders there (t<N>/: the failed test's saved run, its agents' logs), a passed run's go.
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-10}"
case "$runs" in ''|*[!0-9]*|0) echo "stress-e2e: RUNS must be a positive integer, got '$runs'" >&2; exit 2 ;; esac
py="${PY:-python3}"
workers="${PY_WORKERS:-4}"
logs="${STRESS_LOGS:-$(mktemp -d /tmp/mwperf-stress.XXXXXX)}"
mkdir -p "$logs"
loops=()
stop_loops() {
    for pid in "${loops[@]}"; do kill "$pid" 2>/dev/null; done
    wait "${loops[@]}" 2>/dev/null
    loops=()
}
trap 'stop_loops' EXIT
trap 'stop_loops; exit 130' INT TERM
for _ in 1 2; do
    ( trap - INT TERM; while :; do :; done ) &
    loops+=("$!")
done
echo "stress-e2e: $runs runs of the end-to-end tier beside 2 busy loops (pids ${loops[*]}); logs in $logs"
failed_runs=0
started=$(date +%s)
for run in $(seq 1 "$runs"); do
    t0=$(date +%s)
    log="$logs/run$run.log"
    tmp="$logs/t$run"  # short: socket paths under it stay as short as pytest's own
    rm -rf "$tmp" && mkdir -p "$tmp"  # pytest makes --basetemp itself, not its parents
    status=0
    "$py" -m pytest -q -rfE -p no:cacheprovider -n "$workers" --dist loadgroup \
        --basetemp "$tmp/s" -m "e2e and not serial and not refs" >"$log" 2>&1 || status=$?
    "$py" -m pytest -q -rfE -p no:cacheprovider --basetemp "$tmp/a" \
        -m "serial and not refs" >>"$log" 2>&1 || status=$?
    failures=$(grep -E '^(FAILED|ERROR) ' "$log" || true)
    summary=$(grep -E '^(=+ )?[0-9]+ (passed|failed|errors?|skipped|deselected).* in [0-9.]+s' "$log" | sed 's/=//g; s/^ *//; s/ *$//' | paste -sd ';' -)
    if [ "$status" -ne 0 ] || [ -n "$failures" ]; then
        failed_runs=$((failed_runs + 1))
        echo "run $run: FAILED after $(( $(date +%s) - t0 )) s ($summary)"
        [ -n "$failures" ] && sed "s/^/  run $run: /" <<<"$failures"
        [ -z "$failures" ] && echo "  run $run: pytest exited $status without a failed test (see $log)"
        echo "  run $run: its tests' temporary folders kept in $tmp"
    else
        echo "run $run: passed in $(( $(date +%s) - t0 )) s ($summary)"
        rm -rf "$tmp"
    fi
done
echo "stress-e2e: $((runs - failed_runs)) of $runs runs passed in $(( $(date +%s) - started )) s beside 2 busy loops; logs in $logs"
[ "$failed_runs" -eq 0 ]
