"""The throughput references' output parsing (benchmarks/throughput_refs.py, refproc.py) on
recorded samples of each tool (tests/fixtures/throughput_refs/, see its README), and the
benchmark's reading of mwperf's throughput result (bench_throughput.py) on a made-up one."""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import bench_throughput  # noqa: E402
import refproc  # noqa: E402
import throughput_refs as refs  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures" / "throughput_refs"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(errors="replace")


def test_sockperf_udp_totals_and_loss() -> None:
    sent, secs, received = refs.parse_sockperf(fixture("sockperf_tp_udp.txt"), fixture("sockperf_sr_udp.txt"))
    assert (sent, secs, received) == (450717, 1.004, 160459)
    assert refs.loss_of(sent, received) == pytest.approx(64.4, abs=0.1)


def test_sockperf_tcp_totals() -> None:
    assert refs.parse_sockperf(fixture("sockperf_tp_tcp.txt"), fixture("sockperf_sr_tcp.txt")) == (1301677, 1.001, 1301677)


def test_sockperf_without_totals_says_so() -> None:
    with pytest.raises(refs.RefError, match="no totals"):
        refs.parse_sockperf("sockperf: Test ended\n", "")


def test_ddsperf_window_between_its_seconds() -> None:
    points = refs.ddsperf_totals(fixture("ddsperf_sub.txt"))
    assert [p.msgs for p in points] == [494259, 1304156, 1502095]
    assert points[1].bytes == 1304156 * 120
    # one whole second between two lines: that second's delta
    msgs, nbytes, lost = refproc.window(points, points[0].t, points[1].t, 1.0)
    assert msgs == pytest.approx(809897, rel=1e-9)
    assert nbytes == pytest.approx(809897 * 120, rel=1e-9)
    assert lost == 0
    # half a second inside that second: half its messages, the same rate
    mid = (points[0].t + points[1].t) / 2
    assert refproc.window(points, points[0].t, mid, 1.0)[0] == pytest.approx(809897, rel=1e-6)


def test_ddsperf_best_effort_loss_is_counted() -> None:
    points = refs.ddsperf_totals(fixture("ddsperf_sub_best_effort.txt"))
    msgs, _, lost = refproc.window(points, points[1].t, points[2].t, 1.0)
    assert msgs == pytest.approx(525928, rel=1e-3)
    assert lost == pytest.approx(369486, rel=1e-3)
    assert refs.loss_of(msgs + lost, msgs) == pytest.approx(41.3, abs=0.1)


def test_iperf3_udp_counts_the_servers_losses() -> None:
    doc = json.loads(fixture("iperf3_udp.json"))
    msgs, nbytes, sent, loss, secs = refs.parse_iperf3(doc, 120, "udp")
    assert secs == pytest.approx(2.000051)
    assert msgs == pytest.approx(600000 / 2.000051)
    assert nbytes == pytest.approx(600000 * 120 / 2.000051)
    assert sent == pytest.approx(800000 / 2.000051)
    assert loss == pytest.approx(25.0)


def test_iperf3_tcp_is_the_receivers_bytes() -> None:
    doc = json.loads(fixture("iperf3_tcp.json"))
    msgs, nbytes, sent, loss, secs = refs.parse_iperf3(doc, 1080, "tcp")
    assert nbytes == pytest.approx(4319999040 / 2.000180)
    assert msgs == pytest.approx(nbytes / 1080)
    assert loss is None


def test_iperf3_error_is_reported() -> None:
    with pytest.raises(refs.RefError, match="unable to connect"):
        refs.parse_iperf3({"error": "unable to connect to server"}, 64, "tcp")


def test_reference_subscriber_totals_and_publisher_line() -> None:
    text = ("READY\ntp t_ns=1000000000 msgs=0 bytes=0\ntp t_ns=1100000000 msgs=1000 bytes=120000\n"
            "tp t_ns=1200000000 msgs=3000 bytes=360000\n")
    points = refproc.totals(text)
    assert len(points) == 3
    msgs, nbytes, _ = refproc.window(points, 1_050_000_000, 1_150_000_000, 1e9)
    assert msgs == pytest.approx((2000 - 500) / 0.1)
    assert nbytes == pytest.approx(msgs * 120)
    sent = refproc.SENT.search("matched\nsent msgs=3100 bytes=372000 seconds=2.500000 refused=3\n")
    assert sent and sent.groups() == ("3100", "372000", "2.500000", "3")
    assert refproc.SENT.search("sent msgs=5 bytes=600 seconds=1.000000\n").group(4) is None


def test_window_outside_the_lines_is_refused() -> None:
    points = refproc.totals("tp t_ns=10 msgs=0 bytes=0\ntp t_ns=20 msgs=5 bytes=50\n")
    assert refproc.at(points, 10).msgs == 0
    assert refproc.at(points, 5) is None
    assert refproc.at(points, 21) is None
    with pytest.raises(ValueError, match="do not cover"):
        refproc.window(points, 15, 25, 1e9)


def test_cpu_of_a_process_and_of_a_gone_one() -> None:
    assert refproc.cpu_s(os.getpid()) > 0
    assert refproc.cpu_s(2**22 + 1) is None  # above pid_max's default: never a process


