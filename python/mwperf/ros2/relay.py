"""A real rclpy relay node, the foreign echo of ``mwperf run --transport ros2 --pong relay``:
it takes every message of ``--from`` and publishes it, as it is, on ``--to`` (what
topic_tools relay does in ROS 1). Run by a ROS 2 distribution's own Python in its environment
(``Distribution.python``, ``child_env``), never by mwperf's: this module imports rclpy and the
message packages, which only that Python has. Prints ``ready`` once its publisher and
subscription exist, and ``relayed N`` when SIGTERM/SIGINT stops it.

    python relay.py --from /mwperf/b/ping --to /mwperf/b/pong --type std_msgs/msg/UInt8MultiArray
"""

import argparse
import importlib
import signal

stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True


def message_class(name: str) -> type:
    """``<pkg>/msg/<Type>`` as its Python class."""
    package, _, type_name = name.partition("/msg/")
    return getattr(importlib.import_module(f"{package}.msg"), type_name)


def main() -> None:
    import rclpy
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="source", required=True)
    ap.add_argument("--to", required=True)
    ap.add_argument("--type", default="std_msgs/msg/UInt8MultiArray")
    ap.add_argument("--reliability", choices=("reliable", "best-effort"), default="reliable")
    ap.add_argument("--durability", choices=("volatile", "transient-local"), default="volatile")
    ap.add_argument("--depth", type=int, default=10, help="keep-last depth; 0 = keep-all")
    args = ap.parse_args()
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
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node("mwperf_relay")
    relayed = [0]
    try:
        out = node.create_publisher(cls, args.to, qos)

        def again(msg: object) -> None:
            out.publish(msg)
            relayed[0] += 1

        node.create_subscription(cls, args.source, again, qos)
        print("ready", flush=True)
        while not stop:
            rclpy.spin_once(node, timeout_sec=0.05)
        print(f"relayed {relayed[0]}", flush=True)
    finally:
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
