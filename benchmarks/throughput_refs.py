"""Each middleware's own throughput tool, run once for a message size, a duration and a
delivery: the references of benchmarks/bench_throughput.py.

Every runner returns the same dict (or raises RefError naming what went wrong, or Unsupported
for a size or delivery the tool cannot do):

    tool, delivery, size, seconds        what was measured
    msgs_per_s, bytes_per_s              DELIVERED messages and bytes per second (receiver side)
    sent_per_s                           the sender's messages per second (None where unknown)
    loss_pct                             lost / sent x 100 (None where the tool does not say)
    cpu_s: {pub, sub}                    user+system CPU of each side's process over the run
                                         measured (see below)
    cpu_window                           "window": CPU sampled from /proc at the measuring
                                         window's ends; "run": the whole process (wait4)

`size` is the bytes of one message as the tool counts them (the benchmark passes mwperf's
whole message: its 56-byte header + payload). Two ways of measuring, as each tool allows:
  - windowed (z_*_thr, the Fast DDS and iceoryx2 references, ddsperf): the subscriber prints
    running totals with timestamps; after a warm-up, this module samples both processes' CPU
    at the window's start and end and reads the totals there (refproc.window);
  - whole run (iperf3, sockperf): the tool's own summary over its run, CPU from wait4.

References built here: z_pub_thr/z_sub_thr (benchmarks/zenoh-ref) and iox2_thr
(benchmarks/iceoryx2-ref) with cargo into $CARGO_TARGET_DIR; the Fast DDS program
(benchmarks/fastdds_ref/throughput.cpp) with g++ against Debian's libfastrtps. `make refs`
builds all three.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from refproc import SENT, Child, Point, cpu_s, fastdds_shm, free_port, remove_unmapped_shm, totals, window

ROOT = Path(__file__).resolve().parents[1]
TARGET = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target") / "release"
FASTDDS_SRC = ROOT / "benchmarks" / "fastdds_ref" / "throughput.cpp"
UDP_MAX = 65507  # largest UDP datagram on IPv4
SOCKPERF_MAX = 65507  # sockperf's largest message (-m), TCP too

sys.path.insert(0, str(ROOT / "python"))
from mwperf.errors import RunError  # noqa: E402
from mwperf.transports.cyclonedds import loopback_config  # noqa: E402  (mwperf's own Cyclone config)


class RefError(RuntimeError):
    """A reference run that failed (said why)."""


class Unsupported(RefError):
    """A size or delivery the tool cannot do."""


def result(tool: str, delivery: str, size: int, seconds: float, msgs: float, nbytes: float,
           sent: float | None, loss: float | None, pub: float | None, sub: float | None,
           how: str) -> dict:
    return {"tool": tool, "delivery": delivery, "size": size, "seconds": seconds,
            "msgs_per_s": msgs, "bytes_per_s": nbytes, "sent_per_s": sent, "loss_pct": loss,
            "cpu_s": {"pub": pub, "sub": sub}, "cpu_window": how}


def loss_of(sent: float, received: float) -> float:
    return max(0.0, (sent - received) / sent * 100.0) if sent > 0 else 0.0


# ------------------------------------------------------------------ building the built ones

def built(name: str) -> Path:
    return TARGET / name


def build_zenoh() -> Path:
    cargo("benchmarks/zenoh-ref/Cargo.toml")
    return built("z_sub_thr")


def build_iceoryx2() -> Path:
    cargo("benchmarks/iceoryx2-ref/Cargo.toml")
    return built("iox2_thr")


def cargo(manifest: str) -> None:
    cmd = ["cargo", "build", "--release", "--quiet", "--manifest-path", str(ROOT / manifest)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RefError(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")


def build_fastdds() -> Path:
    """g++ the Fast DDS reference into $CARGO_TARGET_DIR/release (again only when a source is
    newer than the binary)."""
    out = built("fastdds-throughput")
    sources = [FASTDDS_SRC, FASTDDS_SRC.with_name("ref_common.hpp")]
    if out.exists() and all(s.stat().st_mtime <= out.stat().st_mtime for s in sources):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = ["g++", "-std=c++17", "-O2", "-o", str(out), str(FASTDDS_SRC), "-lfastrtps", "-lfastcdr"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RefError(f"building the Fast DDS reference failed ({' '.join(cmd)}):\n{done.stderr[-2000:]}")
    return out


# ------------------------------------------------------------------ the windowed protocol

def windowed_pair(tool: str, delivery: str, size: int, sub_cmd: list[str], pub_cmd: list[str],
                  warmup: float, seconds: float) -> dict:
    """Start the subscriber (until READY), then the publisher (until "matched", sending for
    warm-up + window + 0.5 s); after the warm-up, CPU and totals at the window's ends; the
    publisher's "sent" line and the subscriber's last totals give the loss over the whole run."""
    sub = Child(sub_cmd)
    pub: Child | None = None
    try:
        if not sub.wait_line(lambda s: s.startswith("READY"), 20):
            raise RefError(f"{tool}: the subscriber did not start: {sub.stderr()[-500:]}")
        pub = Child(pub_cmd)
        if not pub.wait_line(lambda s: s.startswith("matched"), 30):
            raise RefError(f"{tool}: the publisher found no subscriber: {pub.stderr()[-500:]}")
        time.sleep(warmup)
        a, pub_a, sub_a = time.monotonic_ns(), cpu_s(pub.p.pid), cpu_s(sub.p.pid)
        time.sleep(seconds)
        b, pub_b, sub_b = time.monotonic_ns(), cpu_s(pub.p.pid), cpu_s(sub.p.pid)
        if not pub.reap(seconds + warmup + 60):
            raise RefError(f"{tool}: the publisher did not finish")
        time.sleep(0.4)  # the subscriber's totals after the last message
    finally:
        if pub is not None:
            pub.stop()
        sub.stop()
    sent = SENT.search(pub.text())
    if pub.status != 0 or not sent:
        raise RefError(f"{tool}: the publisher failed (exit {pub.status}): {pub.stderr()[-500:]}")
    points = totals(sub.text())
    try:
        msgs, nbytes, _ = window(points, a, b, 1e9)
    except ValueError as e:
        raise RefError(f"{tool}: {e}") from None
    if None in (pub_a, pub_b, sub_a, sub_b):
        raise RefError(f"{tool}: a side ended inside the window")
    sent_msgs, sent_s = int(sent.group(1)), float(sent.group(3))
    return result(tool, delivery, size, seconds, msgs, nbytes, sent_msgs / sent_s,
                  loss_of(sent_msgs, points[-1].msgs), pub_b - pub_a, sub_b - sub_a, "window")


def zenoh(size: int, seconds: float, delivery: str, warmup: float = 1.0) -> dict:
    """z_sub_thr listens on a free TCP port (peer mode, no scouting), z_pub_thr connects and
    puts with CongestionControl Block (reliable) or Drop (best-effort), express on."""
    sub_bin, pub_bin = built("z_sub_thr"), built("z_pub_thr")
    need(sub_bin, pub_bin)
    ep = f"tcp/127.0.0.1:{free_port()}"
    common = ["-m", "peer", "--no-multicast-scouting"]
    congestion = "block" if delivery == "reliable" else "drop"
    return windowed_pair("z_pub_thr/z_sub_thr", delivery, size,
                         [str(sub_bin), *common, "-l", ep],
                         [str(pub_bin), *common, "-e", ep, "-d", f"{warmup + seconds + 0.5:.3f}",
                          "-c", congestion, str(size)], warmup, seconds)


def fastdds(size: int, seconds: float, delivery: str, warmup: float = 1.0, shm: bool = True,
            depth: int = 10) -> dict:
    """benchmarks/fastdds_ref/throughput.cpp in a random domain: reliable keep-all with
    blocking writes, or best-effort keep-last `depth`; shared memory as mwperf's default. What
    Fast DDS leaves in /dev/shm (its port segments) and nobody maps is removed afterwards."""
    binary = built("fastdds-throughput")
    need(binary)
    domain = str(random.randint(100, 200))
    common = [domain, str(int(shm)), delivery, str(depth)]
    before = fastdds_shm()
    try:
        return windowed_pair("Fast DDS reference", delivery, size, [str(binary), "sub", *common],
                             [str(binary), "pub", *common, str(size), f"{warmup + seconds + 0.5:.3f}"],
                             warmup, seconds)
    finally:
        remove_unmapped_shm(fastdds_shm() - before)


def iceoryx2(size: int, seconds: float, delivery: str, warmup: float = 1.0, depth: int = 10) -> dict:
    """iox2_thr on a service of its own: a subscriber queue of `depth`, reliable = no overflow
    and a publisher that retries until delivered, best-effort = overflow."""
    binary = built("iox2_thr")
    need(binary)
    tag = f"mwpthr{os.getpid()}x{random.randrange(1 << 20)}"
    own = [str(binary), "--prefix", f"{tag}_"]  # its files: removed after the run
    try:
        return windowed_pair("iox2_thr", delivery, size, [*own, "sub", "thr", str(depth), delivery],
                             [*own, "pub", "thr", str(size), f"{warmup + seconds + 0.5:.3f}",
                              str(depth), delivery], warmup, seconds)
    finally:
        for leftover in [*Path("/dev/shm").glob(f"{tag}_*"), *Path("/tmp/iceoryx2").glob(f"**/{tag}_*")]:
            leftover.unlink(missing_ok=True)


# ------------------------------------------------------------------ ddsperf

DDSPERF_SUB = re.compile(r"^\[\d+\] ([\d.]+)\s+size (\d+) total (\d+) lost (\d+) delta", re.M)


def ddsperf_totals(text: str) -> list[Point]:
    """ddsperf sub's data lines: (time, total received, bytes = total x size, total lost)."""
    return [Point(float(t), int(n), int(n) * int(s), int(lost)) for t, s, n, lost in DDSPERF_SUB.findall(text)]


