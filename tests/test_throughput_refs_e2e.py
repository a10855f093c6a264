"""Each throughput reference of benchmarks/bench_throughput.py, run for real, briefly: it
delivers, and both sides' CPU is measured. The Debian tools (iperf3, sockperf, ddsperf) run in
`make test`: missing, they are skipped, except in CI (CI=true), where they fail. The programs
mwperf builds as references (zenoh-ref, iceoryx2-ref, the Fast DDS throughput program) are
marked ``refs``: `make test` leaves them out (building them is minutes of benchmark set-up, not
a test of mwperf; issue 37) and `make refs` runs them once it has built them
(MWPERF_REFS_BUILT=1: then a missing one fails)."""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import throughput_refs as refs  # noqa: E402

SIZE = 120  # mwperf's 56-byte header + 64 bytes
BUILT_BY_MAKE_REFS = ("zenoh", "fastdds", "iceoryx2")
"""the references `make refs` builds (benchmarks/throughput_refs.py build_*)"""

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


def built_by_make_refs(case: str) -> bool:
    return case.split("-")[0] in BUILT_BY_MAKE_REFS


def run(case: str) -> dict:
    try:
        return CASES[case]()
    except refs.Missing as e:
        if built_by_make_refs(case) and os.environ.get("MWPERF_REFS_BUILT"):
            pytest.fail(f"{case}: `make refs` built it, yet: {e}")
        if not built_by_make_refs(case) and os.environ.get("CI") == "true":
            pytest.fail(f"{case} must run in CI: {e}")
        pytest.skip(str(e))


@pytest.mark.parametrize("case", [pytest.param(c, marks=pytest.mark.refs) if built_by_make_refs(c)
                                  else c for c in CASES])
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
