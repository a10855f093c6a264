"""The human table: units, dashes for what was not measured, notes and Markdown."""

from typing import Any

from fakes.reports import agent_report, measurement

from mwperf.show.details import render_details
from mwperf.show.table import THIN_NOTE, Row, cpu_percent, render, render_notes, row_from_result

CONFIG = {"transport": "udp", "mode": "roundtrip", "rate": 1000.0, "payload": "Array1k",
          "payload_bytes": 1024}


def result(measured: dict[str, Any] | None, agents: list[dict[str, Any]] | None = None
           ) -> dict[str, Any]:
    return {"config": CONFIG, "measurement": measured, "status": "complete",
            "status_reason": None,
            "agents": agents if agents is not None else
            [agent_report("ping", wall_s=2.0, cpu_s=0.25), agent_report("pong", wall_s=2.0)]}


def test_row_numbers() -> None:
    row = row_from_result(result(measurement(sent=1000, lost=10)), "points/x")
    assert (row.p50_ns, row.max_ns, row.count, row.result) == (12_000, 72_000, 990, "points/x")
    assert row.loss_pct == 1.0
    assert row.cpu_pct == 100 * (0.5 + 0.2) / 2.0


def test_text_table_units_and_alignment() -> None:
    text = render([row_from_result(result(measurement(sent=1000, lost=10)))])
    header, line, note = text.splitlines()
    assert note == THIN_NOTE  # 990 samples: the p99.9 is marked
    assert header.split() == ["transport", "mode", "rate", "payload", "count", "p50", "p90",
                              "p99", "p99.9", "max", "stddev", "loss", "msgs/s", "CPU", "RSS",
                              "daemon", "CPU", "daemon", "RSS", "1st", "msg", "status"]
    assert "12.0 \u00b5s" in line and "72.0 \u00b5s" in line and "1.00%" in line
    assert "Array1k (1 KiB)" in line and "1000 Hz" in line and line.endswith("complete")
    assert len(header) == len(line)


def test_unmeasured_values_are_dashes_not_zero() -> None:
    row = row_from_result(result(None, agents=[agent_report("pong")]))
    line = render([row]).splitlines()[1]
    assert row.p50_ns is None and row.cpu_pct is None
    assert line.count("\u2014") == 14 and " 0 " not in line


def test_rate_zero_and_byte_count_payload() -> None:
    row = Row("tcp", "roundtrip", 0.0, "100", 100, status="partial")
    assert "max" in render([row]) and "100 B" in render([row])


def test_markdown() -> None:
    lines = render([row_from_result(result(measurement()))], markdown=True).splitlines()
    assert lines[0].startswith("| transport | mode |")
    assert lines[1] == "| --- | --- | --- | --- | " + "---: | " * 14 + "---: |"
    assert len(lines) == 5 and lines[3] == "" and lines[4] == "\\" + THIN_NOTE  # not a bullet


def test_notes_group_warnings_and_give_reasons() -> None:
    warning = {"code": "cpu-idle", "message": "CPU idle states are enabled", "hint": "use X"}
    few = [{"code": "few", "message": f"only {n} samples", "hint": None} for n in (10, 20)]
    rows = [Row("udp", "roundtrip", 1000.0, "Array64", 64, status="failed",
                status_reason="pong: address in use")]
    text = render_notes(rows, [("a", warning), ("b", warning), ("a", few[0]), ("b", few[1])])
    assert text == ("failed: udp roundtrip 1000 Hz Array64: pong: address in use\n"
                    "warning [cpu-idle] at 2 points: CPU idle states are enabled\n  hint: use X\n"
                    "warning [few] at 2 points, e.g. a: only 10 samples\n")
    assert render_notes([], [("a", warning)]) == ("warning [cpu-idle]: CPU idle states are "
                                                  "enabled\n  hint: use X\n")


def test_details_show_service_time_and_accounting() -> None:
    text = render_details(result(measurement(sent=1000, lost=3)))
    assert text.startswith("service time  p50 10.0 \u00b5s")
    assert "sent 1000  received 997  lost 3  dup 0" in text
    assert render_details(result(None)) == ""


def test_cpu_needs_every_agent() -> None:
    assert cpu_percent([agent_report("ping")], 2) is None
    assert cpu_percent([agent_report("ping", wall_s=0.0), agent_report("pong")], 2) is not None


DAEMONS = [{"name": "rosmaster", "argv": ["rosmaster"], "version": "1.15.15", "cpu_user_s": 0.05,
            "cpu_sys_s": 0.05, "wall_s": 2.0, "peak_rss_kib": 20480},
           {"name": "relay", "argv": ["relay"], "version": None, "cpu_user_s": 0.1,
            "cpu_sys_s": 0.0, "wall_s": 1.0, "peak_rss_kib": 10240}]
