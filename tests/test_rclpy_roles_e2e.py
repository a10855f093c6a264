"""``--opt client=rclpy`` on a single stream's other side (issue 40, item 1) on ``--transport
ros2`` (managed Kilted, rmw_fastrtps_cpp), against the agent sender's own count:

- one way: each of ``--subscribers 2`` is a real rclpy subscriber (ros2/stream_sub.py) whose
  arrivals the agent's sub measures; every sub received exactly what the pub itself says it
  sent (reliable, keep-last 1000: every message is counted, none overwritten), the schedule's
  40 measured + 4 warm-up messages, and each sub's process (the rclpy node that became the
  agent) lived through the whole schedule (its wall time, counted across the exec);
- service: the server is a real rclpy service server (ros2/service_server.py) answering as
  mwperf's does; the client checked every reply (header, FLAG_ECHO, payload pattern), its
  calls are exactly what the server counted itself (its own line in its log), and the server
  work injected is a floor of every call's latency;
- a one-way run stopped 1 s into its measurement (SIGTERM) is partial and keeps what the rclpy
  sub took (what the pub counted as sent, but its last message that may have been on its way,
  none lost, the sub's reason said); the report is the rclpy node's process (its pid, and a
  peak memory at least a Python's that imported rclpy); nothing of it runs on.

20 Hz: rclpy's executors keep it on this 2-core VM (test_graph_rclpy_e2e.py: RATE)."""

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import alive, read_saved, run_mwperf, started_here, wait_into_measurement
from mwperf import ros2

pytestmark = pytest.mark.agent

RATE, SECONDS = 20, 2
MEASURED, WARMUP = RATE * SECONDS, 4
"""the schedule: 40 messages in 2 s at 20 Hz after a 200 ms warm-up (4 more)"""
SCHEDULE = ("--rate", str(RATE), "--duration", f"{SECONDS}s", "--warmup", "200ms")
WORK_MS = 5
"""the service server's injected work per call"""


def rclpy_sides(script: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", f"ros2/{script}"], capture_output=True,
                           text=True).stdout.split()
    return [int(p) for p in found if started_here(int(p)) and alive(int(p))]


def test_each_rclpy_subscriber_gets_every_message_the_pub_counted(real_env: dict[str, str],
                                                                   tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = run_mwperf("run", "--transport", "ros2", "--mode", "oneway", "--opt",
                      "client=rclpy", "--subscribers", "2", *SCHEDULE, "--history",
                      "keep-last:1000", "--no-save",
                      "--json-out", str(out), env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    result = read_saved(out)
    assert result["config"]["client"] == "rclpy" and result["config"]["opts"] == []
    pub = next(a for a in result["agents"] if a["role"] == "pub")
    subs = [a for a in result["agents"] if a["role"] == "sub"]
    assert pub["sent"] == MEASURED, pub
    assert len(subs) == 2
    for sub in subs:
        assert sub["config"]["arrivals"].endswith(".arrivals")  # measured what rclpy took
        acc = sub["measurement"]["accounting"]
        assert (acc["sent"], acc["received"], acc["lost"], acc["corrupted"]) == \
            (pub["sent"], pub["sent"], 0, 0), acc
        assert acc["warmup_received"] == WARMUP
        assert sub["process"]["wall_s"] >= SECONDS + 0.2, sub["process"]  # warm-up + measured
        assert sub["measurement"]["response"]["min_ns"] > 0
    assert rclpy_sides("stream_sub.py") == []


def test_an_rclpy_service_server_answers_every_call_the_client_made(real_env: dict[str, str],
                                                                     tmp_path: Path) -> None:
    done = run_mwperf("run", "--transport", "ros2", "--mode", "service", "--opt",
                      "client=rclpy", *SCHEDULE, "--server-work", f"{WORK_MS}ms",
                      "--results", str(tmp_path), env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr
    folder = next(tmp_path.glob("*/result.json")).parent
    result = read_saved(folder / "result.json")
    assert [d["name"] for d in result["daemons"]] == ["rclpy-server"]
    assert [a["role"] for a in result["agents"]] == ["client"]
    m = result["measurement"]
    acc, calls = m["accounting"], m["calls"]
    assert (acc["sent"], acc["received"], calls["answered"]) == (MEASURED,) * 3, m
    assert acc["corrupted"] == calls["unchecked"] == calls["timeouts"] == 0
    log = (folder / "daemons" / "rclpy-server.log").read_text()
    own = json.loads(re.search(r"^(\{.*\})$", log, re.MULTILINE).group(1))
    assert own["measured"] == acc["sent"]  # the server's own count of this run's calls
    assert own["answered"] == own["requests"] >= acc["sent"] + acc["warmup_sent"]
    assert own["foreign"] == 0
    assert m["response"]["min_ns"] >= WORK_MS * 1_000_000  # the injected work is a floor
    assert rclpy_sides("service_server.py") == []


def test_a_stopped_run_keeps_what_the_rclpy_sub_took(real_env: dict[str, str], tmp_path: Path,
                                                      kilted: ros2.Distribution) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport", "ros2",
                             "--mode", "oneway", "--opt", "client=rclpy", "--rate", str(RATE),
                             "--duration", "30s", "--warmup", "200ms", "--history",
                             "keep-last:1000", "--no-save", "--json-out", str(out)],
                            env=real_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    wait_into_measurement(proc.pid, 1.0, time.monotonic() + 120)
    [rclpy_pid] = rclpy_sides("stream_sub.py")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    result = read_saved(out)
    assert result["status"] == "partial"
    pub = next(a for a in result["agents"] if a["role"] == "pub")
    sub = next(a for a in result["agents"] if a["role"] == "sub")
    assert sub["status_reason"] == "stopped by signal before the end-of-stream marker"
    acc = sub["measurement"]["accounting"]
    assert acc["received"] >= RATE  # at least the second it was measuring
    # both are stopped at once: the pub's last message may still be on its way (one period)
    assert pub["sent"] - 1 <= acc["received"] <= pub["sent"], (acc, pub["sent"])
    assert acc["lost"] == 0, acc
    # the rclpy node became the sub's agent in place: its pid; its peak memory at least a
    # Python's that only imported rclpy (the node did that, and more)
    assert sub["process"]["pid"] == rclpy_pid
    assert sub["process"]["max_rss_kib"] >= rclpy_import_rss_kib(kilted), sub["process"]
    assert rclpy_sides("stream_sub.py") == []


def rclpy_import_rss_kib(dist: ros2.Distribution) -> int:
    """The peak memory (VmHWM) of the distribution's Python once it imported rclpy."""
    code = ("import rclpy, std_msgs.msg\n"
            "print(next(l.split()[1] for l in open('/proc/self/status') "
            "if l.startswith('VmHWM:')))")
    done = subprocess.run([str(dist.python), "-c", code], capture_output=True, text=True,
                          timeout=60, env=dist.child_env())
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])
