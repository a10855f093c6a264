"""Throughput results read end to end: two real `--mode throughput` points over the socket
baseline (UDP, best-effort) catalogued, reported (the Throughput section, its table and the
saturation point) and compared with the `throughput` budget."""

import json
from pathlib import Path

import pytest
from conftest import read_saved, run_mwperf
from test_store_support import catalogue_rows

pytestmark = pytest.mark.agent


def measure(env: dict[str, str], root: Path, payload: str) -> str:
    out = root.parent / f"{payload}.json"
    done = run_mwperf("run", "--mode", "throughput", "--transport", "udp", "--reliability",
                      "best-effort", "--payload", payload, "--duration", "500ms", "--warmup",
                      "100ms", "--json-out", str(out), "--results", str(root), env=env,
                      timeout=120)
    assert done.returncode == 0, done.stderr
    return str(read_saved(out)["run_id"])


def test_real_throughput_points_are_catalogued_reported_and_compared(
        real_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "r"
    small, large = measure(real_env, root, "1KiB"), measure(real_env, root, "32KiB")
    rows = catalogue_rows(root, "SELECT payload_bytes, delivery, subscribers, msgs_per_s > 0, "
                                "payload_bytes_per_s = msgs_per_s * payload_bytes, "
                                "sending_s > 0, blocked_s >= 0, pub_cpu_per_msg_us > 0, "
                                "sub_cpu_per_mb_ms > 0, checked_every FROM points "
                                "ORDER BY payload_bytes")
    assert rows == [(1024, "best-effort", 1, True, True, True, True, True, True, 1),
                    # 32 KiB: in full every 8th (wire.rs check_every: 32 KiB / 4 KiB)
                    (32768, "best-effort", 1, True, True, True, True, True, True, 8)]
    report = run_mwperf("report", small, large, "--results", str(root), "--format",
                        "markdown", env=real_env)
    assert report.returncode == 0, report.stderr
    table = [line for line in report.stdout.splitlines() if line.startswith("| #")
             and "| udp |" in line]
    assert len(table) == 2 and sum("\u25c6 saturates here" in line for line in table) == 1
    assert "- udp best-effort: " in report.stdout
    html = tmp_path / "r.html"
    page = run_mwperf("report", small, large, "--results", str(root), "-o", str(html),
                      env=real_env)
    assert page.returncode == 0, page.stderr
    assert 'data-chart="throughput"' in html.read_text()
    again = measure(real_env, root, "1KiB")
    done = run_mwperf("compare", small, again, "--results", str(root), "--budget",
                      "throughput=-99%", "--format", "json", env=real_env)
    assert done.returncode == 0, done.stdout + done.stderr  # only the throughput budget
    [row] = [r for r in json.loads(done.stdout)["rows"] if r["metric"] == "throughput"]
    assert row["verdict"] in ("ok", "better") and row["base"] > 0 and row["new"] > 0
