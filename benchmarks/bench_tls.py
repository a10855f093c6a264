"""What TLS costs zenoh, mqtt or foxglove (issue 42, `mwperf run --secure tls|mtls --transport
zenoh|mqtt|foxglove`): the round trip at 100 Hz of 256 B and 64 KiB plain, over TLS (`tls`:
zenoh's TLS link, peer mode; mqtt: mosquitto's TLS listener and the agent's rustls client, QoS 1;
foxglove: the foxglove-sdk server's wss and the agent's rustls client) and with mutual TLS
(`mtls`; not foxglove: its server checks no client certificate): p50 and p99, the ping's open (its `discovery.open_ns`: TCP connection, the
TLS handshake, mqtt's CONNECT/CONNACK, zenoh's session; the handshake is inside the middleware's
open, before the match), the time from the open's start to the first echo, the CPU per round
trip of both agents and the broker (their getrusage over the whole run, in the result), in
interleaved repetitions.

`zenoh-quic` runs zenoh plain, over its TLS link and over its QUIC link (`--opt link=quic`:
TLS 1.3 over UDP) side by side.

The independent check is a capture: every point runs while a raw AF_PACKET socket records
loopback's TCP segments and UDP datagrams; afterwards the segments to and from the point's own port (zenoh: the
pong's; mqtt and foxglove: the broker's or server's, both hops of each way), from the result,
are summed, so the bytes
per round trip on the wire come from the kernel's packets, not from mwperf; and the same capture
shows whether mwperf's message header (its magic `MWPF`) crossed in the clear: once per message
and hop each way plain, never under TLS. mqtt's open is checked against the same capture where
its packets can be read: plain, the ping's connection from its SYN to the broker's CONNACK (the
last connection to send a CONNECT is the ping's: it starts after the pong is ready).

    python3 benchmarks/bench_tls.py --transport zenoh|zenoh-quic|mqtt|foxglove --reps 3 --seconds 5 [--write]
    (root: the capture)
"""

from __future__ import annotations

import argparse
import os
import socket
import struct
import subprocess
import sys
import threading

from benchlib import ROOT, med, read_result, revision, spread, stamp, write_section

MODES = ("plain", "tls", "mtls")
PAYLOADS = (256, 65536)
MAGIC = b"MWPF"
ETH_P_ALL = 0x0003
SO_TIMESTAMPNS = 35  # Linux, asm-generic/socket.h


class Capture:
    """Loopback's IPv4 TCP segments and UDP datagrams (QUIC's) while it runs: (source port,
    destination port, payload)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.bind(("lo", 0))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
        # the kernel's receive time of each packet (not when this thread got to it)
        self.sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        self.sock.settimeout(0.2)
        self.segments: list[tuple[int, int, int, int, bytes]] = []
        """(the kernel's receive time ns, source port, destination port, TCP flags, payload)"""
        self.stopping = False
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stopping:
            try:
                frame, ancillary, _, where = self.sock.recvmsg(1 << 17, 64)
            except TimeoutError:
                continue
            stamp = next((struct.unpack("qq", data[:16]) for level, kind, data in ancillary
                          if (level, kind) == (socket.SOL_SOCKET, SO_TIMESTAMPNS)), None)
            if stamp is None:
                continue
            if where[2] == socket.PACKET_OUTGOING:  # loopback shows each packet twice
                continue
            if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] not in (6, 17):
                continue
            ihl = (frame[14] & 0x0F) * 4
            total = struct.unpack("!H", frame[16:18])[0]
            at = 14 + ihl  # the TCP or UDP header
            sport, dport = struct.unpack("!HH", frame[at:at + 4])
            tcp = frame[23] == 6
            data_at = at + ((frame[at + 12] >> 4) * 4 if tcp else 8)
            self.segments.append((stamp[0] * 1_000_000_000 + stamp[1], sport, dport,
                                  frame[at + 13] if tcp else 0,
                                  frame[data_at:14 + total]))

    def stop(self) -> None:
        self.stopping = True
        self.thread.join(5)
        self.sock.close()

    def of_port(self, port: int) -> tuple[int, int, int]:
        """(payload bytes, MWPF magics in them, segments or datagrams that carry any) of the
        segments (or datagrams) to or from ``port``."""
        mine = [data for _, sport, dport, _, data in self.segments if port in (sport, dport)]
        return (sum(len(d) for d in mine), sum(d.count(MAGIC) for d in mine),
                sum(1 for d in mine if d))

    def mqtt_open_ns(self, broker: int) -> int | None:
        """Plain mqtt: the last client's connection to ``broker`` from its SYN to the broker's
        CONNACK (MQTT packet type 2), on this capture's clock; None if not seen."""
        connects = [sport for _, sport, dport, _, data in self.segments
                    if dport == broker and data[:1] == b"\x10"]
        if not connects:
            return None
        client = connects[-1]
        syn = next((t for t, sport, dport, flags, _ in self.segments
                    if (sport, dport) == (client, broker) and flags & 0x02), None)
        connack = next((t for t, sport, dport, _, data in self.segments
                        if (sport, dport) == (broker, client) and data[:1] == b"\x20"), None)
        return None if syn is None or connack is None else connack - syn


