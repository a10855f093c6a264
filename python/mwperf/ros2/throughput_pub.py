"""A throughput stream's publisher in rclpy (``mwperf run --transport ros2 --mode throughput
--opt client=rclpy``): what the agent's ``pub --throughput`` does (crates/mwperf-agent/src/
roles/publish.rs), done by a real rclpy node, so the stream measures what a Python node can
publish through rclpy, rcl and the RMW. The subscriber stays the agent's (rcl through its shim),
which measures the delivered rate and checks every message against this node's own count.

Like the agent's pub it
- waits until its publisher matched the subscribers (``--subscribers``, ``--discovery-timeout-
  ns``), starts 1 ms later, sends the warm-up's messages flagged for ``--warmup-ns``, then the
  measured ones for ``--duration-ns`` from the first of them (or ``--count``), back to back, each a
  ``std_msgs/msg/UInt8MultiArray`` whose data is mwperf's 56-byte header (wire.py: this run's
  id, topic 0, the sequence number, the send instant as intended and sent time) and the
  payload's pattern (every message in full: a throughput stream's sampling fills every one up
  to 4 KiB, wire.rs ``check_every``, and this node does the same above);
- counts a publish rclpy refuses (an ``RCLError``: rmw_fastrtps' write waiting
  ``max_blocking_time`` for room in a full history) as refused and tries it again, until one is
  taken or none was for ``--peer-timeout-ns`` (then the stream ends partial, quoting it);
- waits (at most min(peer timeout, 1 s)) for the subscribers' acknowledgements
  (``Publisher.wait_for_all_acked``), sends the end-of-stream marker three times 1 ms apart
  (``FLAG_FIN``, seq = measured messages sent, intended = warm-up messages sent, peer_rx = 0:
  no period) and waits for their acknowledgements as well and writes an agent report of role ``pub`` (schema/result.v2.json
  ``agent_report``) to ``--json``: its own count (``sent``), the send calls and its CPU over
  the steady window (``throughput``), its discovery time and process;
- on SIGTERM/SIGINT stops with what it sent, partial.

Run by the ROS 2 distribution's Python in its environment (``Distribution.python``,
``child_env``), never by mwperf's: it imports rclpy and std_msgs, which only that Python has.
Standard library besides.
"""

import argparse
import array
import json
import os
import platform
import resource
import signal
import sys
import time
from datetime import datetime, timezone
from typing import Any

import wire

stop = False
FIN_COPIES = 3


def on_signal(*_: object) -> None:
    global stop
    stop = True


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def rfc3339(moment: datetime) -> str:
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def read(path: str, default: str = "unavailable") -> str:
    try:
        with open(path) as f:
            return f.read().strip() or default
    except OSError:
        return default


def host() -> dict[str, Any]:
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), model)
    except OSError:
        pass
    return {"hostname": platform.node(), "kernel": platform.release(), "cpu_model": model,
            "cores": os.cpu_count() or 1,
            "governor": read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
            "clocksource": read("/sys/devices/system/clocksource/clocksource0/"
                                "current_clocksource")}


def process(started_ns: int) -> dict[str, Any]:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    hwm = 0
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    return {"pid": os.getpid(), "wall_s": (time.monotonic_ns() - started_ns) / 1e9,
            "cpu_user_s": usage.ru_utime, "cpu_sys_s": usage.ru_stime, "max_rss_kib": hwm,
            "rss_source": "VmHWM", "voluntary_ctx_switches": usage.ru_nvcsw,
            "involuntary_ctx_switches": usage.ru_nivcsw}


class Calls:
    """The measured send calls, as the agent's SendMeter (throughput.rs): time in them, the
    refused ones, the accepted ones per second and their durations' quantiles."""

    def __init__(self) -> None:
        self.durations: list[int] = []
        self.in_send_ns = 0
        self.refused = 0
        self.series: list[int] = []
        self.origin_ns: int | None = None
        self.first_ns: int | None = None
        self.cpu0 = 0.0

    def call(self, start_ns: int, end_ns: int, accepted: bool) -> None:
        d = end_ns - start_ns
        self.in_send_ns += d
        if not accepted:
            self.refused += 1
            return
        self.durations.append(d)
        if self.first_ns is None:
            self.first_ns, self.cpu0 = start_ns, cpu_s()
        if self.origin_ns is None:
            self.origin_ns = start_ns
        second = (start_ns - self.origin_ns) // 1_000_000_000
        while len(self.series) <= second:
            self.series.append(0)
        self.series[second] += 1

    def quantile(self, ordered: list[int], q: float) -> int | None:
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else None

    def side(self, end_ns: int) -> dict[str, Any] | None:
        if self.first_ns is None:
            return None
        ordered = sorted(self.durations)
        p10 = self.quantile(ordered, 0.10)
        unblocked = (p10 or 0) * len(ordered)
        return {"messages": len(ordered), "steady_wall_s": max(0, end_ns - self.first_ns) / 1e9,
                "steady_cpu_s": max(0.0, cpu_s() - self.cpu0),
                "sending": {"in_send_s": self.in_send_ns / 1e9,
                            "blocked_s": max(0, self.in_send_ns - unblocked) / 1e9,
                            "refused": self.refused, "send_p10_ns": p10,
                            "send_p50_ns": self.quantile(ordered, 0.5),
                            "send_p99_ns": self.quantile(ordered, 0.99),
                            "send_max_ns": ordered[-1] if ordered else None,
                            "series": self.series}}


