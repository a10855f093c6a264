"""What a WireGuard tunnel between two hosts costs each transport (issue 42, `--secure
wireguard`): the same round trip across a clean emulated link (`--link delay=0ms`: the tunnel's
cost alone, no link delay to hide it) plain and through the tunnel, in interleaved repetitions
(the order flips each repetition): p50 and p99, the time to the first echo, bytes on the wire
per message (`--wire-bytes`), CPU per message (the whole run's CPU of the agents, plus
wireguard-go's for the tunnel: the encryption runs there; start-up and handshake included,
divided by the measured messages, as the report's) and the handshake.

    python3 benchmarks/bench_tunnel.py --reps 3 --seconds 5 [--payload 256] [--write]

Checked in every point, independently of mwperf's own figures: every message the ping counts
was echoed by the pong (its own count); with the tunnel, the link emulator forwarded exactly the
bytes WireGuard itself counts sending (its `tx_bytes`) plus 28 bytes of IP and UDP per packet,
each way: nothing crossed outside the tunnel. Needs root (emulated hosts) and wireguard-go."""

from __future__ import annotations

import os
import subprocess
import sys

from benchlib import (ROOT, interleaved_parser, listed, med, read_result, revision, stamp,
                      write_section)

TRANSPORTS = ("udp", "tcp", "ros1", "zenoh", "mqtt", "cyclonedds", "fastdds")
MODES = ("plain", "wireguard")
OUTER = 28
"""IPv4 + UDP headers of a WireGuard packet"""
PROBLEMS: list[str] = []


def run(transport: str, mode: str, seconds: int, payload: str) -> dict[str, float | None]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--transport", transport,
                           "--link", "delay=0ms", "--wire-bytes", "--rate", "100", "--payload",
                           payload, "--duration", f"{seconds}s", "--warmup", "1s", "--depth",
                           "100", "--no-save", "--json",
                           *([] if mode == "plain" else ["--secure", mode])],
                          capture_output=True, text=True, env=env, timeout=300, check=False)
    if not done.stdout.strip():
        sys.exit(f"bench_tunnel: {transport} {mode}: exit {done.returncode}: "
                 f"{done.stderr.strip()[-300:]}")
    result = read_result(done.stdout)
    m = result.get("measurement")
    if m is None or result["status"] != "complete":
        PROBLEMS.append(f"{transport} {mode}: {result['status']}: {result['status_reason']}")
        if m is None:
            return {}
    acc = m["accounting"]
    agents = {a["role"]: a for a in result["agents"]}
    pong = agents["pong"]["counters"]
    if pong["echoed"] < acc["received"] + acc["warmup_received"]:
        PROBLEMS.append(f"{transport} {mode}: the pong echoed {pong['echoed']}, the ping "
                        f"received {acc['received']} + {acc['warmup_received']}")
    link = result["link"]
    tunnel = link.get("tunnel")
    agent_cpu = sum((a.get("process") or {}).get("cpu_user_s", 0)
                    + (a.get("process") or {}).get("cpu_sys_s", 0) for a in agents.values())
    tunnel_cpu = sum((tunnel or {}).get("cpu_s", {}).values())
    if tunnel is not None:
        sent = {(p["host"], p["peer"]): p["tx_bytes"] for p in tunnel["peers"]}
        for way, ends in (("up", ("a", "b")), ("down", ("b", "a"))):
            counters = link["emulator"][way]
            if counters["forwarded_bytes"] != sent[ends] + OUTER * counters["forwarded"]:
                PROBLEMS.append(f"{transport} {mode} {way}: the link forwarded "
                                f"{counters['forwarded_bytes']} B in {counters['forwarded']} "
                                f"packets, WireGuard counts {sent[ends]} B sent")
    wire = result.get("wire") or {}
    messages = acc["sent"]  # as the report's CPU per message (report/security.py)
    shakes = [h["ms"] for h in (tunnel or {}).get("handshakes", []) if h["ms"] is not None]
    found = result.get("discovery") or {}
    return {"p50_us": m["response"]["p50_ns"] / 1e3, "p99_us": m["response"]["p99_ns"] / 1e3,
            "first_ms": ((found.get("matched_ns") or 0) + (found.get("first_reply_ns") or 0))
            / 1e6 if found else None,
            "wire_up": wire.get("up_bytes_per_message"),
            "cpu_us": (agent_cpu + tunnel_cpu) / messages * 1e6 if messages else None,
            "tunnel_cpu_share": tunnel_cpu / (agent_cpu + tunnel_cpu) if tunnel else None,
            "handshake_ms": max(shakes) if shakes else None, "lost": acc["lost"]}