TRANSPORTS = {"zenoh": ("tls", "zenoh peer mode", MODES),
              "zenoh-quic": ("tls-quic", "zenoh peer mode, plain over tcp/, TLS over tls/ (TCP) "
                             "and over quic/ (QUIC: TLS 1.3 over UDP, --opt link=quic)",
                             ("plain", "tls", "tls+quic", "mtls+quic")),
              "mqtt": ("tls-mqtt", "mqtt through mosquitto, QoS 1 (--reliability reliable)",
                       MODES),
              "foxglove": ("tls-foxglove", "foxglove through the foxglove-sdk relay server",
                           ("plain", "tls"))}
"""transport -> (its BENCHMARKS.md section, what ran, its modes)"""


def port_of(transport: str, connect: str) -> int:
    """The port a ping's connect address names: zenoh ``tls/HOST:PORT#base``, mqtt and
    foxglove ``HOST:PORT/base``."""
    address = connect.split("#")[0] if transport == "zenoh" else connect.split("/")[0]
    return int(address.rsplit(":", 1)[1])


def secured(mode: str) -> list[str]:
    """The run's flags of a mode: ``plain``, ``tls``, ``mtls``, or ``tls+quic`` (zenoh's QUIC
    link)."""
    secure, _, link = mode.partition("+")
    return ([] if secure == "plain" else ["--secure", secure]) + (
        ["--opt", f"link={link}"] if link else [])


