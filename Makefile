# mwperf — run · test · bench · setup. Every target installs what it needs (idempotent).
SHELL := /bin/bash
PY ?= python3
RESULTS ?= results

.PHONY: run test test-fast bench setup build bridges refs rust-test py-test rust-unit py-fast clean layers-conformance fuzz stress

## run: install, build, run the default side-by-side suite (every transport built in), write results,
## its summary and the HTML report ($(RESULTS)/report.html)
run: setup build
	mwperf run default --results $(RESULTS); status=$$?; \
	mwperf report latest --results $(RESULTS) -o $(RESULTS)/report.html && exit $$status

## test: all tests (Rust unit + conformance, Python unit + end-to-end)
test: setup build rust-test layers-conformance py-test

## test-fast: unit tests only (Rust unit tests, Python tests against the fake agent; no
## middleware, no real agent, no end-to-end, none that needs the machine to itself), for the
## edit-test loop
test-fast: setup build rust-unit py-fast

## bench: the benchmarks against sockperf, written into BENCHMARKS.md
bench: setup build
	@command -v sockperf >/dev/null || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq sockperf)
	$(PY) benchmarks/bench.py --reps 5 --seconds 5 --write
	$(PY) benchmarks/bench_cyclonedds.py --reps 5 --seconds 4 --write

# The Python extras each command needs (pyproject.toml): run's suite uses the bridges (the
# Foxglove server's DDS side); the tests use those and the test tools. tests/test_setup_contract.py
# checks that .ci/run installs nothing more than these (lint tools aside).
run: EXTRAS = bridges
test test-fast py-test py-fast stress: EXTRAS = test,bridges
refs: EXTRAS = test
bench: EXTRAS = bridges
EXTRAS ?=

## setup: Debian packages of the middleware (mosquitto, rosmaster, relay, Cyclone DDS) if missing,
## the Python package from this checkout with the EXTRAS the command needs, and the ROS 2
## distributions ROS2_DISTROS from PyPI's wheels, each in a virtual environment of its own under
## ~/.cache/mwperf/ros2/ (python/mwperf/ros2/install.py: once, then a stamp says it is there)
ROS2_DISTROS ?= kilted jazzy
setup:
	@command -v cargo >/dev/null || { echo "mwperf: cargo (Rust) is required: https://rustup.rs" >&2; exit 1; }
	@bash scripts/system-deps.sh
	@$(PY) scripts/python-deps.py $(EXTRAS) || PIP_BREAK_SYSTEM_PACKAGES=1 $(PY) -m pip install -q -e ".$(if $(EXTRAS),[$(EXTRAS)])"
	@$(PY) -m mwperf.ros2.install $(ROS2_DISTROS)

build:
	cargo build --release --quiet

## bridges: the bridges mwperf compiles itself (zenoh-plugin-ros2dds + Cyclone DDS from source; minutes, not in 'build')
bridges: setup
	@bash scripts/system-deps.sh bridges
	nice -n 10 cargo build --release --manifest-path crates/mwperf-bridge-zenoh/Cargo.toml

## refs: the benchmarks' reference programs, built on the middleware versions mwperf uses (zenoh-ref:
## z_ping, z_pong, z_pub_thr, z_sub_thr; iceoryx2-ref: iox2_thr; the Fast DDS throughput program, g++
## against Debian's libfastrtps) into $$CARGO_TARGET_DIR/release; minutes, not in 'build' or 'test'
## Then the tests of those references (pytest -m refs: each delivers and its CPU is measured).
refs: setup
	nice -n 10 cargo build --release --manifest-path benchmarks/zenoh-ref/Cargo.toml
	nice -n 10 cargo build --release --manifest-path benchmarks/iceoryx2-ref/Cargo.toml
	cd benchmarks && $(PY) -c 'import throughput_refs as r; print(r.build_fastdds())'
	MWPERF_REFS_BUILT=1 $(PY) -m pytest -q -m refs tests/test_throughput_refs_e2e.py

## fuzz: coverage-guided fuzzing (AFL++ through cargo-afl, installed if missing) of every parser of
## outside bytes, FUZZ_SECONDS (60) per target; fails naming the files when a target crashed.
## Not part of 'test' (docs/fuzzing.md)
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) bash fuzz/run.sh

# Rust tests build with the release profile, like 'make build' (Cargo.toml: one profile, each
# dependency compiled once). The conformance suites run once, in 'layers-conformance', with the
# --layers interposer preloaded: that run proves both that every transport conforms and that the
# interposer breaks none; here they are skipped.
rust-test:
	cargo test --release --quiet --workspace -- --skip conformance::

rust-unit:
	cargo test --release --quiet --workspace --lib --bins

## layers-conformance: the transport conformance suites (pub/sub and request/response) with the
## --layers interposer (libmwperf_layers.so) preloaded: every transport conforms, and the
## interposer never breaks a middleware
layers-conformance:
	bash scripts/conformance-preloaded.sh

# The Python tests side by side on PY_WORKERS workers (pytest-xdist, from the test extra; they
# mostly wait), those that share something one after another on one worker, then the few that
# need the machine to themselves alone (-m serial): tests/conftest.py (SHARED, SERIAL) says which.
PY_WORKERS ?= 4
XDIST = $$($(PY) -c 'import xdist' 2>/dev/null && echo '-n $(PY_WORKERS) --dist loadgroup')
# (-m refs: the benchmarks' reference programs, run by 'make refs' only.)
# Python's compiled modules go to the build folder, written even where the environment says not
# to write them (PYTHONDONTWRITEBYTECODE, e.g. to keep the tree clean; it stays clean): without
# them each pytest worker compiled and assertion-rewrote every test module anew (~4 s of CPU) and
# every Python the tests start compiled the mwperf it imports (issue 37)
py-test py-fast stress: export PYTHONPYCACHEPREFIX = $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)/pycache
py-test py-fast stress: export PYTHONDONTWRITEBYTECODE =
py-test:
	@status=0; set -x; \
	$(PY) -m pytest -q $(XDIST) -m "not serial and not refs" || status=$$?; \
	$(PY) -m pytest -q -m "serial and not refs" || status=$$?; \
	exit $$status

# the unit tier: the Python tests that start no real agent, daemon or browser (the fake agent
# stands in), side by side on PY_FAST_WORKERS workers; the end-to-end tier (-m e2e,
# tests/conftest.py) is the rest. Three, not four: these tests mostly compute rather than wait,
# and a worker more is one more collection of every module (measured on 2 cores, 2026-11-29:
# 2 workers 69.6 s, 3 60.0 and 64.0 s, 4 65.2 and 67.3 s, 6 69.4 s)
PY_FAST_WORKERS ?= 3
py-fast:
	$(PY) -m pytest -q $$($(PY) -c 'import xdist' 2>/dev/null && echo '-n $(PY_FAST_WORKERS) --dist loadgroup') -m "not e2e"

## stress: the end-to-end tier STRESS_RUNS times in a row while two busy loops load the machine;
## prints every failure with its test id (scripts/stress-e2e.sh). Not part of 'test'.
STRESS_RUNS ?= 10
stress: setup build
	PY="$(PY)" PY_WORKERS=$(PY_WORKERS) bash scripts/stress-e2e.sh $(STRESS_RUNS)

clean:
	cargo clean
	rm -rf $(RESULTS)
