#!/usr/bin/env bash
# The transport conformance suites with libmwperf_layers.so preloaded (issue 27: "the interposer
# never breaks the middleware"); 'make test' runs them only here (issue 37: one run proves both
# the transports and the interposer). Builds the interposer and the transports' test binary
# (release profile, the transports of the default features, like 'make rust-test'), then runs
# that binary — not cargo — with LD_PRELOAD; the brokers and daemons it starts inherit the
# preload too. FILTER (default conformance::, i.e. both conformance:: and service_conformance::)
# selects the tests; arguments go to the test binary (--test-threads 1, --exact, …).
# Prints the events the interposer logged per process (proof that it saw the traffic).
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
filter="${FILTER:-conformance::}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
# --workspace, as 'make build' and 'make rust-test' build: cargo unifies features over the
# packages it is given, and '-p one-package' rebuilt shared dependencies with other features
# (1.5 min on a cold cache) where the workspace's artifacts are already there
cargo build --release --quiet --workspace
lib="$target/release/libmwperf_layers.so"
bin=$(cargo test --release --quiet --workspace --no-run --message-format=json |
      python3 -c 'import json, sys
print([m["executable"] for m in map(json.loads, sys.stdin)
       if m.get("reason") == "compiler-artifact" and m.get("executable")
       and m["target"]["name"] == "transports"][-1])')
dumps=$(mktemp -d)
trap 'rm -rf "$dumps"' EXIT
status=0
LD_PRELOAD="$lib${LD_PRELOAD:+:$LD_PRELOAD}" MWPERF_LAYERS_DUMP="$dumps/%p.csv" "$bin" "$filter" "$@" || status=$?
events=0 files=0
for f in "$dumps"/*.csv; do
    [ -e "$f" ] || continue
    n=$(tail -n 1 "$f" | sed -n 's/^# events=\([0-9]*\).*/\1/p')
    events=$((events + ${n:-0})) files=$((files + 1))
done
echo "conformance-preloaded ($filter): exit $status; $files processes with $lib, $events header events logged"
exit $status
