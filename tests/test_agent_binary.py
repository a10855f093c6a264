"""Black-box tests of the real Rust agent (target/release/mwperf-agent): the contract in
docs/agent-contract.md, its reports against schema/result.v2.json, fault handling, and loss /
duplicate / reorder / corruption accounting against a relay that injects a known ground truth."""
from __future__ import annotations

import json
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import jsonschema
import pytest
from conftest import REAL_AGENT

ROOT = Path(__file__).resolve().parents[1]
AGENT = REAL_AGENT  # $MWPERF_AGENT, else where cargo put it ($CARGO_TARGET_DIR or target/)
SCHEMA = json.loads((ROOT / "schema" / "result.v2.json").read_text())

pytestmark = pytest.mark.skipif(not AGENT.exists(), reason="agent not built (make build)")


def server(role: str, transport: str = "udp", *extra: str, listen: str = "127.0.0.1:0"):
    p = subprocess.Popen([str(AGENT), role, "--transport", transport, "--listen", listen, *extra],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    assert line[:2] == ["READY", transport], line
    return p, line[2]


def sender(role: str, addr: str, *extra: str, transport: str = "udp", timeout: float = 30):
    return subprocess.run([str(AGENT), role, "--transport", transport, "--connect", addr, *extra],
                          capture_output=True, text=True, timeout=timeout)


def report(path: Path) -> dict:
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, SCHEMA)
    return doc


@pytest.mark.parametrize("transport", ["udp", "tcp", "uds"])
def test_roundtrip_reports_validate_and_account_for_every_message(tmp_path, transport):
    listen = str(tmp_path / "s.sock") if transport == "uds" else "127.0.0.1:0"
    pong, addr = server("pong", transport, "--quiet", "--json", str(tmp_path / "pong.json"), listen=listen)
    r = sender("ping", addr, "--rate", "2000", "--count", "1000", "--warmup", "50ms", "--payload", "Array1k",
               "--quiet", "--json", str(tmp_path / "ping.json"), "--samples", str(tmp_path / "s.csv"), transport=transport)
    pong.send_signal(signal.SIGTERM)
    assert pong.wait(5) == 0
    assert r.returncode == 0, r.stderr
    ping = report(tmp_path / "ping.json")
    m = ping["measurement"]
    a = m["accounting"]
    assert (a["sent"], a["received"], a["lost"], a["duplicated"], a["corrupted"]) == (1000, 1000, 0, 0, 0)
    assert a["warmup_sent"] == 100 and m["payload_bytes"] == 1024 and m["message_bytes"] == 1080
    assert m["response"]["count"] == 1000 and 0 < m["response"]["p50_ns"] <= m["response"]["max_ns"]
    assert m["response"]["p50_ns"] >= m["service"]["p50_ns"] * 0.999  # response time includes send lateness
    assert m["schedule"]["period_ns"] == 500_000 and m["late"]["threshold_ns"] == 500_000
    assert sum(c for _, c in m["response"]["histogram"]) == 1000
    rows = (tmp_path / "s.csv").read_text().splitlines()
    assert rows[0].startswith("seq,intended_ns") and len(rows) == 1001
    pong_rep = report(tmp_path / "pong.json")
    assert ping["discovery"]["probes"] >= 1 and ping["discovery"]["first_reply_ns"] > 0
    assert pong_rep["counters"]["echoed"] == 1100 + ping["discovery"]["probes"] and pong_rep["status"] == "complete"
    if transport == "uds":
        assert not Path(listen).exists(), "socket file left behind"


def test_oneway_pub_sub(tmp_path):
    sub, addr = server("sub", "udp", "--quiet", "--json", str(tmp_path / "sub.json"))
    r = sender("pub", addr, "--rate", "5000", "--count", "2000", "--warmup", "20ms", "--quiet", "--json", str(tmp_path / "pub.json"))
    assert r.returncode == 0, r.stderr
    assert sub.wait(5) == 0  # exits by itself after the end-of-stream marker
    pub, s = report(tmp_path / "pub.json"), report(tmp_path / "sub.json")
    assert pub["sent"] == 2000 and pub["schedule"]["period_ns"] == 200_000
    a = s["measurement"]["accounting"]
    assert a["sent"] == 2000 and a["received"] + a["lost"] == 2000 and a["warmup_sent"] == 100
    assert s["measurement"]["latency_kind"] == "one-way"


