# mwperf — run · test · bench · setup. Every target installs what it needs (idempotent).
SHELL := /bin/bash
PY ?= python3
RESULTS ?= results

.PHONY: run test bench setup build bridges rust-test py-test clean

## run: install, build, run the default side-by-side suite (every transport built in), write results + summary
run: setup build
	mwperf run default --results $(RESULTS)

## test: all tests (Rust unit + conformance, Python unit + end-to-end)
test: setup build rust-test py-test

## bench: the benchmarks against sockperf, written into BENCHMARKS.md
bench: setup build
	@command -v sockperf >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sockperf)
	$(PY) benchmarks/bench.py --reps 5 --seconds 5 --write
	$(PY) benchmarks/bench_cyclonedds.py --reps 5 --seconds 4 --write

## setup: Debian packages of the middleware (mosquitto, rosmaster, relay, Cyclone DDS) if missing, the Python package
setup:
	@command -v cargo >/dev/null || { echo "mwperf: cargo (Rust) is required: https://rustup.rs" >&2; exit 1; }
	@bash scripts/system-deps.sh
	@$(PY) -c "import mwperf, click, yaml, jsonschema, duckdb" 2>/dev/null || PIP_BREAK_SYSTEM_PACKAGES=1 $(PY) -m pip install -q -e .

build:
	cargo build --release --quiet

## bridges: the bridges mwperf compiles itself (zenoh-plugin-ros2dds + Cyclone DDS from source; minutes, not in 'build')
bridges: setup
	@bash scripts/system-deps.sh bridges
	nice -n 10 cargo build --release --manifest-path crates/mwperf-bridge-zenoh/Cargo.toml

rust-test:
	cargo test --release --quiet --workspace

py-test:
	$(PY) -m pytest -q

clean:
	cargo clean
	rm -rf $(RESULTS)