def point(transport: str, mode: str, payload: int, seconds: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "python")}
    transport = transport.split("-")[0]  # zenoh-quic: zenoh
    capture = Capture()
    try:
        done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--transport",
                               transport, "--reliability", "reliable", "--rate", "100",
                               "--payload", str(payload),
                               "--duration", f"{seconds}s", "--depth", "1000", "--no-save",
                               "--json", *secured(mode)],
                              capture_output=True, text=True, env=env, timeout=300,
                              check=False)
    finally:
        capture.stop()
    result = read_result(done.stdout) if done.stdout.strip() else None
    if result is None or result["status"] != "complete":
        sys.exit(f"bench_tls: {transport} {mode} {payload}: exit {done.returncode}: "
                 f"{done.stderr.strip()[-400:]}")
    m, found = result["measurement"], result["discovery"]
    acc = m["accounting"]
    agents = {a["role"]: a for a in result["agents"]}
    pong = agents["pong"]["counters"]
    if not (acc["received"] == acc["sent"] and pong["echoed"] >= acc["sent"]):  # peer's count
        sys.exit(f"bench_tls: {mode} {payload}: sent {acc['sent']}, received "
                 f"{acc['received']}, the pong echoed {pong['echoed']}")
    wire, magics, packets = capture.of_port(port_of(transport,
                                                    agents["ping"]["config"]["connect"]))
    trips = acc["sent"] + acc["warmup_sent"]
    cpu = sum(a["process"]["cpu_user_s"] + a["process"]["cpu_sys_s"] for a in agents.values())
    cpu += sum(d["cpu_user_s"] + d["cpu_sys_s"] for d in result.get("daemons") or [])
    opened = found.get("open_ns")
    if opened is None:
        sys.exit(f"bench_tls: {transport} {mode} {payload}: the result has no discovery.open_ns "
                 "(an agent older than the figure?)")
    wire_open = (capture.mqtt_open_ns(port_of(transport, agents["ping"]["config"]["connect"]))
                 if transport == "mqtt" and mode == "plain" else None)
    return {"p50_us": m["response"]["p50_ns"] / 1e3, "p99_us": m["response"]["p99_ns"] / 1e3,
            "open_ms": opened / 1e6,
            **({"wire_open_ms": wire_open / 1e6} if wire_open is not None else {}),
            "first_echo_ms": (opened + found["matched_ns"] + (found["first_reply_ns"] or 0))
            / 1e6,
            "cpu_us": cpu / trips * 1e6, "wire_per_trip": wire / trips,
            "packets_per_trip": packets / trips, "magics_per_trip": magics / trips}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=sorted(TRANSPORTS), default="zenoh")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="write BENCHMARKS.md's section")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("bench_tls: the capture needs root (an AF_PACKET socket)")
    figures: dict[tuple[int, str, str], list[float]] = {}
    load = os.getloadavg()
    section, what, modes = TRANSPORTS[args.transport]
    for rep in range(args.reps):
        order = modes if rep % 2 == 0 else tuple(reversed(modes))
        for payload in PAYLOADS:
            for mode in order:
                for key, value in point(args.transport, mode, payload, args.seconds).items():
                    figures.setdefault((payload, mode, key), []).append(value)
        print(f"rep {rep + 1}/{args.reps} done", file=sys.stderr)
    load_end = os.getloadavg()
    lines = [f"Measured {stamp()} at {revision()} (`python3 benchmarks/bench_tls.py --transport "
             f"{args.transport} --reps {args.reps} --seconds {args.seconds}`), {what}, round "
             "trip @ 100 Hz, "
             f"medians of {args.reps} interleaved repetitions (min-max); load average "
             f"{load[0]:.2f} at the start, {load_end[0]:.2f} at the end (2 CPUs, shared):", "",
             "| payload | --secure | p50 µs | p99 µs | p50 ratio to plain | open ms | "
             "open - plain's ms | start to first echo ms | "
             "CPU µs per round trip (both agents and any broker, whole run) | CPU ratio | wire B per round "
             "trip (capture) | extra B vs plain | packets with data per round trip (capture) | "
             "MWPF headers in the clear per round trip |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for payload in PAYLOADS:
        base = {k: med(figures[(payload, "plain", k)]) for k in ("p50_us", "cpu_us",
                                                                 "wire_per_trip", "open_ms")}
        for mode in modes:
            f = {k: figures[(payload, mode, k)] for k in ("p50_us", "p99_us", "open_ms",
                                                          "first_echo_ms", "cpu_us",
                                                          "wire_per_trip", "packets_per_trip",
                                                          "magics_per_trip")}
            lines.append(
                f"| {payload} B | {mode} | {med(f['p50_us']):,.1f} ({spread(f['p50_us'])}) | "
                f"{med(f['p99_us']):,.1f} ({spread(f['p99_us'])}) | "
                f"{med(f['p50_us']) / base['p50_us']:.2f} | {med(f['open_ms']):,.2f} "
                f"({spread(f['open_ms'])}) | {med(f['open_ms']) - base['open_ms']:+,.2f} | "
                f"{med(f['first_echo_ms']):,.1f} "
                f"({spread(f['first_echo_ms'])}) | {med(f['cpu_us']):,.1f} "
                f"({spread(f['cpu_us'])}) | {med(f['cpu_us']) / base['cpu_us']:.2f} | "
                f"{med(f['wire_per_trip']):,.1f} | "
                f"{med(f['wire_per_trip']) - base['wire_per_trip']:+,.1f} | "
                f"{med(f['packets_per_trip']):.2f} | {med(f['magics_per_trip']):.2f} |")
    checked = [(k[0], figures[(k[0], "plain", "open_ms")][i], v)
               for k, values in figures.items() if k[2] == "wire_open_ms"
               for i, v in enumerate(values)]
    if checked:
        lines += ["", "The plain open against the capture (the ping's SYN to the broker's "
                  "CONNACK), point by point: " + "; ".join(
                      f"{p} B {mine:.2f} ms vs {wire:.2f} ms"
                      for p, mine, wire in checked) + "."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(section, text)


if __name__ == "__main__":
    main()