class Relay:
    """UDP relay ping ⇄ pong that injects known faults on the forward path by sequence number:
    drop seq%10==3, duplicate seq%10==5, corrupt a payload byte of seq%10==7, and swap seq%10==1
    with the following message (reordering)."""

    def __init__(self, pong_addr: str):
        host, port = pong_addr.rsplit(":", 1)
        self.pong = (host, int(port))
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.addr = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.ping = None
        self.held = None
        self.stop = False
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                data, src = self.sock.recvfrom(70000)
            except socket.timeout:
                continue
            if src == self.pong:
                self.sock.sendto(data, self.ping)
                continue
            self.ping = src
            warm = data[5] & 1
            seq = int.from_bytes(data[16:24], "little")
            k = seq % 10
            if warm or k == 0 or k in (2, 4, 6, 8, 9):
                self.sock.sendto(data, self.pong)
            elif k == 1:
                self.held = data  # sent after seq%10==2 → reordered
                continue
            elif k == 3:
                pass  # dropped
            elif k == 5:
                self.sock.sendto(data, self.pong)
                self.sock.sendto(data, self.pong)
            elif k == 7:
                b = bytearray(data)
                b[60] ^= 0x01
                self.sock.sendto(bytes(b), self.pong)
            if k == 2 and self.held is not None:
                self.sock.sendto(self.held, self.pong)
                self.held = None


def test_accounting_matches_injected_ground_truth(tmp_path):
    pong, addr = server("pong", "udp", "--quiet")
    relay = Relay(addr)
    try:
        # closed-loop rate 0 would wait 1 s on every dropped message: use a schedule
        r = sender("ping", relay.addr, "--rate", "500", "--count", "1000", "--warmup", "20ms", "--payload", "64",
                   "--quiet", "--json", str(tmp_path / "ping.json"))
    finally:
        relay.stop = True
        pong.terminate()
        pong.wait(5)
    assert r.returncode == 0, r.stderr
    a = report(tmp_path / "ping.json")["measurement"]["accounting"]
    assert a["sent"] == 1000
    assert a["lost"] == 100          # seq%10==3
    assert a["duplicated"] == 100    # seq%10==5 forwarded twice
    assert a["corrupted"] == 100     # seq%10==7 payload bit flipped
    assert a["reordered"] == 100     # seq%10==1 delivered after its successor
    assert a["received"] == 800


def test_pong_survives_garbage_and_counts_it(tmp_path):
    pong, addr = server("pong", "udp", "--quiet", "--json", str(tmp_path / "pong.json"))
    host, port = addr.rsplit(":", 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    for junk in (b"", b"x", b"GET / HTTP/1.1\r\n\r\n", b"MWPF" + bytes(10), b"MWPF\x01" + bytes(60), bytes(65000)):
        s.sendto(junk, (host, int(port)))
    r = sender("ping", addr, "--rate", "1000", "--count", "100", "--quiet", "--json", str(tmp_path / "ping.json"))
    pong.terminate()
    assert pong.wait(5) == 0
    assert r.returncode == 0
    c = report(tmp_path / "pong.json")["counters"]
    probes = report(tmp_path / "ping.json")["discovery"]["probes"]
    assert c["foreign"] + c["malformed"] == 6 and c["malformed"] >= 2 and c["echoed"] == 100 + probes


def test_peer_killed_mid_run_gives_partial_result(tmp_path):
    pong, addr = server("pong", "udp", "--quiet")
    p = subprocess.Popen([str(AGENT), "ping", "--transport", "udp", "--connect", addr, "--rate", "1000", "--duration", "30s",
                          "--peer-timeout", "500ms", "--quiet", "--json", str(tmp_path / "ping.json")], stderr=subprocess.PIPE, text=True)
    time.sleep(1.0)
    pong.kill()
    pong.wait()
    assert p.wait(10) == 3
    rep = report(tmp_path / "ping.json")
    assert rep["status"] == "partial" and "silent" in rep["status_reason"]
    assert rep["measurement"]["accounting"]["received"] > 100


def test_sigint_keeps_what_was_measured(tmp_path):
    pong, addr = server("pong", "tcp", "--quiet")
    p = subprocess.Popen([str(AGENT), "ping", "--transport", "tcp", "--connect", addr, "--rate", "1000", "--duration", "30s",
                          "--quiet", "--json", str(tmp_path / "ping.json")])
    time.sleep(1.0)
    p.send_signal(signal.SIGINT)
    assert p.wait(5) == 3
    pong.send_signal(signal.SIGINT)
    assert pong.wait(5) == 0
    rep = report(tmp_path / "ping.json")
    assert rep["status"] == "partial" and rep["status_reason"] == "interrupted by signal"
    assert rep["measurement"]["accounting"]["received"] > 100


def test_no_peer_is_a_runtime_error_in_one_line():
    r = sender("ping", "127.0.0.1:9", "--rate", "100", "--duration", "5s", "--peer-timeout", "300ms")
    assert r.returncode == 1
    assert r.stderr.strip().count("\n") == 0 and "no reply from 127.0.0.1:9" in r.stderr
    r = sender("ping", "127.0.0.1:9", "--duration", "1s", transport="tcp")
    assert r.returncode == 1 and "unreachable" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, flag", [
    (["ping", "--transport", "udpx", "--connect", "x:1"], "--transport"),
    (["ping", "--transport", "udp", "--connect", "127.0.0.1:9", "--rate", "-5"], "--rate"),
    (["ping", "--transport", "udp", "--connect", "127.0.0.1:9", "--payload", "Array3k"], "--payload"),
    (["ping", "--transport", "udp", "--connect", "127.0.0.1:9", "--duration", "10 parsecs"], "--duration"),
    (["ping", "--transport", "udp", "--connect", "127.0.0.1:9", "--payload", "Array64k"], "--payload"),
    (["ping", "--transport", "udp", "--connect", "127.0.0.1:9", "--payload", "64KB"], "ambiguous"),
    (["ping", "--transport", "udp", "--connect", "nonsense"], "nonsense"),
])
def test_usage_errors_exit_2_and_name_the_flag(args, flag):
    r = subprocess.run([str(AGENT), *args], capture_output=True, text=True, timeout=10)
    assert r.returncode == 2, r.stderr
    assert flag in r.stderr