def test_child_reports_its_cpu_from_wait4() -> None:
    c = refproc.Child([sys.executable, "-c", "print('READY'); sum(range(3_000_000)); print('done')"])
    assert c.wait_line(lambda s: s.startswith("READY"), 10)
    assert c.reap(30)
    assert c.status == 0 and c.cpu_s and c.cpu_s > 0
    assert c.text() == "READY\ndone\n"


# ---- bench_throughput: mwperf's result (schema result.v2, throughput mode) read as a reference

def fake_result(status: str = "complete") -> dict:
    return {"status": status, "status_reason": None, "measurement": {
        "mode": "throughput", "latency_kind": "one-way",
        "throughput": {
            "duration_s": 2.0, "msgs_per_s": 100000.0, "payload_bytes_per_s": 6.4e6,
            "message_bytes_per_s": 1.2e7, "delivery": "best-effort", "offered_per_s": None,
            "sent_per_s": 110000.0, "loss_pct": 9.09, "subscribers": 1, "checked_every": 1,
            "sender": {"sending_s": 2.0, "in_send_s": 1.5, "blocked_s": 0.0, "refused": 0,
                       "send_p50_ns": 2000, "send_p99_ns": 9000, "send_max_ns": 50000},
            "cpu": {"pub": {"cpu_s": 0.8, "per_msg_us": 4.0, "per_mb_ms": 125.0},
                    "sub": {"cpu_s": 0.6, "per_msg_us": 3.0, "per_mb_ms": 93.75}},
            "wire_bytes_per_s": None}}}


def test_mwperf_result_reads_as_a_reference() -> None:
    r = bench_throughput.from_result(fake_result())
    assert r["msgs_per_s"] == 100000.0 and r["bytes_per_s"] == 1.2e7
    assert r["loss_pct"] == 9.09 and r["cpu_s"] == {"pub": 0.8, "sub": 0.6}
    assert bench_throughput.per_msg_us(r, "pub") == 4.0
    assert bench_throughput.sum_us(r) == 7.0


def test_a_failed_mwperf_run_is_an_error() -> None:
    assert "error" in bench_throughput.from_result(fake_result("failed"))
    assert "error" in bench_throughput.from_result({"status": "complete", "measurement": None})


def test_comparison_ratios_per_interleaved_pair() -> None:
    mw = [bench_throughput.from_result(fake_result()) for _ in range(3)]
    ref = [refs.result("ddsperf", "best-effort", 120, 2.0, m, m * 120, None, 0.0, 0.7, 0.7, "window")
           for m in (100000.0, 125000.0, 80000.0)]
    c = bench_throughput.compare(mw, ref)
    assert c["pairs"] == 3
    assert sorted(c["msgs_ratios"]) == pytest.approx([0.8, 1.0, 1.25])
    # reference CPU per message: 1.4 s / (rate x 2 s)
    assert c["ref_cpu"]["pub"] == pytest.approx(0.7e6 / (100000 * 2))
    assert sorted(c["cpu_ratios"]) == pytest.approx(sorted(7.0 / (1.4e6 / (m * 2)) for m in (100000, 125000, 80000)))
    line = bench_throughput.row("cyclonedds", "best-effort", 64, "ddsperf", c)
    assert line.startswith("| cyclonedds | best-effort | 64 B | ddsperf | 100 k / 100 k |")
    assert "**1** (0.80–1.25)" in line


def test_an_unsupported_reference_is_not_an_error() -> None:
    def too_big(size: int, seconds: float, delivery: str) -> dict:
        raise refs.Unsupported("sockperf: messages of at most 65507 bytes")
    assert bench_throughput.reference("sockperf UDP", too_big, 1 << 20, 1, "best-effort") == \
        {"unsupported": "sockperf: messages of at most 65507 bytes"}


def test_sizes_a_tool_cannot_send_are_unsupported_whether_installed_or_not() -> None:
    with pytest.raises(refs.Unsupported, match="65507"):
        refs.sockperf(1 << 20, 1, "udp")
    with pytest.raises(refs.Unsupported, match="65507"):
        refs.iperf3(65508, 1, "udp")
    with pytest.raises(refs.Unsupported, match="12 bytes"):
        refs.ddsperf(8, 1, "reliable")


def test_a_recorded_zenoh_pair_delivers_what_was_sent() -> None:
    points = refproc.totals(fixture("z_sub_thr.txt"))
    sent = refproc.SENT.search(fixture("z_pub_thr.txt"))
    assert sent and len(points) > 10
    assert points[-1].msgs == int(sent.group(1)) and points[-1].bytes == int(sent.group(2))
    assert all(a.t < b.t and a.msgs <= b.msgs for a, b in zip(points, points[1:]))
    msgs, nbytes, _ = refproc.window(points, points[0].t, points[-1].t, 1e9)
    assert nbytes == pytest.approx(msgs * 120)


def test_a_publishers_cpu_is_per_message_sent_where_the_tool_says() -> None:
    r = refs.result("sockperf UDP", "best-effort", 120, 2.0, 50000.0, 6e6, 100000.0, 50.0, 0.4, 0.5, "run")
    assert bench_throughput.per_msg_us(r, "pub") == pytest.approx(0.4e6 / (100000 * 2))
    assert bench_throughput.per_msg_us(r, "sub") == pytest.approx(0.5e6 / (50000 * 2))