def ddsperf(size: int, seconds: float, delivery: str, warmup: float = 1.0, depth: int = 10) -> dict:
    """`ddsperf sub` and `ddsperf pub size SIZE` (as fast as possible) in a random domain with
    mwperf's Cyclone loopback configuration; reliable keep-all or best-effort (-u) keep-last
    `depth`. Its sub prints totals once a second (realtime, -R 0): the window is cut from those
    (interpolated between seconds); its "lost" (sequence gaps) is the loss, and delivered + lost
    what was sent."""
    if size < 12:
        raise Unsupported("ddsperf: a KS sample is at least 12 bytes")
    need_tool("ddsperf")
    try:
        env = dict(os.environ, CYCLONEDDS_URI=loopback_config())
    except RunError as e:  # the configuration comes from the agent
        raise Missing(f"ddsperf: mwperf's Cyclone configuration: {e}") from None
    domain = str(random.randint(100, 200))
    qos = ["-k", "all"] if delivery == "reliable" else ["-u", "-k", str(depth)]
    # sub waitset: data taken in an application thread woken by a waitset, as mwperf (and a
    # ROS 2 executor over rmw_cyclonedds) takes it; ddsperf's default listener takes it in
    # Cyclone's receive thread itself
    sub = Child(["ddsperf", "-R", "0", "-i", domain, *qos, "sub", "waitset"], env=env)
    pub: Child | None = None
    try:
        pub = Child(["ddsperf", "-i", domain, "-D", f"{warmup + seconds + 5:.0f}", *qos,
                     "-Q", "minmatch:1", "-Q", "initwait:20", "pub", "size", str(size)], env=env)
        if not sub.wait_line(lambda s: DDSPERF_SUB.match(s) is not None and " total 0 " not in s, 30):
            raise RefError(f"ddsperf: no data arrived: {sub.stderr()[-500:]} {pub.stderr()[-500:]}")
        time.sleep(warmup)
        a, pub_a, sub_a = time.time(), cpu_s(pub.p.pid), cpu_s(sub.p.pid)
        time.sleep(seconds)
        b, pub_b, sub_b = time.time(), cpu_s(pub.p.pid), cpu_s(sub.p.pid)
        end = time.monotonic() + 5
        while time.monotonic() < end and not any(p.t > b for p in ddsperf_totals(sub.text())):
            time.sleep(0.1)
    finally:
        if pub is not None:
            pub.stop()
        sub.stop()
    try:
        msgs, nbytes, lost = window(ddsperf_totals(sub.text()), a, b, 1.0)
    except ValueError as e:
        raise RefError(f"ddsperf: {e}") from None
    if None in (pub_a, pub_b, sub_a, sub_b):
        raise RefError("ddsperf: a side ended inside the window")
    return result("ddsperf", delivery, size, seconds, msgs, nbytes, msgs + lost, loss_of(msgs + lost, msgs),
                  pub_b - pub_a, sub_b - sub_a, "window")


