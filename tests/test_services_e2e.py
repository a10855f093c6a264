"""--mode service end to end with the real agents over the socket baseline (UDP): counts
against ground truth, the server's work in the latency, a server that dies, foreign requests,
and usage errors. Every middleware's own request/response is checked by the transports'
service conformance suite (crates/mwperf-transports/tests/transports/service_conformance.rs)."""

import json
import socket
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_AGENT, read_saved, require_emulation, run_mwperf
from test_store_support import catalogue_rows

pytestmark = pytest.mark.agent


def run(env: dict[str, str], tmp_path: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--mode", "service", *args, "--json-out", str(out), "--results",
                      str(tmp_path / "r"), env=env, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    assert out.is_file(), done.stderr
    return done.returncode, read_saved(out), done.stdout


def test_every_call_of_every_client_is_answered_and_counted_once(
        real_env: dict[str, str], tmp_path: Path) -> None:
    code, result, shown = run(real_env, tmp_path, "--transport", "udp", "--rate", "500",
                              "--duration", "1s", "--warmup", "200ms", "--payload", "64",
                              "--reply-payload", "1000", "--in-flight", "2", "--clients", "3")
    assert code == 0 and result["status"] == "complete", result["status_reason"]
    m = result["measurement"]
    calls = m["calls"]
    # ground truth: 3 clients x 500 Hz x 1 s measured calls, every one answered once
    assert m["accounting"]["sent"] == m["accounting"]["received"] == calls["answered"] == 1500
    assert (calls["timeouts"], calls["errors"], calls["unmatched"], calls["clients"]) == (0, 0, 0, 3)
    # the server's own count of measured requests (an independent counter of the same calls)
    assert calls["server"]["server_time"]["count"] == 1500
    assert calls["server"]["answered"] == calls["server"]["requests"] >= 1500
    assert [t["name"] for t in result["per_topic"]] == ["client 1", "client 2", "client 3"]
    assert all(t["accounting"]["received"] == 500 for t in result["per_topic"])
    assert m["mode"] == "service" and m["latency_kind"] == "call"
    # a call's latency holds the server's time
    assert m["service"]["min_ns"] >= calls["server"]["server_time"]["min_ns"]
    assert "calls         answered 1500" in shown and "server time" in shown
    assert "client 3      answered 500" in shown
    # the catalogue carries the calls
    [row] = catalogue_rows(tmp_path / "r", "SELECT mode, clients, in_flight, reply_payload_bytes, "
                           "calls_timeouts, server_time_p50_ns > 0, client_cpu_s > 0, "
                           "server_rss_kib > 0, latency_count FROM points")
    assert row == ("service", 3, 2, 1000, 0, True, True, True, 1500)


def test_the_servers_work_is_inside_every_call(real_env: dict[str, str], tmp_path: Path) -> None:
    code, result, _ = run(real_env, tmp_path, "--transport", "udp", "--rate", "0", "--count",
                          "200", "--warmup", "0s", "--server-work", "2ms", "--payload", "64")
    assert code == 0, result["status_reason"]
    m = result["measurement"]
    assert m["service"]["min_ns"] >= 2_000_000
    assert m["calls"]["server"]["server_time"]["min_ns"] >= 2_000_000
    assert m["calls"]["server"]["work_ns"] == 2_000_000
    # back to back, one in flight: 200 calls of >= 2 ms take >= 0.4 s
    assert m["throughput"]["msgs_per_s"] <= 500


def test_calls_cross_an_emulated_link_and_its_wire_bytes_are_counted(
        real_env: dict[str, str], tmp_path: Path) -> None:
    """--link and --wire-bytes on a service point: the client on host a, the server on b (as
    ping and pong are placed); every call crosses the 1 ms link twice, and each way carries the
    call's bytes (the run stopped with KeyError 'server' before the placement knew the roles)."""
    require_emulation("a service point across an emulated link")
    code, result, _ = run(real_env, tmp_path, "--transport", "udp", "--rate", "0", "--count",
                          "200", "--warmup", "0s", "--payload", "64", "--link", "delay=1ms",
                          "--wire-bytes")
    assert code == 0, result["status_reason"]
    assert (result["link"]["place"]["client"], result["link"]["place"]["server"]) == ("a", "b")
    m = result["measurement"]
    assert m["calls"]["answered"] == 200
    assert m["service"]["min_ns"] >= 2_000_000  # the injected 1 ms each way
    link = next(k for k in result["wire"]["links"] if "up" in k)
    for way in (link["up"], link["down"]):
        assert way["bytes_per_message"] >= 64 + 56  # payload + mwperf's header, IP on top


def test_in_flight_calls_queue_at_a_single_threaded_server(real_env: dict[str, str],
                                                          tmp_path: Path) -> None:
    """Four calls outstanding against a server that works 1 ms each: a call waits for the
    three before it, so its latency is about 4 ms and the server still does 1 ms per call."""
    code, result, _ = run(real_env, tmp_path, "--transport", "udp", "--rate", "0", "--count",
                          "200", "--warmup", "0s", "--server-work", "1ms", "--in-flight", "4")
    assert code == 0, result["status_reason"]
    m = result["measurement"]
    assert m["calls"]["max_outstanding"] == 4
    server_p50 = m["calls"]["server"]["server_time"]["p50_ns"]
    assert server_p50 >= 1_000_000  # the work is a wall-clock spin: never shorter
    # the server's time covers one call; a call waits for the three ahead of it as well
    assert m["service"]["p50_ns"] >= 3 * 1_000_000 and m["service"]["p50_ns"] >= 2.5 * server_p50


def start_server(tmp_path: Path, *args: str) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen([str(REAL_AGENT), "server", "--transport", "udp", "--listen",
                               "127.0.0.1:0", "--json", str(tmp_path / "server.json"), "--quiet",
                               *args], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    ready = server.stdout.readline().split()
    assert ready[:2] == ["READY", "udp"], ready
    return server, ready[2]


def test_a_server_that_dies_means_timeouts_and_a_partial_result_not_a_hang(
        real_env: dict[str, str], tmp_path: Path) -> None:
    server, address = start_server(tmp_path)
    client = subprocess.Popen([str(REAL_AGENT), "client", "--transport", "udp", "--connect",
                               address, "--rate", "200", "--duration", "20s", "--call-timeout",
                               "300ms", "--peer-timeout", "500ms", "--json",
                               str(tmp_path / "client.json"), "--quiet"], text=True)
    time.sleep(1.0)
    server.kill()
    server.wait()
    started = time.monotonic()
    assert client.wait(timeout=15) == 3  # partial
    assert time.monotonic() - started < 0.3 + 0.5 + 1.0  # call timeout + peer timeout + slack
    report = json.loads((tmp_path / "client.json").read_text())
    assert report["status"] == "partial"
    assert "silent" in report["status_reason"]
    calls = report["measurement"]["calls"]
    assert calls["timeouts"] > 0 and calls["answered"] > 100
    assert calls["answered"] + calls["timeouts"] == report["measurement"]["accounting"]["sent"]


def test_a_foreign_request_is_answered_and_counted(real_env: dict[str, str],
                                                   tmp_path: Path) -> None:
    server, address = start_server(tmp_path, "--reply-payload", "10")
    host, port = address.rsplit(":", 1)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(5)
        s.sendto(b"hello, not mwperf", (host, int(port)))
        reply, _ = s.recvfrom(2048)
    server.terminate()
    assert server.wait(timeout=5) == 0
    assert reply[:4] == b"MWPF" and len(reply) == 56 + 10
    serving = json.loads((tmp_path / "server.json").read_text())["serving"]
    assert (serving["requests"], serving["answered"], serving["foreign"]) == (1, 1, 1)
    assert serving["server_time"]["count"] == 0  # foreign requests are not measured


def test_bad_service_input_is_a_usage_error(real_env: dict[str, str], tmp_path: Path) -> None:
    done = run_mwperf("run", "--mode", "service", "--in-flight", "0", env=real_env)
    assert done.returncode == 2 and "--in-flight: must be from 1 to 1024" in done.stderr
    done = run_mwperf("run", "--mode", "service", "--transport", "udp", "--reply-payload",
                      "70000", env=real_env)
    assert done.returncode == 2 and "--reply-payload" in done.stderr
    agent = subprocess.run([str(REAL_AGENT), "client", "--transport", "udp", "--connect",
                            "127.0.0.1:9", "--in-flight", "0"], capture_output=True, text=True)
    assert agent.returncode == 2 and "--in-flight" in agent.stderr


def test_the_report_puts_service_calls_beside_the_topic_round_trip(
        real_env: dict[str, str], tmp_path: Path) -> None:
    common = ("--transport", "udp", "--rate", "200", "--duration", "500ms", "--warmup", "0s",
              "--payload", "64")
    code, service, _ = run(real_env, tmp_path, *common)  # a service point
    assert code == 0
    done = run_mwperf("run", *common, "--mode", "roundtrip", "--results", str(tmp_path / "r"),
                      env=real_env)
    assert done.returncode == 0, done.stderr
    report = run_mwperf("report", "--results", str(tmp_path / "r"), "--format", "markdown",
                        service["run_id"], "latest", env=real_env)
    assert report.returncode == 0, report.stderr
    [row] = [line for line in report.stdout.splitlines() if f"| {service['run_id']} |" in line
             and "| udp | 200 |" in line]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[9] != "-" and cells[11] != "-"  # the round trip's p50 and what calls add
    page = run_mwperf("report", "--results", str(tmp_path / "r"), "-o", str(tmp_path / "r.html"),
                      service["run_id"], "latest", env=real_env)
    assert page.returncode == 0, page.stderr
    assert "Service calls beside topic round trips" in (tmp_path / "r.html").read_text()


def test_compare_holds_service_points_to_their_budgets(real_env: dict[str, str],
                                                       tmp_path: Path) -> None:
    """The same service point, the server's work raised from 0 to 2 ms: its server time p99
    breaks a 500 us budget (the server's own measurement); no call timed out on either side."""
    common = ("--transport", "udp", "--rate", "100", "--count", "100", "--warmup", "0s",
              "--payload", "64")
    _, base, _ = run(real_env, tmp_path, *common)
    _, new, _ = run(real_env, tmp_path, *common, "--server-work", "2ms")
    # the server's work is part of the configuration: no pair unless it is the same ...
    done = run_mwperf("compare", base["run_id"], new["run_id"], "--results", str(tmp_path / "r"),
                      "--budget", "server_p99=+500us", "--budget", "timeouts=+0pp",
                      env=real_env)
    assert done.returncode == 2 and "NEW: no point" in done.stderr
    # ... so compare it against itself measured again without work, then with the budget
    _, again, _ = run(real_env, tmp_path, *common)
    done = run_mwperf("compare", base["run_id"], again["run_id"], "--results",
                      str(tmp_path / "r"), "--budget", "server_p99=+5ms", "--budget",
                      "timeouts=+0pp", "--format", "json", env=real_env)
    assert done.returncode == 0, done.stdout + done.stderr
    rows = {r["metric"]: r for r in json.loads(done.stdout)["rows"]}
    assert rows["timeouts"]["base"] == rows["timeouts"]["new"] == 0.0
    assert rows["server_p99"]["verdict"] == "ok" and rows["server_p99"]["new"] > 0


def test_ctrl_c_keeps_the_calls_made_and_leaves_nothing_running(real_env: dict[str, str],
                                                                tmp_path: Path) -> None:
    """A service point through mosquitto stopped with SIGINT: partial, what was answered kept,
    and the client, the server and the broker all gone."""
    import signal
    import sys

    from conftest import alive, descendants
    out = tmp_path / "result.json"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--mode", "service",
                             "--transport", "mqtt", "--rate", "200", "--duration", "30s",
                             "--warmup", "0s", "--json-out", str(out), "--no-save"],
                            env=real_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 30
    below: list[int] = []
    while time.monotonic() < deadline:
        below = descendants(proc.pid)
        names = " ".join(Path(f"/proc/{p}/cmdline").read_text(errors="replace")
                         for p in below if alive(p))
        if "client" in names and "mosquitto" in names:
            break
        time.sleep(0.2)
    time.sleep(2)  # calls are being made
    below = descendants(proc.pid)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 3, err
    result = read_saved(out)
    assert result["status"] == "partial"
    assert result["measurement"]["calls"]["answered"] > 100
    end = time.monotonic() + 5
    while any(alive(p) for p in below) and time.monotonic() < end:
        time.sleep(0.1)
    assert not [p for p in below if alive(p)]


def test_samples_are_kept_per_client(real_env: dict[str, str], tmp_path: Path) -> None:
    code, result, _ = run(real_env, tmp_path, "--transport", "udp", "--rate", "200", "--count",
                          "100", "--warmup", "0s", "--clients", "2", "--samples")
    assert code == 0, result["status_reason"]
    folder = next((tmp_path / "r").glob("*-udp-service-*"))
    for i, topic in enumerate(result["per_topic"], start=1):
        assert topic["samples_file"] == f"samples.client_{i}.csv"
        lines = (folder / topic["samples_file"]).read_text().splitlines()
        assert len(lines) == 1 + 100  # a header and one line per answered call
        seq, intended, sent, peer_rx, recv = map(int, lines[1].split(",")[:5])
        assert intended <= sent < peer_rx < recv  # one clock: the server's arrival in between