def cell(figures: dict[tuple[str, str, str], list[float]], transport: str, mode: str,
         key: str, fmt: str = ",.1f") -> str:
    xs = [x for x in figures.get((transport, mode, key), []) if x is not None]
    if not xs:
        return "-"
    return f"{format(med(xs), fmt)} ({format(min(xs), fmt)}-{format(max(xs), fmt)})"


def ratio(figures: dict[tuple[str, str, str], list[float]], transport: str, key: str) -> str:
    """Per repetition the tunnel's figure / plain's (the same repetition), their median."""
    plain = figures.get((transport, "plain", key), [])
    tunnel = figures.get((transport, "wireguard", key), [])
    pairs = [t / p for p, t in zip(plain, tunnel) if p and t is not None]
    if not pairs:
        return "-"
    return f"{med(pairs):.2f} ({min(pairs):.2f}-{max(pairs):.2f})"


def main() -> None:
    parser = interleaved_parser(__doc__, 3, TRANSPORTS)
    parser.add_argument("--payload", default="256")
    args = parser.parse_args()
    transports = listed(args.transports)
    figures: dict[tuple[str, str, str], list[float]] = {}
    load = os.getloadavg()
    for rep in range(args.reps):
        order = MODES if rep % 2 == 0 else tuple(reversed(MODES))
        for transport in transports:
            for mode in order:
                for key, value in run(transport, mode, args.seconds, args.payload).items():
                    figures.setdefault((transport, mode, key), []).append(value)  # type: ignore[arg-type]
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    load_end = os.getloadavg()
    lines = [f"Measured {stamp()} at {revision()} (`python3 benchmarks/bench_tunnel.py --reps "
             f"{args.reps} --seconds {args.seconds} --payload {args.payload}`), round trip "
             f"{args.payload} B @ 100 Hz across `--link delay=0ms`, medians of {args.reps} "
             f"interleaved repetitions (min-max; ratios: the tunnel's over plain's of the same "
             f"repetition); load average {load[0]:.2f} at the start, {load_end[0]:.2f} at the "
             "end (2 CPUs):", "",
             "| transport | --secure | p50 µs | p50 ratio | p99 µs | p99 ratio | first echo ms "
             "| B/msg up | CPU µs/msg | CPU ratio | wireguard-go's CPU share | handshake ms |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for transport in transports:
        for mode in MODES:
            tunnel = mode == "wireguard"
            lines.append(
                f"| {transport} | {mode} | {cell(figures, transport, mode, 'p50_us')} | "
                f"{ratio(figures, transport, 'p50_us') if tunnel else '1'} | "
                f"{cell(figures, transport, mode, 'p99_us')} | "
                f"{ratio(figures, transport, 'p99_us') if tunnel else '1'} | "
                f"{cell(figures, transport, mode, 'first_ms')} | "
                f"{cell(figures, transport, mode, 'wire_up', ',.0f')} | "
                f"{cell(figures, transport, mode, 'cpu_us')} | "
                f"{ratio(figures, transport, 'cpu_us') if tunnel else '1'} | "
                f"{cell(figures, transport, mode, 'tunnel_cpu_share', '.2f')} | "
                f"{cell(figures, transport, mode, 'handshake_ms', '.2f')} |")
    lost = sum(x for (_, _, k), xs in figures.items() if k == "lost" for x in xs)
    lines += ["", f"Checks: lost {lost:.0f} in all points; every pong echoed what its ping "
              "received; with the tunnel the link's forwarded bytes = WireGuard's own tx_bytes "
              "+ 28 per packet, each way, in every point. Problems: "
              + ("; ".join(PROBLEMS) if PROBLEMS else "none") + "."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section("tunnel", text)


if __name__ == "__main__":
    main()
