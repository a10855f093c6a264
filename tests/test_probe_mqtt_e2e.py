"""mwperf probe --mqtt against a real mosquitto started here, with two publishers (MQTT clients of
the test's own on sockets) at known rates (/steady 100 Hz; /paused 50 Hz with one 500 ms pause),
each send's time kept as the ground truth: every message counted, the rate the probe's arrivals'
own, the pause the gap the publisher made (and a stall of the publisher's, should a loaded
machine cause one, one more), an absent broker exit 1, a bad endpoint exit 2."""

import json
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import run_mwperf

from mwperf.daemons.base import free_port
from mwperf.daemons.mosquitto import connack


def _varint(n: int) -> bytes:
    out = b""
    while True:
        byte, n = n % 128, n // 128
        out += bytes([byte | (0x80 if n else 0)])
        if not n:
            return out


def _packet(kind: int, body: bytes) -> bytes:
    return bytes([kind]) + _varint(len(body)) + body


def _string(text: str) -> bytes:
    return len(text.encode()).to_bytes(2, "big") + text.encode()


def publish(port: int, topic: str, hz: float, seconds: float, pause: tuple[float, float],
            sends: list[int]) -> None:
    """An MQTT 3.1.1 client of its own on a socket (Nagle off), QoS 0, on an absolute schedule;
    ``sends`` gets each PUBLISH's send time, right after the socket took it (the ground truth:
    a loaded machine may stall this thread, and the probe should see the stall; no program in
    between that could bunch the messages after their times were taken)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = f"mwperf-test-{topic.strip('/')}"
        sock.sendall(_packet(0x10, _string("MQTT") + bytes([4, 0x02, 0, 0]) + _string(client)))
        assert sock.recv(4) == bytes([0x20, 0x02, 0x00, 0x00])  # CONNACK, accepted
        time.sleep(0.3)  # connected before the schedule starts
        start = time.monotonic()
        for k in range(int(seconds * hz)):
            if pause[0] <= k / hz < pause[1]:
                continue
            delay = start + k / hz - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            sock.sendall(_packet(0x30, _string(topic) + b"x" * 64))
            sends.append(time.monotonic_ns())
        sock.sendall(bytes([0xE0, 0x00]))  # DISCONNECT


def subscribed(log: Path, timeout_s: float = 30) -> None:
    """Wait until the broker logged the probe's SUBSCRIBE (-v): a message published before
    it would reach no one (QoS 0), however long the probe took to start."""
    deadline = time.monotonic() + timeout_s
    while "Received SUBSCRIBE from mwperf-probe-" not in log.read_text(errors="replace"):
        assert time.monotonic() < deadline, f"the probe never subscribed: {log.read_text()}"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def probed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    if shutil.which("mosquitto_sub") is None or shutil.which("mosquitto") is None:
        pytest.fail("mosquitto missing: run scripts/system-deps.sh")
    port = free_port()
    log = tmp_path_factory.mktemp("mosquitto") / "broker.log"
    with log.open("wb") as out:
        broker = subprocess.Popen(["mosquitto", "-v", "-p", str(port)], stdout=out,
                                  stderr=subprocess.STDOUT)
    try:
        for _ in range(50):
            if connack(port):
                break
            time.sleep(0.1)
        probe = subprocess.Popen([sys.executable, "-m", "mwperf", "probe", "--no-save", "--mqtt",
                                  f"127.0.0.1:{port}", "--duration", "5s", "--json"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        subscribed(log)
        sends: dict[str, list[int]] = {"/steady": [], "/paused": []}
        pubs = [threading.Thread(target=publish, args=(port, "/steady", 100, 3.0, (9, 9),
                                                       sends["/steady"])),
                threading.Thread(target=publish, args=(port, "/paused", 50, 3.0, (1.5, 2.0),
                                                       sends["/paused"]))]
        for t in pubs:
            t.start()
        out, err = probe.communicate(timeout=30)
        for t in pubs:
            t.join()
        assert probe.returncode == 0, err
        return {**json.loads(out), "sends": sends}
    finally:
        broker.terminate()
        broker.wait(timeout=10)


def test_mqtt_rate_and_pause(probed: dict) -> None:
    topics = {t["topic"]: t for t in probed["topics"]}
    assert set(topics) == {"/steady", "/paused"}
    steady, paused = topics["/steady"], topics["/paused"]
    sends = probed["sends"]
    # every message the publisher sent arrived, and the rate is the probe's arrivals' (count - 1
    # over its first to last arrival): beside two busy loops the broker's deliveries lag by
    # tens of ms at times, so the arrival span is not the send span (1.5 % off in 3 s)
    assert steady["count"] == len(sends["/steady"])
    span = steady["last_offset_ns"] - steady["first_offset_ns"]
    assert steady["rate_hz"] == pytest.approx((steady["count"] - 1) * 1e9 / span, rel=1e-9)
    assert steady["size_p50"] == 64 and steady["age_p50_ns"] is None
    # the pause (500 ms + one period) and any stall of the publisher's own over 300 ms are the
    # long gaps, each as long as the publisher made it (give or take the arrivals' delays)
    own = sorted((b - a for a, b in zip(sends["/paused"], sends["/paused"][1:])), reverse=True)
    assert own[0] >= 500e6
    long = [g for g in own if g > 300e6]
    # the probe lists its three longest
    assert len([g for _, g in paused["longest_gaps"] if g > 300e6]) == min(len(long), 3), (
        paused["longest_gaps"], long)
    assert long[0] - 10e6 <= paused["gap_max_ns"] <= long[0] + 70e6 and paused["gaps"] >= 1
    assert 0 <= probed["probe_cpu_percent"] < 50


def test_mqtt_absent_broker_and_bad_endpoint() -> None:
    port = free_port()
    done = run_mwperf("probe", "--no-save", "--mqtt", f"127.0.0.1:{port}", "--duration", "1s")
    assert done.returncode == 1 and f"--mqtt 127.0.0.1:{port}: no MQTT broker answers" in done.stderr
    done = run_mwperf("probe", "--no-save", "--mqtt", "host:port")
    assert done.returncode == 2 and "--mqtt: expected HOST or HOST:PORT" in done.stderr
    done = run_mwperf("probe", "--no-save", "--duration", "1s")
    assert done.returncode == 2 and "--ros1" in done.stderr and "--mqtt" in done.stderr
