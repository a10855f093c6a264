"""A real rclpy relay node, the foreign echo of ``mwperf run --transport ros2 --pong relay``:
it takes every message of each ``--from`` topic and publishes it, as it is, on the ``--to``
topic given with it (what topic_tools relay does in ROS 1), inside rclpy's real executors:

- ``--executor single``: rclpy's SingleThreadedExecutor, every callback one after another;
- ``multi``: a MultiThreadedExecutor with a thread per topic, each subscription in a mutually
  exclusive callback group of its own (topics run side by side, one topic's callbacks in order);
- ``events``: rclpy's EventsExecutor (rclpy.experimental), single-threaded and event driven.

``--busy-loop-ms`` spins the CPU that long in each callback before it publishes (a spin, not a
sleep: the work a real callback does, seed 001's busy loop), so the executor's scheduling of
several topics is what is measured. Run by a ROS 2 distribution's own Python in its environment
(``Distribution.python``, ``child_env``), never by mwperf's: this module imports rclpy and the
message packages, which only that Python has. Prints ``ready`` once its publishers and
subscriptions exist, and ``relayed N`` when SIGTERM/SIGINT stops it.

    python relay.py --from /mwperf/b/ping --to /mwperf/b/pong --type std_msgs/msg/UInt8MultiArray
    python relay.py --from /a/ping --to /a/pong --from /b/ping --to /b/pong --executor multi \\
        --busy-loop-ms 1.8 --type std_msgs/msg/UInt8MultiArray
"""

import argparse
import signal
import time

from rclpy_parts import EXECUTORS, executor, message_class

stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True




def spin_for(seconds: float) -> None:
    """Busy the CPU for ``seconds`` of wall time (the callback's work)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass




def main() -> None:
    import rclpy
    from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="sources", action="append", required=True)
    ap.add_argument("--to", dest="targets", action="append", required=True)
    ap.add_argument("--type", default="std_msgs/msg/UInt8MultiArray")
    ap.add_argument("--reliability", choices=("reliable", "best-effort"), default="reliable")
    ap.add_argument("--durability", choices=("volatile", "transient-local"), default="volatile")
    ap.add_argument("--depth", type=int, default=10, help="keep-last depth; 0 = keep-all")
    ap.add_argument("--executor", choices=EXECUTORS, default="single")
    ap.add_argument("--busy-loop-ms", type=float, default=0.0)
    args = ap.parse_args()
    if len(args.sources) != len(args.targets):
        ap.error("give one --to per --from")
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    qos = QoSProfile(
        history=HistoryPolicy.KEEP_ALL if args.depth == 0 else HistoryPolicy.KEEP_LAST,
        depth=max(args.depth, 1),
        reliability=ReliabilityPolicy.RELIABLE if args.reliability == "reliable"
        else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.TRANSIENT_LOCAL if args.durability == "transient-local"
        else DurabilityPolicy.VOLATILE)
    cls = message_class(args.type)
    busy_s = args.busy_loop_ms / 1000
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node("mwperf_relay")
    relayed = [0] * len(args.sources)
    runner = executor(args.executor, len(args.sources))
    try:
        for index, (source, target) in enumerate(zip(args.sources, args.targets)):
            out = node.create_publisher(cls, target, qos)
            group = MutuallyExclusiveCallbackGroup()

            def again(msg: object, out=out, index=index) -> None:  # type: ignore[no-untyped-def]
                if busy_s:
                    spin_for(busy_s)
                out.publish(msg)
                relayed[index] += 1

            node.create_subscription(cls, source, again, qos, callback_group=group)
        runner.add_node(node)
        print("ready", flush=True)
        while not stop:
            runner.spin_once(timeout_sec=0.05)
        print(f"relayed {sum(relayed)}", flush=True)
    finally:
        runner.shutdown()
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
