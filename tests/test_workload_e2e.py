"""Workload dimensions end to end with the real agent: executor semantics (seed 001: with a
single-threaded executor topic 3 waits for the callbacks of topics 1 and 2; with one thread per
topic it does not), per-topic sequence numbers and accounting, one-way topics, usage errors.

Tolerances are wide enough for a loaded 2-core machine and tight enough to fail when callbacks are
not serialized (single) or are serialized (multi): the gaps asserted are fractions of the
busy-loop, which is far above loopback latency (tens of µs).
"""

import csv
import json
import os
import statistics
import socket
import struct
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from conftest import REAL_AGENT, read_saved, run_mwperf

pytestmark = pytest.mark.agent

BUSY_MS = 3.0
FLAG_WARMUP, FLAG_PROBE = 1, 8


def measure(env: dict[str, str], tmp_path: Path, *args: str, saved: bool = False
            ) -> dict[str, Any]:
    """A run's result; ``saved``: in tmp_path/r with every message's samples."""
    out = tmp_path / "result.json"
    keep = ["--samples", "--results", str(tmp_path / "r")] if saved else ["--no-save"]
    done = run_mwperf("run", "--transport", "udp", "--rate", "50", "--duration", "2s",
                      "--warmup", "200ms", "--busy-loop", f"{BUSY_MS}ms", "--payload", "Array64",
                      *args, "--json-out", str(out), *keep, env=env, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    return read_saved(out)


def p50_ms(result: dict[str, Any]) -> list[float]:
    return [t["response"]["p50_ns"] / 1e6 for t in result["per_topic"]]


def test_single_executor_makes_later_topics_wait(real_env: dict[str, str], tmp_path: Path) -> None:
    result = measure(real_env, tmp_path, "--topics", "3", "--executor", "single", saved=True)
    assert (result["config"]["topics"], result["config"]["executor"]) == (3, "single")
    assert [t["topic"] for t in result["per_topic"]] == [0, 1, 2]
    assert min(p50_ms(result)) >= BUSY_MS  # every round trip includes its own callback
    # one callback at a time: at each tick the topic whose message finds the executor free runs
    # at once, the others wait for one and two busy loops, so the tick's three callbacks start
    # a busy loop apart. Which topic is served first is the receive threads' race, tick by tick
    # (per-topic p50s are then mixtures of places: [7.0, 13.04, 13.04] ms beside two busy
    # loops), so the gaps are taken per tick, in order, from each message's callback start at
    # the pong (its samples' peer_rx_ns): the ping's receipts of them (recv_ns) came 7.0 and
    # 0.008 ms apart once beside two busy loops (the ping, not scheduled, read two at once)
    gaps = tick_gaps_ms(result, tmp_path)
    assert len(gaps) >= 50, len(gaps)
    # a hard floor in every tick: the next callback cannot start before the busy one ends
    assert min(min(g) for g in gaps) >= BUSY_MS, min(gaps, key=min)
    first_gap = statistics.median(g[0] for g in gaps)
    second_gap = statistics.median(g[1] for g in gaps)
    # ... and not much more; a machine loaded beyond its cores stretches every busy-loop (CI saw
    # 11.8 ms for two of them at load 5.5 on 2 cores), so only a quiet one checks the ceiling
    if os.getloadavg()[0] <= (os.cpu_count() or 1):
        assert first_gap + second_gap < 2 * BUSY_MS + 4.0, (first_gap, second_gap)
    assert result["measurement"]["response"]["count"] == sum(
        t["response"]["count"] for t in result["per_topic"])


def tick_gaps_ms(result: dict[str, Any], tmp_path: Path) -> list[tuple[float, ...]]:
    """For each tick every topic measured (their messages share the intended send time): the
    gaps between their callbacks' starts at the pong (peer_rx_ns), in order, in ms."""
    folder = next((tmp_path / "r").glob("*/"))
    arrivals: dict[int, list[int]] = {}
    for topic in result["per_topic"]:
        with open(folder / topic["samples_file"], newline="") as f:
            for row in csv.DictReader(f):
                if row["recv_ns"]:
                    arrivals.setdefault(int(row["intended_ns"]), []).append(
                        int(row["peer_rx_ns"]))
    topics = len(result["per_topic"])
    gaps = []
    for times in arrivals.values():
        if len(times) == topics:
            ordered = sorted(times)
            gaps.append(tuple((b - a) / 1e6 for a, b in zip(ordered, ordered[1:])))
    return gaps


def test_multi_executor_runs_topics_side_by_side(real_env: dict[str, str], tmp_path: Path) -> None:
    # Serialized, the next callback of a tick cannot start before the busy one ends (the single
    # executor's hard floor above): two callbacks starting less than a busy loop apart at the
    # pong ran side by side. However loaded the machine, a thread per topic gets some ticks so;
    # one suffices as proof, and most ticks do when two cores are free.
    result = measure(real_env, tmp_path, "--topics", "2", "--executor", "multi", saved=True)
    assert (result["config"]["topics"], result["config"]["executor"]) == (2, "multi")
    assert min(t["response"]["min_ns"] for t in result["per_topic"]) >= BUSY_MS * 1e6
    gaps = [g for (g,) in tick_gaps_ms(result, tmp_path)]
    assert len(gaps) >= 50, len(gaps)
    side_by_side = [g for g in gaps if g < BUSY_MS]
    assert side_by_side, f"no two callbacks of a tick overlapped: gaps {sorted(gaps)[:5]} ms"


class LossyEcho:
    """A UDP echo (a stand-in pong) that drops measured messages whose seq % 4 == 3."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.05)
        self.address = "127.0.0.1:%d" % self.sock.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)

    def serve(self) -> None:
        while not self.stop.is_set():
            try:
                data, peer = self.sock.recvfrom(65536)
            except TimeoutError:
                continue
            flags, seq = data[5], struct.unpack_from("<Q", data, 16)[0]
            if flags & (FLAG_WARMUP | FLAG_PROBE) == 0 and seq % 4 == 3:
                continue
            self.sock.sendto(data, peer)

    def __enter__(self) -> "LossyEcho":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()
        self.sock.close()


def test_per_topic_sequences_and_accounting_are_independent(tmp_path: Path) -> None:
    pong = subprocess.Popen([str(REAL_AGENT), "pong", "--transport", "udp", "--listen",
                             "127.0.0.1:0", "--quiet"], stdout=subprocess.PIPE, text=True)
    try:
        ready = pong.stdout.readline().split()
        assert ready[:2] == ["READY", "udp"]
        with LossyEcho() as lossy:
            report = tmp_path / "ping.json"
            done = subprocess.run(
                [str(REAL_AGENT), "ping", "--transport", "udp", "--topics", "2", "--connect",
                 f"{ready[2]},{lossy.address}", "--rate", "500", "--count", "200", "--warmup",
                 "20ms", "--payload", "64", "--json", str(report), "--quiet"],
                capture_output=True, text=True, timeout=30, check=False)
    finally:
        pong.terminate()
        pong.wait(5)
    assert done.returncode == 0, done.stderr
    r = json.loads(report.read_text())
    clean, lossy_topic = (t["accounting"] for t in r["per_topic"])
    # each topic numbers its own messages from 0: the echo's seq % 4 == 3 rule drops exactly 1/4
    assert (clean["sent"], clean["received"], clean["lost"]) == (200, 200, 0)
    assert (lossy_topic["sent"], lossy_topic["received"], lossy_topic["lost"]) == (200, 150, 50)
    assert (r["per_topic"][1]["name"], r["per_topic"][1]["address"]) == ("topic 1", lossy.address)
    total = r["measurement"]["accounting"]
    assert (total["sent"], total["received"], total["lost"], r["sent"]) == (400, 350, 50, 400)


def test_oneway_topics_count_each_stream(real_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "tcp", "--mode", "oneway", "--rate", "200",
                      "--duration", "1s", "--warmup", "100ms", "--topics", "2", "--busy-loop",
                      "200us", "--json-out", str(out), "--results", str(tmp_path / "r"), env=real_env,
                      timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    result = read_saved(out)
    pub = next(a for a in result["agents"] if a["role"] == "pub")
    assert [t["accounting"]["sent"] for t in result["per_topic"]] == [pub["sent"] // 2] * 2
    assert all(t["accounting"]["lost"] == 0 for t in result["per_topic"])
    assert result["measurement"]["accounting"]["sent"] == pub["sent"]
    assert "workload      2 topics, single executor, callback busy-loop 200 µs" in done.stdout
    assert done.stdout.count("\ntopic ") == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--topics", "0"], "--topics"),
    (["--busy-loop", "-1ms"], "--busy-loop"),
    (["--executor", "foo"], "--executor"),
    (["--topics", "3", "--listen", "127.0.0.1:0,127.0.0.1:0"],
     "--listen: 2 addresses given for --topics 3"),
    (["--topics", "2", "--listen", "/tmp/same,/tmp/same"], "topics 0 and 1 would share"),
])
def test_agent_usage_errors_name_the_flag(args: list[str], message: str) -> None:
    argv = [str(REAL_AGENT), "pong", "--transport", "udp" if "/tmp/same" not in args[-1] else "uds"]
    if "--listen" not in args:
        argv += ["--listen", "127.0.0.1:0"]
    done = subprocess.run(argv + args, capture_output=True, text=True, timeout=10, check=False)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert done.stdout == ""


def test_topic_names_and_samples_per_topic(tmp_path: Path) -> None:
    """sub --topics 2 --topic-name ... --samples s.csv: each topic's report entry under its
    name, its samples in s.<name as a file name>.csv, one row per message of that topic."""
    names = ["/camera/image_raw", "/scan"]
    named = [f"--topic-name={n}" for n in names]
    sub = subprocess.Popen([str(REAL_AGENT), "sub", "--transport", "udp", "--topics", "2",
                            "--listen", "127.0.0.1:0", *named, "--samples",
                            str(tmp_path / "s.csv"), "--json", str(tmp_path / "sub.json"),
                            "--quiet"], stdout=subprocess.PIPE, text=True)
    try:
        ready = sub.stdout.readline().split()
        assert ready[:2] == ["READY", "udp"]
        done = subprocess.run([str(REAL_AGENT), "pub", "--transport", "udp", "--topics", "2",
                               "--connect", ready[2], *named, "--rate", "500", "--count", "100",
                               "--payload", "64", "--quiet"],
                              capture_output=True, text=True, timeout=30, check=False)
        assert done.returncode == 0, done.stderr
        assert sub.wait(10) == 0
    finally:
        sub.kill()
    report = json.loads((tmp_path / "sub.json").read_text())
    files = [tmp_path / "s.camera_image_raw.csv", tmp_path / "s.scan.csv"]
    assert [(t["name"], t["address"], t["samples_file"]) for t in report["per_topic"]] == [
        (n, a, str(f)) for n, a, f in zip(names, ready[2].split(","), files)]
    for topic, path in zip(report["per_topic"], files):
        rows = path.read_text().splitlines()[1:]
        assert len(rows) == topic["accounting"]["received"] == 100
        assert sorted(int(r.split(",")[0]) for r in rows) == list(range(100))
    assert report["config"]["topic_names"] == names
    assert not (tmp_path / "s.csv").exists()


@pytest.mark.parametrize(("names", "message"), [
    (["/scan"], "--topic-name: 1 names given for --topics 2"),
    (["/scan", "/scan"], "--topic-name: topics 0 and 1 are both named '/scan'"),
])
def test_topic_names_are_checked(names: list[str], message: str) -> None:
    done = subprocess.run([str(REAL_AGENT), "ping", "--transport", "udp", "--topics", "2",
                           "--connect", "127.0.0.1:9", *(f"--topic-name={n}" for n in names)],
                          capture_output=True, text=True, timeout=10, check=False)
    assert done.returncode == 2 and message in done.stderr, done.stderr