class Publisher:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.started_ns = time.monotonic_ns()
        self.started_at = datetime.now(timezone.utc)
        self.pattern = wire.Pattern(args.payload)
        self.calls = Calls()
        self.sent = self.warmup_sent = 0
        self.matched_ns: int | None = None
        self.last_send_ns = 0
        self.node: Any = None
        self.pub: Any = None

    def open(self) -> None:
        import rclpy
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import UInt8MultiArray
        args = self.args
        domain, _, base = args.connect.rpartition("/")
        rclpy.init(domain_id=int(domain or 0),
                   signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
        self.node = rclpy.create_node(f"mwperf_rclpy_pub_{os.getpid()}")
        history = args.history
        depth = args.depth
        if history.startswith("keep-last:"):
            history, depth = "keep-last", int(history[len("keep-last:"):])
        qos = QoSProfile(
            history=HistoryPolicy.KEEP_ALL if history == "keep-all" else HistoryPolicy.KEEP_LAST,
            depth=max(depth, 1),
            reliability=ReliabilityPolicy.RELIABLE if args.reliability == "reliable"
            else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if args.durability == "transient-local"
            else DurabilityPolicy.VOLATILE)
        self.cls = UInt8MultiArray
        # the ros2 transport's topic (dds_address.rs ros_topic: '-' in the base becomes '_')
        self.topic = f"/mwperf/{base.replace('-', '_')}/ping"
        self.pub = self.node.create_publisher(UInt8MultiArray, self.topic, qos)

    def wait_matched(self) -> str | None:
        deadline = self.started_ns + self.args.discovery_timeout_ns
        while self.pub.get_subscription_count() < self.args.subscribers:
            if stop:
                return "interrupted by signal"
            if time.monotonic_ns() > deadline:
                return (f"discovery: {self.topic} matched {self.pub.get_subscription_count()} "
                        f"of {self.args.subscribers} subscribers (--discovery-timeout)")
            time.sleep(0.005)
        self.matched_ns = time.monotonic_ns() - self.started_ns
        return None

    def message(self, flags: int, seq: int, payload: bytes) -> Any:
        msg = self.cls()
        now = time.monotonic_ns()
        header = wire.encode(wire.Header(flags, self.args.run_id, 0, seq, now, now, 0,
                                         len(payload)))
        msg.data = array.array("B", header + payload)
        return msg

    def send(self, flags: int, seq: int, measured: bool) -> str | None:
        """One message, tried again while rclpy refuses it; None once taken, else why not."""
        from rclpy._rclpy_pybind11 import RCLError
        payload = self.pattern.payload(seq)
        last_taken = time.monotonic_ns()
        while True:
            msg = self.message(flags, seq, payload)
            start = time.monotonic_ns()
            try:
                self.pub.publish(msg)
                refusal = None
            except RCLError as exc:
                refusal = str(exc).strip()
            end = time.monotonic_ns()
            if measured:
                self.calls.call(start, end, refusal is None)
            if refusal is None:
                self.last_send_ns = end
                return None
            if stop:
                return "interrupted by signal"
            if end >= last_taken + self.args.peer_timeout_ns:
                return ("the subscriber stopped reading: rclpy took no message for "
                        f"--peer-timeout {self.args.peer_timeout_ns / 1e9:g} s (last refusal: "
                        f"{refusal})")

    def stream(self) -> str | None:
        """Warm-up then the measured messages; None when complete, else why it stopped."""
        args = self.args
        start = time.monotonic_ns() + 1_000_000
        while time.monotonic_ns() < start:
            pass
        measure_start = start + args.warmup_ns
        while not stop and time.monotonic_ns() < measure_start:
            why = self.send(wire.FLAG_WARMUP, self.warmup_sent, False)
            if why:
                return why
            self.warmup_sent += 1
        # the measured window starts with its first message, as the agent's pacer starts it
        # (a warm-up whose last publish waited long, a full writer history's, does not eat it)
        end = None
        while not stop:
            if args.count is not None:
                if self.sent >= args.count:
                    break
            elif end is not None and time.monotonic_ns() >= end:
                break
            if end is None:
                end = time.monotonic_ns() + args.duration_ns
            why = self.send(0, self.sent, True)
            if why:
                return why
            self.sent += 1
        return "interrupted by signal" if stop else None

    def finish(self, stopped: bool) -> bool:
        """The messages still in flight acknowledged (a planned end waits up to the peer
        timeout, a stopped stream 1 s at most: roles/publish.rs finish_limit), then the
        end-of-stream markers; False when the first wait ran out."""
        delivered = self.wait_acked(self.args.peer_timeout_ns if not stopped else None)
        fin = wire.encode(wire.Header(wire.FLAG_FIN, self.args.run_id, 0, self.sent,
                                      self.warmup_sent, 0, 0, 0))
        for _ in range(FIN_COPIES):
            msg = self.cls()
            msg.data = array.array("B", fin)
            try:
                self.pub.publish(msg)
            except Exception:  # noqa: BLE001 - the sub then ends at its peer timeout
                pass
            time.sleep(0.001)
        # the markers' acknowledgements too: a writer destroyed with them unacknowledged drops
        # them (as the agent's pub waits, roles/publish.rs)
        self.wait_acked(None)
        return delivered

    def wait_acked(self, limit_ns: int | None) -> bool:
        """Wait at most ``limit_ns`` (None: min(peer timeout, 1 s)) for the subscribers'
        acknowledgements; True when every message was acknowledged."""
        from rclpy.duration import Duration
        if limit_ns is None:
            limit_ns = min(self.args.peer_timeout_ns, 1_000_000_000)
        try:
            return bool(self.pub.wait_for_all_acked(Duration(nanoseconds=limit_ns)))
        except Exception:  # noqa: BLE001 - best effort, as the agent's finish
            return False

    def report(self, status: str, reason: str | None) -> dict[str, Any]:
        args = self.args
        side = self.calls.side(self.last_send_ns or time.monotonic_ns())
        return {
            "schema_version": 2, "kind": "agent-report", "role": "pub",
            "tool": {"name": "mwperf rclpy publisher", "version": args.tool_version,
                     "git_rev": "rclpy " + sys.version.split()[0]},
            "host": host(),
            "config": {"client": "rclpy", "connect": args.connect, "payload": args.payload,
                       "duration_ns": args.duration_ns, "warmup_ns": args.warmup_ns,
                       "count": args.count, "rate": 0.0, "throughput": True,
                       "reliability": args.reliability, "history": args.history,
                       "depth": args.depth, "durability": args.durability,
                       "subscribers": args.subscribers, "run_id": args.run_id,
                       "json": args.json, "transport": "ros2",
                       "message_type": "std_msgs/msg/UInt8MultiArray"},
            "conditions": {"busy_poll": False, "prevent_cpu_idle": "off", "spin_margin_ns": 0,
                           "clock_read_overhead_ns": 0.0},
            "status": status, "status_reason": reason,
            "started_at": rfc3339(self.started_at),
            "finished_at": rfc3339(datetime.now(timezone.utc)),
            "process": process(self.started_ns),
            "measurement": None, "counters": None,
            "sent": self.sent,
            "warmup_ns": args.warmup_ns,
            "discovery": {"matched_ns": self.matched_ns or 0, "first_reply_ns": None,
                          "probes": 0},
            **({"throughput": side} if side else {}),
            "warnings": [],
        }

    def close(self) -> None:
        import rclpy
        if self.node is not None:
            self.node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--connect", required=True, help="<domain>/<base>")
    ap.add_argument("--json", required=True)
    ap.add_argument("--run-id", type=int, required=True)
    ap.add_argument("--payload", type=int, required=True)
    ap.add_argument("--duration-ns", type=int, required=True)
    ap.add_argument("--warmup-ns", type=int, default=0)
    ap.add_argument("--count", type=int)
    ap.add_argument("--subscribers", type=int, default=1)
    ap.add_argument("--reliability", choices=("reliable", "best-effort"), default="reliable")
    ap.add_argument("--durability", choices=("volatile", "transient-local"),
                    default="volatile")
    ap.add_argument("--history", default="keep-all")
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--discovery-timeout-ns", type=int, default=10_000_000_000)
    ap.add_argument("--peer-timeout-ns", type=int, default=2_000_000_000)
    ap.add_argument("--tool-version", default="unknown")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    pub = Publisher(args)
    status, reason = "complete", None
    try:
        pub.open()
        why = pub.wait_matched()
        if why is not None:
            status, reason = ("partial" if stop else "failed"), why
        else:
            why = pub.stream()
            if why is not None:
                status, reason = "partial", why
            if not pub.finish(stopped=why is not None) and why is None:
                reason = (f"left with messages its subscribers had not acknowledged after "
                          f"--peer-timeout {args.peer_timeout_ns / 1e9:g} s: the middleware "
                          f"dropped them with the writer (not delivered: undelivered where the "
                          f"subscriber never saw the end-of-stream marker of a reliable queue, "
                          f"else lost; a longer --peer-timeout waits longer)")
        report = pub.report(status, reason)
        tmp = args.json + ".tmp"
        with open(tmp, "w") as out:
            json.dump(report, out)
        os.replace(tmp, args.json)
    finally:
        pub.close()
    return {"complete": 0, "partial": 3}.get(status, 1)


if __name__ == "__main__":
    sys.exit(main())
