"""A single stream's sub as a real rclpy node (``mwperf run --mode oneway --opt client=rclpy``,
python/mwperf/parts/rclpy_sub.py): it plays the sub agent's part towards the runner and the pub
and leaves the measuring to the agent.

- subscribes to ``/mwperf/<base>/ping`` of ``--address`` (``<domain>/<base>``; base ``auto``:
  a fresh one, as the agent's listening side picks) in the QoS given, inside rclpy's real
  executor (``--executor single | multi | events``), and prints ``READY ros2 <domain>/<base>``
  as the agent's sub does (the pub then waits until discovery matched it);
- in the callback takes the receive instant first (CLOCK_MONOTONIC, as the agent's sub does
  when its callback starts), spins ``--busy-loop-ns`` (the callback's work) and appends the
  message as it arrived to ``--log`` (node/collect.rs's record format, index 0);
- ends ``--linger-ns`` after this run's end-of-stream marker (the agent's --linger), or on
  SIGTERM/SIGINT; then closes its node and becomes the agent (exec, the same process: the
  runner's process, its exit code and report) with the agent's own command line after ``--``
  plus ``--arrivals LOG`` (and ``--arrivals-stopped WHY`` without the marker): the agent's sub
  measures what rclpy took with its own collector (roles/subscribe.rs ``from_arrivals``).

The process's CPU time and wall time are the rclpy node's and the agent's together (getrusage
and the process's start survive the exec); its peak RSS is the larger of the rclpy node's
VmHWM (passed as ``--arrivals-peak-rss-kib``) and the agent's; the runner samples its memory
while it runs (its pid does not change).

Run by the ROS 2 distribution's Python in its environment (``Distribution.python``,
``child_env``), never by mwperf's: it imports rclpy, which only that Python has.
"""

import argparse
import os
import secrets
import signal
import struct
import time

import wire
from rclpy_parts import EXECUTORS, executor, message_class

RECORD = struct.Struct("<IQQI")
"""node/collect.rs: the subscription's index, receive ns, its stage's send ns (0: none), length"""
stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True




def address(text: str) -> tuple[int, str]:
    """``<domain>/<base>`` as (domain, base); ``auto`` or nothing: a fresh base (a valid ROS 2
    name, as the agent's)."""
    domain, _, base = text.rpartition("/")
    if base in ("", "auto"):
        base = f"mwperf_{secrets.randbits(32):08x}"
    return int(domain or 0), base


def peak_rss_kib() -> int | None:
    """This process's peak resident set so far (VmHWM, KiB)."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None




class Sub:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.fin_ns: int | None = None
        self.log = open(args.log, "wb")

    def received(self, msg) -> None:  # type: ignore[no-untyped-def]
        recv_ns = time.monotonic_ns()  # the callback's start, as the agent's sub takes it
        data = msg.data.tobytes() if hasattr(msg.data, "tobytes") else bytes(msg.data)
        if self.args.busy_loop_ns:
            end = time.monotonic_ns() + self.args.busy_loop_ns
            while time.monotonic_ns() < end:
                pass
        self.log.write(RECORD.pack(0, recv_ns, 0, len(data)) + data)
        h = wire.decode(data)
        if h is not None and h.flags & wire.FLAG_FIN and not h.flags & wire.FLAG_ECHO \
                and h.run_id == self.args.run_id and h.topic == 0 and self.fin_ns is None:
            self.fin_ns = recv_ns

    def run(self) -> str | None:
        """Receive until the end-of-stream marker and the linger, or a signal; why it stopped
        before the marker (None: it saw it)."""
        import rclpy
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        args = self.args
        domain, base = address(args.address)
        qos = QoSProfile(
            history=HistoryPolicy.KEEP_ALL if args.depth == 0 else HistoryPolicy.KEEP_LAST,
            depth=max(args.depth, 1),
            reliability=ReliabilityPolicy.RELIABLE if args.reliability == "reliable"
            else ReliabilityPolicy.BEST_EFFORT,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if args.durability == "transient-local"
            else DurabilityPolicy.VOLATILE)
        rclpy.init(domain_id=domain, signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
        node = rclpy.create_node(f"mwperf_sub_{os.getpid()}")
        runner = executor(args.executor)
        try:
            node.create_subscription(message_class(args.type), f"/mwperf/{base}/ping",
                                     self.received, qos)
            runner.add_node(node)
            print(f"READY ros2 {domain}/{base}", flush=True)
            while not stop:
                if self.fin_ns is not None and time.monotonic_ns() > self.fin_ns + args.linger_ns:
                    return None
                runner.spin_once(timeout_sec=0.05)
            return None if self.fin_ns is not None else \
                "stopped by signal before the end-of-stream marker"
        finally:
            runner.shutdown()
            node.destroy_node()
            rclpy.shutdown()
            self.log.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--address", required=True, help="<domain>/<base>, base auto: a fresh one")
    ap.add_argument("--run-id", type=int, required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--type", default="std_msgs/msg/UInt8MultiArray")
    ap.add_argument("--reliability", choices=("reliable", "best-effort"), default="reliable")
    ap.add_argument("--durability", choices=("volatile", "transient-local"), default="volatile")
    ap.add_argument("--depth", type=int, default=10, help="keep-last depth; 0 = keep-all")
    ap.add_argument("--executor", choices=EXECUTORS, default="single")
    ap.add_argument("--busy-loop-ns", type=int, default=0)
    ap.add_argument("--linger-ns", type=int, default=200_000_000)
    ap.add_argument("agent", nargs=argparse.REMAINDER,
                    help="-- then the agent's sub command line")
    args = ap.parse_args()
    agent = args.agent[1:] if args.agent[:1] == ["--"] else args.agent
    if not agent:
        ap.error("give the agent's sub command line after --")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    why = Sub(args).run()
    extra = ["--arrivals", args.log] + (["--arrivals-stopped", why] if why else [])
    peak = peak_rss_kib()
    if peak is not None:  # the exec starts a new memory map: its VmHWM would forget this one
        extra += ["--arrivals-peak-rss-kib", str(peak)]
    os.execv(agent[0], agent + extra)


if __name__ == "__main__":
    main()