# ------------------------------------------------------------------ sockperf

SOCKPERF_SENT = re.compile(r"Total of (\d+) messages sent in ([\d.]+) sec")
SOCKPERF_RECEIVED = re.compile(r"Total (\d+) messages received")


def parse_sockperf(client: str, server: str) -> tuple[int, float, int]:
    """(messages sent, seconds, messages received) from `sockperf tp` and `sockperf sr`."""
    s, r = SOCKPERF_SENT.search(client), SOCKPERF_RECEIVED.search(server)
    if not s or not r:
        raise RefError(f"sockperf: no totals in its output: {client[-300:]!r} {server[-300:]!r}")
    return int(s.group(1)), float(s.group(2)), int(r.group(1))


def sockperf(size: int, seconds: float, proto: str) -> dict:
    """`sockperf sr` + `sockperf tp -m SIZE -t SECONDS` (as fast as it can send) on 127.0.0.1,
    UDP or TCP. The client says what it sent and in how long, the server what it received
    (a few warm-up messages included) when stopped; CPU of both over their whole runs."""
    if size > SOCKPERF_MAX:
        raise Unsupported(f"sockperf: messages of at most {SOCKPERF_MAX} bytes")
    need_tool("sockperf")
    tcp = ["--tcp"] if proto == "tcp" else []
    port = free_port()
    common = ["-i", "127.0.0.1", "-p", str(port), *tcp]
    srv = Child(["sockperf", "sr", *common])
    try:
        if not srv.wait_line(lambda s: "listen on" in s or "IP =" in s, 10):
            raise RefError(f"sockperf sr did not start: {srv.stderr()[-300:]}")
        time.sleep(0.2)
        cli = Child(["sockperf", "tp", *common, "-m", str(size), "-t", str(max(1, round(seconds)))])
        if not cli.reap(seconds + 60):
            cli.stop()
            raise RefError("sockperf tp did not finish")
        time.sleep(0.3)  # the server reads what is still queued
    finally:
        srv.stop(sig=2)  # SIGINT: it prints its totals
    sent, secs, received = parse_sockperf(cli.text() + cli.stderr(), srv.text() + srv.stderr())
    received = min(received, sent)  # its count includes the warm-up messages
    delivery = "best-effort" if proto == "udp" else "reliable"
    return result(f"sockperf {proto.upper()}", delivery, size, secs, received / secs, received * size / secs,
                  sent / secs, loss_of(sent, received) if proto == "udp" else None, cli.cpu_s, srv.cpu_s, "run")


