"""bench_layers.py's reading of a run result's `layers` section (/work/shared-layers-spec.md's form,
made up here: the benchmark must be right before `mwperf run --layers` exists), its overhead
ratios, and the BENCHMARKS.md text it writes."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench_layers  # noqa: E402

Q = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1]


def layer(name: str, p50: int | None, share: float | None, note: str | None = None) -> dict:
    seen = p50 is not None
    return {"name": name, "label": name, "observable": seen, "note": note,
            "p50_ns": p50, "p90_ns": p50, "p99_ns": p50, "max_ns": p50,
            "mean_ns": float(p50) if seen else None, "q_ns": [p50] * len(Q) if seen else None,
            "share": share, "parts": None}


def socket_result() -> dict:
    """A UDP round trip: every layer seen, 10 of 1000 messages without a receive syscall."""
    return {"status": "complete", "status_reason": None,
            "measurement": {"response": {"p50_ns": 40_000}},
            "layers": {"method": "ld_preload", "why_none": None, "kind": "roundtrip", "messages": 1000,
                       "split": 990, "unsplit": {"no_send_syscall": 0, "no_receive_syscall": 10, "events_dropped": 0},
                       "quantiles": Q, "total": {"p50_ns": 40_000, "mean_ns": 40_000.0},
                       "layers": [layer("app_send", 2_000, 0.05), layer("middleware_send", 6_000, 0.15),
                                  layer("kernel_network", 20_000, 0.5), layer("middleware_receive", 8_000, 0.2),
                                  layer("executor_callback", 4_000, 0.1)],
                       "directions": None, "per_topic": None, "agents": [], "notes": []}}


def shm_result() -> dict:
    """iceoryx2: no system call carries the message; one combined layer instead."""
    hidden = "shared memory: no system call carries the message"
    r = socket_result()
    r["layers"].update(split=1000, unsplit={"no_send_syscall": 0, "no_receive_syscall": 0, "events_dropped": 0},
                       total={"p50_ns": 10_000, "mean_ns": 10_000.0},
                       layers=[layer("app_send", 1_000, 0.1), layer("middleware_send", None, None, hidden),
                               layer("kernel_network", None, None, hidden),
                               layer("middleware_receive", None, None, hidden),
                               layer("executor_callback", 2_000, 0.2), layer("middleware_transport", 7_000, 0.7)])
    return r


def test_a_split_section_is_taken() -> None:
    section, why = bench_layers.layers_of(socket_result())
    assert why is None and section["split"] == 990


def test_what_is_not_a_split_says_why() -> None:
    assert bench_layers.layers_of({"error": "exit 2: no broker"}) == (None, "exit 2: no broker")
    failed = {"status": "failed", "status_reason": "peer silent"}
    assert bench_layers.layers_of(failed)[1] == "status failed: peer silent"
    no_section = {**socket_result(), "layers": None}
    assert bench_layers.layers_of(no_section)[1] == "the result has no layers section"
    none = socket_result()
    none["layers"].update(method="none", why_none="static binary: LD_PRELOAD has no effect")
    assert bench_layers.layers_of(none)[1] == "layers not observed: static binary: LD_PRELOAD has no effect"
    empty = socket_result()
    empty["layers"].update(messages=0, split=0, unsplit={})
    empty.update(status="partial", status_reason="pub: behind")
    assert bench_layers.layers_of(empty)[1] == "no measured message to split (status partial: pub: behind)"
    nothing = socket_result()
    nothing["layers"].update(split=0, unsplit={"no_send_syscall": 1000})
    assert bench_layers.layers_of(nothing)[1] == "no message could be split (1000 of 1000 (no_send_syscall 1000))"


def test_unsplit_names_its_reasons() -> None:
    assert bench_layers.unsplit_text(socket_result()["layers"]) == "10 of 1000 (no_receive_syscall 10)"
    assert bench_layers.unsplit_text(shm_result()["layers"]) == "0"


def test_cells_show_p50_share_or_not_observable() -> None:
    assert bench_layers.layer_cell(layer("kernel_network", 20_000, 0.5)) == "20.0 µs (50 %)"
    assert bench_layers.layer_cell(layer("kernel_network", None, None, "shm")) == "n/o"
    assert bench_layers.layer_cell(None) == "-"


def test_the_combined_column_only_when_some_transport_has_it() -> None:
    udp = socket_result()["layers"]
    assert "middleware_transport" not in bench_layers.columns_of([udp])
    assert bench_layers.columns_of([udp, shm_result()["layers"]])[2] == "middleware_transport"


def test_table_rows_notes_and_failures(monkeypatch) -> None:
    monkeypatch.setattr(bench_layers, "revision", lambda: "abc1234")
    points = [("udp", "Array1k", socket_result()["layers"]), ("iceoryx2", "Array1k", shm_result()["layers"])]
    text = bench_layers.layer_table(points, ["udp PointCloud512k: exit 2: message too big"], 3)
    lines = text.splitlines()
    header = next(x for x in lines if x.startswith("| transport"))
    assert header.count("|") == 11  # transport, payload, RTT p50, 6 layers, unsplit
    udp = next(x for x in lines if x.startswith("| udp |"))
    assert udp == ("| udp | Array1k | 40.0 µs | 2.0 µs (5 %) | 6.0 µs (15 %) | - | 20.0 µs (50 %) | 8.0 µs (20 %) "
                   "| 4.0 µs (10 %) | 10 of 1000 (no_receive_syscall 10) |")
    shm = next(x for x in lines if x.startswith("| iceoryx2 |"))
    assert shm.count("n/o") == 3 and "7.0 µs (70 %)" in shm
    assert "- udp PointCloud512k: exit 2: message too big" in lines
    assert "- iceoryx2 Array1k: not observable: middleware_send, kernel_network, middleware_receive: " \
        "shared memory: no system call carries the message" in lines
    assert "abc1234" in lines[0]


def test_overhead_ratio_median_spread_and_verdict() -> None:
    pairs = [(40_000, 41_000, None), (40_000, 44_000, None), (50_000, 50_000, None),
             (None, 41_000, "without --layers: exit 1: boom")]
    row, notes = bench_layers.overhead_row("udp", pairs)
    assert row == "| udp | 40.0 µs | 44.0 µs | **1.025** (ok) | 1.000–1.100 | 3 |"
    assert notes == ["udp: without --layers: exit 1: boom"]
    row, _ = bench_layers.overhead_row("cyclonedds", [(40_000, 44_000, None)])
    assert "**1.100** (over)" in row
    assert bench_layers.overhead_row("zenoh", [(None, None, "x")]) == (None, ["zenoh: x"])


def test_rtt_p50_only_of_a_usable_run() -> None:
    assert bench_layers.rtt_p50(socket_result()) == 40_000
    assert bench_layers.rtt_p50({"status": "failed", "measurement": {"response": {"p50_ns": 1}}}) is None
    assert bench_layers.rtt_p50({"error": "x"}) is None


def test_sections_exist_in_benchmarks_md() -> None:
    text = bench_layers.ROOT.joinpath("BENCHMARKS.md").read_text()
    for name in ("layers-overhead", "layers-table"):
        assert f"<!-- bench:{name}:begin -->" in text and f"<!-- bench:{name}:end -->" in text


def test_runs_are_interleaved_and_failures_become_notes(monkeypatch) -> None:
    calls = []

    def fake(agent, transport, payload, seconds, rate, layers, awake=False):
        calls.append((transport, payload, layers) + (("awake",) if awake else ()))
        if payload == "PointCloud512k" and transport == "udp":
            return {"error": "exit 2: udp carries at most 65507 bytes"}
        r = socket_result()
        r["measurement"]["response"]["p50_ns"] = 42_000 if layers else 40_000
        return r
    monkeypatch.setattr(bench_layers, "mwperf", fake)
    pairs = bench_layers.overhead_pairs(Path("agent"), ["udp", "cyclonedds"], 2, 1)
    assert calls[:4] == [("udp", "Array1k", False), ("udp", "Array1k", True),
                         ("cyclonedds", "Array1k", False), ("cyclonedds", "Array1k", True)]
    assert calls[4:] == [("cyclonedds", "Array1k", True), ("cyclonedds", "Array1k", False),
                         ("udp", "Array1k", True), ("udp", "Array1k", False)]
    assert pairs["udp"] == [(40_000, 42_000, None)] * 2
    assert "**1.050** (ok)" in bench_layers.overhead_text(pairs, 2, 1)
    points, failed = bench_layers.measure_table(Path("agent"), ["udp"], ["Array1k", "PointCloud512k"], 1)
    assert [(t, p) for t, p, _ in points] == [("udp", "Array1k")]
    assert failed == ["udp PointCloud512k: exit 2: udp carries at most 65507 bytes"]
    calls.clear()  # --keep-awake both: each pair also with the spinners, its own row
    pairs = bench_layers.overhead_pairs(Path("agent"), ["udp"], 2, 1, bench_layers.AWAKE["both"])
    assert calls[:4] == [("udp", "Array1k", False), ("udp", "Array1k", True),
                         ("udp", "Array1k", False, "awake"), ("udp", "Array1k", True, "awake")]
    assert calls[4:6] == [("udp", "Array1k", True, "awake"), ("udp", "Array1k", False, "awake")]
    assert list(pairs) == ["udp", "udp (--keep-awake)"] and len(pairs["udp (--keep-awake)"]) == 2


def test_merged_layers_get_their_own_column_after_what_they_cover() -> None:
    dds_big = socket_result()["layers"]
    merged = "kernel_network+middleware_receive"
    dds_big["layers"] = [layer("app_send", 1_000, 0.1), layer("middleware_send", 2_000, 0.2),
                         layer("kernel_network", None, None, f"fragments carry no header: counted in '{merged}'"),
                         layer("middleware_receive", None, None, f"fragments carry no header: counted in '{merged}'"),
                         layer(merged, 6_000, 0.6), layer("executor_callback", 1_000, 0.1)]
    columns = bench_layers.columns_of([socket_result()["layers"], dds_big, shm_result()["layers"]])
    assert columns == ["app_send", "middleware_send", "middleware_transport", "kernel_network", merged,
                       "middleware_receive", "executor_callback"]
    assert bench_layers.heading(merged) == "kernel + net + mw receive (not split)"
    row = bench_layers.table_row("cyclonedds", "PointCloud512k", dds_big, columns)
    assert row.split(" | ")[3:10] == ["1.0 µs (10 %)", "2.0 µs (20 %)", "-", "n/o", "6.0 µs (60 %)", "n/o",
                                      "1.0 µs (10 %)"]


def test_durations_keep_their_digits_at_every_scale() -> None:
    assert [bench_layers.duration(x) for x in (850, 12_345, 154_703_600, 1_308_203_800, 999)] == \
        ["850 ns", "12.3 µs", "155 ms", "1.3 s", "999 ns"]
