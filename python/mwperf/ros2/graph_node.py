"""A graph node in rclpy (``client: rclpy`` in a graph file, docs/graphs.md): the node the
agent's ``mwperf-agent node`` would be, run by a real rclpy node inside rclpy's real executors.
It reads the same node spec (graph/plan.py ``node_specs``), and like the agent's node it

- subscribes to each subscription's topic and, in the callback, takes the receive instant
  first (CLOCK_MONOTONIC, as the agent's node does when its callback starts), then spins its
  ``busy_loop`` and, as a chain stage, publishes downstream a message carrying the received
  message's origin due time and this node's index (wire.rs: ``peer_rx_ns``);
- publishes each timer's topic on the absolute schedule the agent keeps (the due time of
  message k is go + phase + k x period; a timer that fires late sends every message due, each
  stamped with its due time, so a late callback shows as latency, not as a gap);
- prints ``READY node <name>`` once every publisher matched all the topic's subscribers, waits
  for the go file, runs the warm-up, the duration and the linger, and on SIGTERM/SIGINT stops
  with what it has (status partial).

It measures nothing itself: it logs every message its callbacks took (``--log``, the record
format of crates/mwperf-agent/src/node/collect.rs) and writes what it sent (``--sent``); the
control plane runs ``mwperf-agent node-collect`` on them, so its edges are summarised by the
agent's own collectors. Executors: ``--executor single`` (SingleThreadedExecutor), ``multi``
(MultiThreadedExecutor, a thread per callback), ``events`` (rclpy.experimental's
EventsExecutor); ``--groups``: per subscription ``exclusive`` (a MutuallyExclusiveCallbackGroup
of its own) or ``reentrant`` (a ReentrantCallbackGroup: under ``multi`` its callbacks may
overlap); each timer has an exclusive group of its own.

Run by the ROS 2 distribution's Python in its environment (``Distribution.python``,
``child_env``), never by mwperf's: it imports rclpy and std_msgs, which only that Python has.
"""

import argparse
import array
import json
import os
import re
import resource
import signal
import struct
import threading
import time
from typing import Any

import wire
from rclpy_parts import EXECUTORS

GROUPS = ("exclusive", "reentrant")
RECORD = struct.Struct("<IQQI")
"""node/collect.rs: the subscription's index, receive ns, its stage's send ns (0: none), length"""
SPIN_MARGIN_NS = 2_000_000
"""a timer callback this much before its due time spins until it (rcl's timers run on the ROS
clock, the schedule on CLOCK_MONOTONIC); earlier ones are ignored (the next fire sends)"""
stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True


def spin_until(t_ns: int) -> None:
    while time.monotonic_ns() < t_ns:
        pass


def qos_profile(base: dict[str, str], override: dict[str, str]):  # type: ignore[no-untyped-def]
    """The spec's QoS override on the run's (node/spec.rs ``QosOverride::apply``)."""
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    q = {**base, **override}
    history, depth = q["history"], int(base["depth"])
    if history.startswith("keep-last:"):
        history, depth = "keep-last", int(history[len("keep-last:"):])
    elif history == "keep-last" and "history" in override:
        depth = 10
    return QoSProfile(
        history=HistoryPolicy.KEEP_ALL if history == "keep-all" else HistoryPolicy.KEEP_LAST,
        depth=max(depth, 1),
        reliability=ReliabilityPolicy.RELIABLE if q["reliability"] == "reliable"
        else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if q["durability"] == "transient-local"
        else DurabilityPolicy.VOLATILE)


def ros_topic(address: str) -> tuple[int, str]:
    """``<domain>/<base>`` (the ros2 transport's address) as (domain, ROS 2 topic): the name
    the agent's endpoints use (dds_address.rs ``ros_topic``: both sides on ``ping``)."""
    domain, _, base = address.rpartition("/")
    return int(domain or 0), f"/mwperf/{base.replace('-', '_')}/ping"