# ------------------------------------------------------------------ iperf3

def parse_iperf3(doc: dict, size: int, proto: str) -> tuple[float, float, float, float | None, float]:
    """(delivered msgs/s, delivered bytes/s, sent msgs/s, loss %, seconds) from iperf3 -J's end
    section. UDP: datagrams sent and lost (the server's count, exchanged at the end); TCP: the
    bytes the receiver got, per `size`-byte write."""
    end = doc.get("end") or {}
    if "error" in doc:
        raise RefError(f"iperf3: {doc['error']}")
    if proto == "udp":
        s = end.get("sum_received") if "packets" in (end.get("sum_received") or {}) else end.get("sum")
        if not s or "packets" not in s:
            raise RefError("iperf3: no UDP summary in its JSON")
        packets, lost, secs = int(s["packets"]), int(s["lost_packets"]), float(s["seconds"])
        got = packets - lost
        return got / secs, got * size / secs, packets / secs, loss_of(packets, got), secs
    r, sent = end.get("sum_received"), end.get("sum_sent")
    if not r or not sent:
        raise RefError("iperf3: no TCP summary in its JSON")
    secs = float(r["seconds"])
    return (r["bytes"] / size / secs, r["bytes"] / secs, sent["bytes"] / size / float(sent["seconds"]),
            None, secs)


def iperf3(size: int, seconds: float, proto: str) -> dict:
    """`iperf3 -s -1` + `iperf3 -c -t SECONDS -J`: UDP with -l SIZE -b 0 (no rate limit), or TCP
    with -l SIZE (its writes; the stream does not keep message bounds). CPU of both processes
    over their whole runs (wait4)."""
    if proto == "udp" and size > UDP_MAX:
        raise Unsupported(f"iperf3 UDP: datagrams of at most {UDP_MAX} bytes")
    need_tool("iperf3")
    port = str(free_port())
    srv = Child(["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port])
    try:
        time.sleep(0.3)
        udp = ["-u", "-b", "0"] if proto == "udp" else []
        cli = Child(["iperf3", "-c", "127.0.0.1", "-p", port, "-t", str(max(1, round(seconds))), "-l", str(size),
                     *udp, "-J"])
        if not cli.reap(seconds + 60):
            cli.stop()
            raise RefError("iperf3 client did not finish")
        srv.reap(10)
    finally:
        srv.stop()
    try:
        doc = json.loads(cli.text())
    except ValueError:
        raise RefError(f"iperf3: no JSON: {cli.text()[-300:]} {cli.stderr()[-300:]}") from None
    msgs, nbytes, sent, loss, secs = parse_iperf3(doc, size, proto)
    delivery = "best-effort" if proto == "udp" else "reliable"
    return result(f"iperf3 {proto.upper()}", delivery, size, secs, msgs, nbytes, sent, loss, cli.cpu_s,
                  srv.cpu_s, "run")


# ------------------------------------------------------------------ presence

def need(*binaries: Path) -> None:
    for b in binaries:
        if not b.exists():
            raise Missing(f"{b} missing: build the references first (make refs)")


def need_tool(name: str) -> None:
    if shutil.which(name) is None:
        raise Missing(f"{name} is not installed")


class Missing(RefError):
    """A reference that is not there (not installed, not built)."""