DISCOVERY = {"matched_ns": 2_000_000, "first_reply_ns": 30_000_000, "probes": 3}


def test_daemons_rss_and_first_message() -> None:
    relayed = {**result(measurement(), agents=[agent_report("ping", wall_s=2.0, cpu_s=0.5)]),
               "config": {**CONFIG, "transport": "ros1", "pong": "relay"},
               "daemons": DAEMONS, "discovery": DISCOVERY}
    row = row_from_result(relayed)
    assert row.cpu_pct == 50.0  # the ping alone: the relay is no agent (a daemon)
    assert row.daemon_cpu_pct == 100 * 0.2 / 2.0 and row.daemon_rss_kib == 30720
    assert row.first_message_ns == 32_000_000 and row.rss_kib is not None
    line = render([row]).splitlines()[1]
    assert "10%" in line and "30 MiB" in line and "32.0 ms" in line
    details = render_details(relayed)
    assert "discovery     matched 2.00 ms  first echo after 30.0 ms  probes 3\n" in details
    opened = render_details({**relayed, "discovery": {**DISCOVERY, "open_ns": 4_000_000}})
    assert ("discovery     matched 2.00 ms  first echo after 30.0 ms  probes 3  (opening took "
            "4.00 ms before)") in opened
    # the time to the first message counts the open: 4 + 2 + 30 ms
    assert row_from_result({**relayed, "discovery": {**DISCOVERY, "open_ns": 4_000_000}}
                           ).first_message_ns == 36_000_000
    assert "daemon        rosmaster 1.15.15  CPU 0.05 s user + 0.05 s sys  peak RSS 20 MiB" in details
    assert "daemon        relay  CPU 0.10 s user" in details


def test_unsampled_daemon_is_a_dash() -> None:
    gone = [{**DAEMONS[0], "cpu_user_s": None, "cpu_sys_s": None, "peak_rss_kib": None}]
    row = row_from_result({**result(measurement()), "daemons": gone})
    assert row.daemon_cpu_pct is None and row.daemon_rss_kib is None
    assert "CPU \u2014" in render_details({**result(measurement()), "daemons": gone})


def test_same_reason_is_one_line() -> None:
    rows = [Row("udp", "roundtrip", rate, "Array64k", 65536, status="not supported",
                status_reason="too big") for rate in (100.0, 1000.0, 0.0)]
    assert render_notes(rows, []) == ("not supported: udp roundtrip 100 Hz Array64k "
                                      "(and 2 more points): too big\n")


def test_a_p99_9_on_fewer_than_10_000_samples_is_marked_with_one_footnote() -> None:
    """1000 samples: the p99 rests on 10 beyond it (no warning), the p99.9 on 1: its cell says
    so with a trailing * and one footnote under the table, however many rows are marked."""
    thin = Row("udp", "roundtrip", 1000.0, "Array1k", 1024, count=1000, p50_ns=10_000,
               p90_ns=20_000, p99_ns=30_000, p999_ns=40_000, max_ns=50_000, status="complete")
    enough = Row("tcp", "roundtrip", 0.0, "Array1k", 1024, count=10_000, p50_ns=10_000,
                 p90_ns=20_000, p99_ns=30_000, p999_ns=40_000, max_ns=50_000,
                 status="complete")
    unmeasured = Row("uds", "roundtrip", 100.0, "Array1k", 1024, status="failed")
    lines = render([thin, thin, enough, unmeasured]).splitlines()
    header = lines[0].split()
    assert header.index("p99.9") == 8
    assert lines[1].split()[14] == "40.0" and lines[1].split()[15] == "\u00b5s*"
    assert "\u00b5s*" not in lines[3] and "*" not in lines[4]  # 10 000 samples; nothing measured
    assert "30.0 \u00b5s " in lines[1]  # the p99 unmarked
    assert lines[5:] == [THIN_NOTE]
    assert render([enough, unmeasured]).count("*") == 0
    assert THIN_NOTE == "* p99.9 rests on fewer than 10 samples beyond it (N < 10 000)"
    markdown = render([thin], markdown=True)
    assert "| 40.0 \u00b5s* |" in markdown and markdown.endswith("\n\n\\" + THIN_NOTE + "\n")


def test_details_mark_a_thin_service_p99_9() -> None:
    text = render_details(result(measurement(sent=1000)))
    assert "p99.9 " in text.splitlines()[0] and text.splitlines()[0].split("p99.9 ")[1].split(
        "  ")[0].endswith("*")