def sent_entry(topic: str, id_: int) -> dict[str, Any]:
    return {"topic": topic, "id": id_, "sent": 0, "warmup_sent": 0, "send_errors": 0,
            "max_send_lag_ns": 0}


class Outlet:
    """One publisher (or a stage's outlet): its rclpy publishers and what it sent."""

    def __init__(self, node, spec: dict, cls: type, base: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
        self.spec = spec
        self.pubs = [node.create_publisher(cls, ros_topic(a)[1],
                                           qos_profile(base, spec.get("qos") or {}))
                     for a in spec["addresses"]]
        self.sent = sent_entry(spec["topic"], spec["id"])
        self.patterns: dict[int, wire.Pattern] = {}
        self.cls = cls
        self.lock = threading.Lock()

    def matched(self) -> bool:
        return all(p.get_subscription_count() >= self.spec.get("subscribers", 0)
                   for p in self.pubs)

    def send(self, h: wire.Header) -> int:
        """Fill, stamp and publish ``h``'s message on every publisher; its send instant."""
        pattern = self.patterns.get(h.payload_len)
        if pattern is None:
            pattern = self.patterns[h.payload_len] = wire.Pattern(h.payload_len)
        payload = pattern.payload(h.seq)  # the payload before the stamp, as publisher.rs
        msg = self.cls()
        h.sent_ns = time.monotonic_ns()
        msg.data = array.array("B", wire.encode(h) + payload)
        for pub in self.pubs:
            try:
                pub.publish(msg)
            except Exception as exc:  # noqa: BLE001 - counted and named, as the agent's
                self.sent["send_errors"] += 1
                self.sent.setdefault("first_error", str(exc))
        self.sent["warmup_sent" if h.flags & wire.FLAG_WARMUP else "sent"] += 1
        return h.sent_ns


class GraphNode:
    def __init__(self, args: argparse.Namespace) -> None:
        self.started_ns = time.monotonic_ns()
        self.args = args
        self.spec = json.loads(open(args.node_spec).read())
        self.records: list[bytes] = []
        self.stages: list[Outlet | None] = []
        self.timers: list[Outlet] = []
        self.go_ns: int | None = None

    # --- the node --------------------------------------------------------------------------
    def build(self) -> None:
        import rclpy
        from rclpy.callback_groups import MutuallyExclusiveCallbackGroup, ReentrantCallbackGroup
        from std_msgs.msg import UInt8MultiArray
        args, spec = self.args, self.spec
        base = {"reliability": args.reliability, "durability": args.durability,
                "history": args.history, "depth": str(args.depth)}
        addresses = [s["address"] for s in spec["subscriptions"]] + \
            [a for p in spec["publishers"] for a in p["addresses"]]
        domain = ros_topic(addresses[0])[0] if addresses else 0
        rclpy.init(domain_id=domain,
                   signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
        # a ROS 2 node name: letters, digits and '_' (a graph's names may have '/', '-', '.')
        self.node = rclpy.create_node("mwperf_" + re.sub(r"[^A-Za-z0-9_]", "_", spec["name"]))
        groups = args.groups.split(",") if args.groups else []
        for index, sub in enumerate(spec["subscriptions"]):
            group = ReentrantCallbackGroup() if index < len(groups) and \
                groups[index] == "reentrant" else MutuallyExclusiveCallbackGroup()
            stage = Outlet(self.node, sub["publish"], UInt8MultiArray, base) \
                if sub.get("publish") else None
            self.stages.append(stage)
            self.node.create_subscription(
                UInt8MultiArray, ros_topic(sub["address"])[1],
                lambda msg, i=index, s=sub, o=stage: self.received(msg, i, s, o),
                qos_profile(base, sub.get("qos") or {}), callback_group=group)
        self.timers = [Outlet(self.node, p, UInt8MultiArray, base) for p in spec["publishers"]]
        self.groups = [MutuallyExclusiveCallbackGroup() for _ in self.timers]

    def wait_matched(self) -> None:
        deadline = self.started_ns + self.args.discovery_timeout_ns
        for outlet in self.timers + [s for s in self.stages if s is not None]:
            while not outlet.matched():
                if time.monotonic_ns() > deadline or stop:
                    counts = [p.get_subscription_count() for p in outlet.pubs]
                    raise SystemExit(f"mwperf rclpy node {self.spec['name']}: discovery: "
                                     f"'{outlet.spec['topic']}' matched {min(counts)} of its "
                                     f"{outlet.spec['subscribers']} subscribers "
                                     "(--discovery-timeout)")
                time.sleep(0.02)

    def wait_go(self) -> int | None:
        while not stop:
            try:
                text = open(self.args.go_file).read()
            except OSError:
                text = ""
            if text.endswith("\n"):
                return int(text.strip())
            time.sleep(0.02)
        return None

    # --- callbacks -------------------------------------------------------------------------
    def received(self, msg, index: int, sub: dict, stage: Outlet | None) -> None:  # type: ignore[no-untyped-def]
        recv_ns = time.monotonic_ns()  # the callback's start, as the agent's node takes it
        data = msg.data.tobytes()
        stage_ns = 0
        h = wire.decode(data)
        if sub["busy_loop_ns"]:
            spin_until(time.monotonic_ns() + sub["busy_loop_ns"])
        if stage is not None and h is not None and h.run_id == self.args.run_id \
                and h.topic == sub["id"] and not h.flags & (wire.FLAG_ECHO | wire.FLAG_PROBE
                                                           | wire.FLAG_FIN) \
                and time.monotonic_ns() < self.stage_end_ns:
            warm = h.flags & wire.FLAG_WARMUP
            with stage.lock:
                seq = stage.sent["warmup_sent" if warm else "sent"]
                payload = stage.spec["payload_bytes"]
                sent_ns = stage.send(wire.Header(
                    warm, self.args.run_id, stage.spec["id"], seq, h.intended_ns, 0,
                    self.spec["index"], h.payload_len if payload is None else payload))
            stage_ns = 0 if warm else sent_ns
        self.records.append(RECORD.pack(index, recv_ns, stage_ns, len(data)) + data)

    def timer_fired(self, outlet: Outlet, first_due: int) -> None:
        period = outlet.spec["period_ns"]
        sizes = outlet.spec.get("payload_sizes") or [outlet.spec["payload_bytes"]]
        while True:
            k = outlet.sent["sent"] + outlet.sent["warmup_sent"]
            due = first_due + k * period
            now = time.monotonic_ns()
            if due >= self.measure_end_ns or stop:
                return
            if due > now + SPIN_MARGIN_NS:
                return  # early: the next fire sends it
            spin_until(due)
            warm = due < self.warmup_end_ns
            seq = outlet.sent["warmup_sent" if warm else "sent"]
            sent_ns = outlet.send(wire.Header(
                wire.FLAG_WARMUP if warm else 0, self.args.run_id, outlet.spec["id"], seq, due,
                0, self.spec["index"], sizes[k % len(sizes)]))
            outlet.sent["max_send_lag_ns"] = max(outlet.sent["max_send_lag_ns"], sent_ns - due)

    def start_timer(self, outlet: Outlet, group, first_due: int) -> None:  # type: ignore[no-untyped-def]
        """An rcl timer whose fires land on the schedule: a one-off starter fires at the first
        due time and creates there the periodic timer (its fires then come a whole period
        apart from it); the starter's own lateness is every later message's, measured as
        latency, not hidden."""
        period_s = outlet.spec["period_ns"] / 1e9
        holder: list = []

        def started() -> None:
            if holder:
                holder[0].cancel()
                holder.clear()
                self.node.create_timer(period_s, lambda: self.timer_fired(outlet, first_due),
                                       callback_group=group)
                self.timer_fired(outlet, first_due)

        wait_s = max(1e-6, (first_due - time.monotonic_ns()) / 1e9)
        holder.append(self.node.create_timer(wait_s, started, callback_group=group))

    # --- the run ---------------------------------------------------------------------------
    def executor(self):  # type: ignore[no-untyped-def]
        from rclpy.executors import MultiThreadedExecutor, SingleThreadedExecutor
        kind = self.args.executor
        if kind == "multi":
            return MultiThreadedExecutor(
                num_threads=max(2, len(self.stages) + len(self.timers)))
        if kind == "events":
            from rclpy.experimental import EventsExecutor
            return EventsExecutor()
        return SingleThreadedExecutor()

    def run(self) -> str:
        """Measure; the status."""
        self.build()
        self.runner = self.executor()
        self.runner.add_node(self.node)
        self.wait_matched()
        self.discovery_ns = time.monotonic_ns() - self.started_ns
        print(f"READY node {self.spec['name']}", flush=True)
        go = self.wait_go()
        if go is None:
            return "stopped by signal before the graph started"
        self.go_ns = go
        spec = self.spec
        self.warmup_end_ns = go + spec["warmup_ns"]
        self.measure_end_ns = self.warmup_end_ns + spec["duration_ns"]
        self.stage_end_ns = self.measure_end_ns + spec["linger_ns"] // 2
        end_ns = self.measure_end_ns + spec["linger_ns"]
        for outlet, group in zip(self.timers, self.groups):
            self.start_timer(outlet, group, go + outlet.spec["phase_ns"] % outlet.spec["period_ns"])
        while not stop and time.monotonic_ns() < end_ns:
            self.runner.spin_once(timeout_sec=min(0.05, max(0.0, (end_ns - time.monotonic_ns())
                                                            / 1e9)))
        return "stopped by signal" if stop else ""

    def write(self, why: str) -> None:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        hwm = 0
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
        report = {
            "role": "node", "name": self.spec["name"], "index": self.spec["index"],
            "status": "partial" if why else "complete",
            **({"status_reason": why} if why else {}),
            "discovery_ns": getattr(self, "discovery_ns", 0), "go_ns": self.go_ns,
            "sessions": 1,
            "publishers": [t.sent for t in self.timers],
            "stages": [s.sent if s is not None else None for s in self.stages],
            "process": {"pid": os.getpid(),
                        "wall_s": (time.monotonic_ns() - self.started_ns) / 1e9,
                        "cpu_user_s": usage.ru_utime, "cpu_sys_s": usage.ru_stime,
                        "max_rss_kib": hwm, "rss_source": "VmHWM",
                        "voluntary_ctx_switches": usage.ru_nvcsw,
                        "involuntary_ctx_switches": usage.ru_nivcsw}}
        with open(self.args.log, "wb") as log:
            log.write(b"".join(self.records))
        tmp = self.args.sent + ".tmp"
        with open(tmp, "w") as out:
            json.dump(report, out)
        os.replace(tmp, self.args.sent)  # the sent file last: its presence means both are whole

    def close(self) -> None:
        import rclpy
        runner = getattr(self, "runner", None)
        if runner is not None:
            runner.shutdown()
        node = getattr(self, "node", None)
        if node is not None:
            node.destroy_node()
        if rclpy.ok():
            rclpy.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--node-spec", required=True)
    ap.add_argument("--go-file", required=True)
    ap.add_argument("--run-id", type=int, required=True)
    ap.add_argument("--sent", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--executor", choices=EXECUTORS, default="single")
    ap.add_argument("--groups", default="", help="per subscription: exclusive or reentrant")
    ap.add_argument("--reliability", choices=("reliable", "best-effort"), default="reliable")
    ap.add_argument("--durability", choices=("volatile", "transient-local"),
                    default="volatile")
    ap.add_argument("--history", default="keep-last")
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--discovery-timeout-ns", type=int, default=10_000_000_000)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    node = GraphNode(args)
    try:
        why = node.run()
        if node.go_ns is not None:
            node.write(why)
    finally:
        node.close()


if __name__ == "__main__":
    main()