def test_the_middlewares_own_log_is_printed_on_request_and_a_bad_filter_names_the_variable(
        tmp_path):
    import os
    env = {k: v for k, v in os.environ.items() if k != "MWPERF_AGENT_LOG"}
    r = subprocess.run([str(AGENT), "transports"], capture_output=True, text=True, timeout=10,
                       env={**env, "MWPERF_AGENT_LOG": "rustdds=loudest"})
    assert r.returncode == 2 and "MWPERF_AGENT_LOG=rustdds=loudest" in r.stderr, r.stderr
    logs = {}
    for given in (None, "rustdds=debug"):  # unset: not a line of RustDDS's own
        log = tmp_path / f"{given}.log"  # a file: a logging agent must not stall on a full pipe
        with log.open("w") as err:
            p = subprocess.Popen([str(AGENT), "sub", "--transport", "rustdds", "--listen",
                                  "0/auto", "--quiet"], stdout=subprocess.PIPE, stderr=err,
                                 text=True,
                                 env={**env, **({"MWPERF_AGENT_LOG": given} if given else {})})
        assert p.stdout.readline().split()[:2] == ["READY", "rustdds"]
        p.send_signal(signal.SIGTERM)
        p.wait(20)  # exit 1: nothing arrived, as it should
        logs[given] = log.read_text()
    assert " rustdds::" not in logs[None], logs[None]
    assert " rustdds::" in logs["rustdds=debug"] and "DEBUG" in logs["rustdds=debug"]


def test_port_in_use_is_a_runtime_error():
    pong, addr = server("pong", "tcp", "--quiet")
    try:
        r = subprocess.run([str(AGENT), "pong", "--transport", "tcp", "--listen", addr], capture_output=True, text=True, timeout=10)
        assert r.returncode == 1 and "cannot listen on" in r.stderr
    finally:
        pong.terminate()
        pong.wait(5)


def test_catalogue_and_transports_lists():
    cat = json.loads(subprocess.run([str(AGENT), "payloads", "--json"], capture_output=True, text=True).stdout)
    assert cat["Array1k"] == 1024 and cat["PointCloud512k"] == 524288 and cat["Struct16"] == 16
    ts = json.loads(subprocess.run([str(AGENT), "transports", "--json"], capture_output=True, text=True).stdout)
    names = [t["name"] for t in ts]
    assert names == ["udp", "tcp", "uds", "iceoryx2", "cyclonedds", "fastdds", "rustdds", "zenoh", "mqtt", "foxglove",
                     "ros1", "ros2"]
    assert all(t["built"] for t in ts if t["name"] in ("udp", "tcp", "uds"))
    assert {t["name"]: t["daemon"] for t in ts}["mqtt"] == "mosquitto"
