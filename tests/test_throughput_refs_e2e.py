"""Each throughput reference of benchmarks/bench_throughput.py, run for real, briefly: it
delivers, and both sides' CPU is measured. A tool that is not installed, or a reference program
not built (`make refs`), is skipped, except in CI (CI=true): there the built ones are built
here, and anything still missing fails."""

import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import throughput_refs as refs  # noqa: E402

SIZE = 120  # mwperf's 56-byte header + 64 bytes
BUILD: dict[str, Callable[[], Path]] = {"zenoh": refs.build_zenoh, "fastdds": refs.build_fastdds,
                                        "iceoryx2": refs.build_iceoryx2}

CASES = {
    "iperf3-udp": lambda: refs.iperf3(SIZE, 1, "udp"),
    "iperf3-tcp": lambda: refs.iperf3(SIZE, 1, "tcp"),
    "sockperf-udp": lambda: refs.sockperf(SIZE, 1, "udp"),
    "sockperf-tcp": lambda: refs.sockperf(SIZE, 1, "tcp"),
    "ddsperf-reliable": lambda: refs.ddsperf(SIZE, 1, "reliable", warmup=0.5),
    "ddsperf-best-effort": lambda: refs.ddsperf(SIZE, 1, "best-effort", warmup=0.5),
    "zenoh-reliable": lambda: refs.zenoh(SIZE, 1, "reliable", warmup=0.5),
    "zenoh-best-effort": lambda: refs.zenoh(SIZE, 1, "best-effort", warmup=0.5),
    "fastdds-reliable": lambda: refs.fastdds(SIZE, 1, "reliable", warmup=0.5),
    "fastdds-best-effort": lambda: refs.fastdds(SIZE, 1, "best-effort", warmup=0.5),
    "iceoryx2-reliable": lambda: refs.iceoryx2(SIZE, 1, "reliable", warmup=0.5),
    "iceoryx2-best-effort": lambda: refs.iceoryx2(SIZE, 1, "best-effort", warmup=0.5),
}


def run(case: str) -> dict:
    ci = os.environ.get("CI") == "true"
    try:
        return CASES[case]()
    except refs.Missing as e:
        if not ci:
            pytest.skip(str(e))
        build = BUILD.get(case.split("-")[0])
        if build is None:
            pytest.fail(f"{case} must run in CI: {e}")
    build()
    return CASES[case]()


@pytest.mark.parametrize("case", list(CASES))
def test_a_reference_delivers_and_its_cpu_is_measured(case: str) -> None:
    r = run(case)
    assert r["msgs_per_s"] > 0 or r["loss_pct"] < 100, r  # something arrived, by the end at least
    assert r["bytes_per_s"] == pytest.approx(r["msgs_per_s"] * SIZE, rel=0.01), r
    # a reliable publisher may spend less than a clock tick (10 ms) waiting for its subscriber
    assert r["cpu_s"]["pub"] >= 0 and r["cpu_s"]["sub"] >= 0 and r["cpu_s"]["pub"] + r["cpu_s"]["sub"] > 0, r
    if r["loss_pct"] is not None:
        assert 0 <= r["loss_pct"] <= 100, r
    # What a reliable publisher sent arrives by the end (the subscriber gets 0.4 s more). Not
    # asserted for Fast DDS: with mwperf's keep-all mapping (unlimited history, so a write never
    # blocks) its reader was seen, on a loaded machine, to get nothing for seconds and a few %
    # of the messages still unacknowledged after the writer's 10 s wait: a finding for the
    # benchmark, not a fault of the runner.
    if r["delivery"] == "reliable" and r["loss_pct"] is not None and not case.startswith("fastdds"):
        assert r["loss_pct"] < 1.0, r
