#!/usr/bin/env python3
"""mwperf's foxglove transport against an independent Foxglove WebSocket client pair, measured
through the same server in the same run.

The server is mwperf's foxglove-sdk relay (python/mwperf/bridges/foxglove_server.py), started
once per repetition. Interleaved per repetition: (1) mwperf-agent ping/pong over the
``foxglove`` transport; (2) a reference ping/pong written here on the `websockets` package
(asyncio; it shares no code with mwperf's Rust client): the pong client subscribes to the ping
topic and client-publishes each message back, the ping client times send -> reply. Same
message size (mwperf: 56-byte header + payload), same topics shape, round trip, closed loop and
at a fixed rate. Prints medians over repetitions and mwperf p50 / reference p50.

    python3 benchmarks/bench_foxglove.py --reps 5 --seconds 3 --write
"""
from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchlib import find_agent, measurement_of, med, revision, stamp, write_section  # noqa: E402  (benchmarks/ on sys.path)

ROOT = Path(__file__).resolve().parents[1]
SERVER = ROOT / "python" / "mwperf" / "bridges" / "foxglove_server.py"
HEADER = 56


def start_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    found = re.match(r"ready (\S+)", line)
    if not found:
        proc.kill()
        sys.exit(f"bench_foxglove: the server did not start ({line!r})")
    return proc, found.group(1)


def mwperf_rtt(agent: Path, server: str, rate: int, seconds: float, size: int,
               opts: list[str]) -> float | None:
    pong = subprocess.Popen([str(agent), "pong", "--transport", "foxglove", "--listen",
                             f"{server}/auto", "--quiet", *opts], stdout=subprocess.PIPE, text=True)
    try:
        line = pong.stdout.readline().split()
        if not line or line[0] != "READY":
            return None
        with tempfile.TemporaryDirectory() as d:
            out = f"{d}/ping.json"
            subprocess.run([str(agent), "ping", "--transport", "foxglove", "--connect", line[2],
                            "--rate", str(rate), "--payload", str(size - HEADER), "--duration",
                            f"{seconds}s", "--warmup", "1s", "--quiet", "--json", out, *opts],
                           check=False, timeout=seconds + 60)
            m = measurement_of(json.load(open(out)))
    finally:
        pong.terminate()
        pong.wait(10)
    return m["service"]["p50_ns"]


async def _reference(server: str, rate: int, seconds: float, size: int) -> float:
    import websockets
    url = f"ws://{server}/"
    base = f"/mwperf/ref{int(time.time() * 1e6) % 10**9}"

    async def client(publish: str, listen: str):
        ws = await websockets.connect(url, subprotocols=["foxglove.sdk.v1"], compression=None)
        await ws.send(json.dumps({"op": "advertise", "channels": [
            {"id": 1, "topic": publish, "encoding": "mwperf", "schemaName": "s"},
            {"id": 2, "topic": listen, "encoding": "mwperf", "schemaName": "s"}]}))
        while True:
            msg = json.loads(await ws.recv())
            for ch in msg.get("channels", []) if msg.get("op") == "advertise" else []:
                if ch["topic"] == listen:
                    await ws.send(json.dumps({"op": "subscribe", "subscriptions":
                                              [{"id": 1, "channelId": ch["id"]}]}))
                    return ws

    pong = await client(f"{base}/pong", f"{base}/ping")
    ping = await client(f"{base}/ping", f"{base}/pong")
    await asyncio.sleep(0.3)

    async def echo() -> None:
        while True:
            m = await pong.recv()
            if isinstance(m, bytes):
                await pong.send(b"\x01" + struct.pack("<I", 1) + m[13:])

    task = asyncio.create_task(echo())
    body = bytes(size)
    rtts: list[float] = []
    period = 1.0 / rate if rate else 0.0
    start = time.perf_counter()
    due = start
    while time.perf_counter() - start < seconds + 1.0:
        t0 = time.perf_counter()
        await ping.send(b"\x01" + struct.pack("<I", 1) + body)
        while not isinstance(await ping.recv(), bytes):
            pass
        if t0 - start >= 1.0:  # after 1 s of warm-up, as mwperf's
            rtts.append(time.perf_counter() - t0)
        if period:
            due += period
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
    task.cancel()
    await ping.close()
    await pong.close()
    return statistics.median(rtts) * 1e9


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--size", type=int, default=1080, help="message bytes (1080 = Array1k)")
    p.add_argument("--write", action="store_true")
    p.add_argument("--agent", help="mwperf-agent to measure (default: the release build)")
    a = p.parse_args()
    agent = find_agent(a.agent, "bench_foxglove")
    rows = []
    quick = ["--opt", "quickack=on"]
    for label, rate, opts in (("closed loop (rate max)", 0, []), ("1000 Hz", 1000, []),
                              ("1000 Hz, mwperf with `--opt quickack=on`", 1000, quick),
                              ("100 Hz", 100, [])):
        mw, ref, ratios = [], [], []
        for rep in range(a.reps):
            server, address = start_server()
            try:
                m = mwperf_rtt(agent, address, rate, a.seconds, a.size, opts)
                r = asyncio.run(_reference(address, rate, a.seconds, a.size))
            finally:
                server.terminate()
                server.wait(10)
            print(f"  {label} rep {rep + 1}: mwperf {m and m / 1e3:.1f} µs, reference "
                  f"{r / 1e3:.1f} µs", file=sys.stderr)
            if m:
                mw.append(m)
                ref.append(r)
                ratios.append(m / r)
        rows.append(f"| {label} | {med(mw) / 1e3:.0f} µs | {med(ref) / 1e3:.0f} µs | "
                    f"**{med(ratios):.2f}** | {min(ratios):.2f}–{max(ratios):.2f} |")
    text = "\n".join([
        f"Measured {stamp()} at {revision()}, {a.reps} repetitions of {a.seconds:g} s after 1 s "
        f"warm-up, medians; {a.size}-byte messages through one foxglove-sdk relay per repetition.",
        "",
        "| round trip through the relay | mwperf foxglove p50 (service time) | websockets client pair p50 | "
        "ratio | ratio per pair, min–max |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "```",
        f"python3 benchmarks/bench_foxglove.py --reps {a.reps} --seconds {a.seconds:g} --write",
        "```",
    ])
    print(text)
    if a.write:
        write_section("foxglove", text)


if __name__ == "__main__":
    main()
