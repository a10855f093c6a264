"""ROS 2 service calls through rcl (``--transport ros2 --mode service``) against the raw Fast DDS
services (``--transport fastdds``) and against a real rclpy server (issue 39, item 2).

REPEATS times, interleaved, for 64 B and 64 KiB (request and reply alike, one call in flight,
RATE Hz for SECONDS after a 1 s warm-up):

  ros2      `mwperf run --transport ros2 --mode service` (an rcl client and an rcl service
            server of rcl_interfaces/srv/GetParameters, rmw_fastrtps_cpp of the managed Kilted,
            Fast DDS 3.2);
  fastdds   `mwperf run --transport fastdds --mode service` (Debian's Fast DDS 2.9, the
            rmw_fastrtps way of requests and replies, mwperf's own Bytes type);
  rclpy     mwperf's ros2 client (`mwperf-agent client --transport ros2`) calling a real rclpy
            server of the same type (tests/ros2peers/rclpy_service.py, answering each request
            with its bytes), whose own count of data calls is checked against the client's;
  rclpy client  a real rclpy client (the same rate, 1 s of warm-up calls) against mwperf's ros2
            server, timed by the rclpy client's own clock (send to the future done: rclpy's
            executor included), every reply checked.

The figure is the call's round trip as the client measures it: request handed to the middleware
until its reply was taken (`service` p50). Printed: one line per run, then the medians and the
spread (min..max) of the repeats; with --write the section in BENCHMARKS.md.
Usage: python3 benchmarks/bench_ros2_services.py [--reps N] [--seconds S] [--rate HZ] [--write]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "python"), str(ROOT / "benchmarks")]
os.environ["PYTHONPATH"] = os.pathsep.join(
    p for p in (str(ROOT / "python"), os.environ.get("PYTHONPATH")) if p)
import benchlib  # noqa: E402
from mwperf import ros2  # noqa: E402
from ros2peers.peers import Peer  # noqa: E402

PEER = ROOT / "tests" / "ros2peers" / "rclpy_service.py"
SIZES = (("64 B", "64", 64), ("64 KiB", "64KiB", 65536))
HEADER_LEN = 56


def run_point(transport: str, size: str, seconds: float, rate: int) -> float:
    """`mwperf run --mode service`: the call p50 (ns) of a complete run."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "r.json"
        cmd = [sys.executable, "-m", "mwperf", "run", "--no-save", "--transport", transport,
               "--mode", "service", "--payload", size, "--rate", str(rate), "--duration",
               f"{seconds}s", "--warmup", "1s", "--json-out", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        r = benchlib.read_result(out.read_text())
    assert r["status"] == "complete", r["status_reason"]
    m = r["measurement"]
    assert m["calls"]["timeouts"] == m["accounting"]["corrupted"] == 0, m["calls"]
    return m["service"]["p50_ns"]


def rclpy_server_point(dist: ros2.Distribution, agent: Path, size: str, seconds: float,
                       rate: int) -> float:
    """mwperf's ros2 client against a real rclpy server: the call p50 (ns); the server's own
    count of data calls must equal the client's answered calls."""
    dom = int(os.environ.get("ROS_DOMAIN_ID", "0"))
    base = f"bench_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "ROS_DOMAIN_ID": str(dom)}
    server = Peer("rclpy server", [str(dist.python), str(PEER), "--role", "server", "--service",
                                   f"/mwperf/{base}"], env=dist.child_env(base=env))
    try:
        server.json_line("ready", 60)
        done = subprocess.run([str(agent), "client", "--transport", "ros2", "--connect",
                               f"{dom}/{base}", "--payload", size, "--rate", str(rate),
                               "--duration", f"{seconds}s", "--warmup", "1s", "--json", "-",
                               "--quiet"], capture_output=True, text=True, timeout=300,
                              env=dist.child_env(base=env))
        server.stop()
        counts = server.json_line("answered", 5)
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    m = benchlib.measurement_of(benchlib.read_result(done.stdout))
    assert m["calls"]["unchecked"] == m["accounting"]["corrupted"] == 0, m
    assert counts["data"] == m["calls"]["answered"], (counts, m["calls"])
    return m["service"]["p50_ns"]


def rclpy_client_point(dist: ros2.Distribution, agent: Path, payload: int, seconds: float,
                       rate: int) -> int:
    """A real rclpy client's own p50 (ns) against mwperf's ros2 server, at the same rate after
    as many warm-up calls as one second holds."""
    count = int(seconds * rate)
    dom = int(os.environ.get("ROS_DOMAIN_ID", "0"))
    base = f"bench_{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "ROS_DOMAIN_ID": str(dom)}
    server = subprocess.Popen([str(agent), "server", "--transport", "ros2", "--listen",
                               f"{dom}/{base}", "--quiet"], stdout=subprocess.PIPE, text=True,
                              env=dist.child_env(base=env))
    try:
        assert server.stdout is not None and server.stdout.readline().startswith("READY")
        client = Peer("rclpy client", [str(dist.python), str(PEER), "--role", "client",
                                       "--service", f"/mwperf/{base}", "--count", str(count),
                                       "--payload", str(payload), "--rate", str(rate),
                                       "--warmup", str(rate)],
                      env=dist.child_env(base=env))
        result = client.json_line("calls", 300)
        client.stop()
    finally:
        benchlib.stop(server)
    assert result["answered"] == result["echoed"] == count, result
    return result["p50_ns"]


def us(ns: float) -> str:
    return f"{ns / 1000:.1f} µs"


def spread(values: list[float]) -> str:
    return f"{us(statistics.median(values))} ({us(min(values))}–{us(max(values))})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--rate", type=int, default=100)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    agent = benchlib.find_agent(None, "bench_ros2_services")
    os.environ["MWPERF_AGENT"] = str(agent)
    dist = ros2.pick("kilted", env={})
    kinds = ("ros2", "fastdds", "rclpy server", "rclpy client")
    got: dict[tuple[str, str], list[float]] = {(k, s): [] for k in kinds for s, _, _ in SIZES}
    for rep in range(args.reps):
        for label, size, payload in SIZES:
            for kind in kinds:
                if kind in ("ros2", "fastdds"):
                    p50 = run_point(kind, size, args.seconds, args.rate)
                elif kind == "rclpy server":
                    p50 = rclpy_server_point(dist, agent, size, args.seconds, args.rate)
                else:
                    p50 = rclpy_client_point(dist, agent, payload, args.seconds, args.rate)
                got[(kind, label)].append(p50)
                print(f"rep {rep + 1} {label:7} {kind:13} p50 {us(p50)}", flush=True)
    rows = ["| size | ros2 (rcl client → rcl server) | fastdds (raw Fast DDS 2.9) | ros2 / fastdds "
            "| ros2 client → rclpy server | rclpy client → ros2 server (rclpy's own clock) |",
            "|---|---|---|---|---|---|"]
    for label, _, _ in SIZES:
        r2, fd = got[("ros2", label)], got[("fastdds", label)]
        ratios = [a / b for a, b in zip(r2, fd)]
        rows.append(f"| {label} | {spread(r2)} | {spread(fd)} | {statistics.median(ratios):.2f} "
                    f"({min(ratios):.2f}–{max(ratios):.2f}) | "
                    f"{spread(got[('rclpy server', label)])} | "
                    f"{spread(got[('rclpy client', label)])} |")
    head = (f"{benchlib.stamp()}, {benchlib.revision()}, {args.reps} interleaved repetitions of "
            f"{args.seconds:g} s (+1 s warm-up) at {args.rate} Hz, one call in flight, loopback; "
            f"call round trip p50 (request handed over to reply taken), median (min–max) of the "
            f"repetitions; the ratio is the median of the per-repetition ratios.")
    text = head + "\n\n" + "\n".join(rows) + "\n"
    print(text)
    if args.write:
        benchlib.write_section("ros2-services", text)


if __name__ == "__main__":
    main()
