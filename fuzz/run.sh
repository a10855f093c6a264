#!/usr/bin/env bash
# make fuzz: build the fuzz targets with AFL++ instrumentation (cargo-afl) and run each for
# FUZZ_SECONDS; exit 1 when any target found a crash, naming the files (docs/fuzzing.md).
#
#   FUZZ_SECONDS=60         seconds per target
#   FUZZ_TARGETS="wire mqtt" the targets to run (default: all of fuzz/Cargo.toml's)
#   FUZZ_OUT=fuzz/out        AFL's output folders (<target>/default/{queue,crashes,hangs})
#   FUZZ_TARGET_DIR          cargo's target folder for the instrumented build (default:
#                            $CARGO_TARGET_DIR/afl or target/afl: apart from the product build)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_EACH=${FUZZ_SECONDS:-60}
OUT=${FUZZ_OUT:-$ROOT/fuzz/out}
case $OUT in /*) ;; *) OUT=$ROOT/$OUT ;; esac
export CARGO_TARGET_DIR=${FUZZ_TARGET_DIR:-${CARGO_TARGET_DIR:-$ROOT/target}/afl}
ALL=$(sed -n 's/^name = "\(.*\)"$/\1/p' fuzz/Cargo.toml | grep -v '^mwperf-fuzz$')
TARGETS=${FUZZ_TARGETS:-$ALL}

command -v cargo >/dev/null || { echo "mwperf fuzz: cargo (Rust) is required" >&2; exit 1; }
if ! cargo afl --version >/dev/null 2>&1; then
    # the same minor version as the afl crate in fuzz/Cargo.lock (they must agree)
    echo "mwperf fuzz: installing cargo-afl (cargo install cargo-afl@0.18)" >&2
    cargo install --locked cargo-afl --version "^0.18"
fi
# AFL++ itself is built by cargo-afl once per Rust toolchain (it says so when already built)
cargo afl config --build >/dev/null 2>&1 || true

echo "mwperf fuzz: building the targets ($CARGO_TARGET_DIR)" >&2
nice -n 10 cargo afl build --release --quiet --manifest-path fuzz/Cargo.toml

# This VM (and most CI runners) has no CPU frequency governor to set and pipes core dumps to
# a handler: AFL would refuse to start over either. One core, lowest priority.
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1 AFL_NO_AFFINITY=1
field() { sed -n "s/^$1 *: *//p" "$2" | head -1; }
failed=()
printf '%-10s %8s %12s %9s %7s %7s %6s\n' target seconds executions execs/s corpus crashes hangs
for t in $TARGETS; do
    out=$OUT/$t
    rm -rf "$out"
    mkdir -p "$out"
    nice -n 19 cargo afl fuzz -V "$SECONDS_EACH" -i "fuzz/corpus/$t" -o "$out" \
        -- "$CARGO_TARGET_DIR/release/$t" >"$out/afl.log" 2>&1 || {
        echo "mwperf fuzz: afl-fuzz failed for $t; see $out/afl.log" >&2
        tail -20 "$out/afl.log" >&2
        failed+=("$t (afl-fuzz did not run)")
        continue
    }
    s=$out/default/fuzzer_stats
    crashes=$(field saved_crashes "$s")
    printf '%-10s %8s %12s %9s %7s %7s %6s\n' "$t" "$(field run_time "$s")" "$(field execs_done "$s")" \
        "$(awk -v e="$(field execs_done "$s")" -v t="$(field run_time "$s")" 'BEGIN { printf "%.0f", t ? e / t : 0 }')" "$(field corpus_count "$s")" "$crashes" "$(field saved_hangs "$s")"
    if [ "${crashes:-0}" != 0 ]; then
        failed+=("$t: $crashes crash(es) in $out/default/crashes/")
    fi
done
if [ ${#failed[@]} -gt 0 ]; then
    echo >&2
    for f in "${failed[@]}"; do echo "mwperf fuzz: $f" >&2; done
    echo "mwperf fuzz: reproduce with: $CARGO_TARGET_DIR/release/<target> < <crash file> (docs/fuzzing.md)" >&2
    exit 1
fi
echo "mwperf fuzz: no crash in $(echo $TARGETS | wc -w) target(s), ${SECONDS_EACH}s each" >&2
