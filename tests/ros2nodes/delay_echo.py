"""A ROS 2 node under test for ``--pong-cmd`` (tests only): subscribes ``input`` and publishes
each message's data on ``output`` after ``--delay-ms`` of sleep in its callback, so the latency
it adds is known (ground truth). Its topics are set by ROS 2 remapping, as a user's node's are:

    python3 delay_echo.py --type std_msgs/msg/UInt8MultiArray --delay-ms 2 \\
        --ros-args -r input:=/mwperf/x/ping -r output:=/mwperf/x/pong

Prints ``echoed N`` when stopped (SIGTERM/SIGINT): its own count, to check mwperf's against."""

import argparse
import importlib
import signal
import sys
import time

stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True


def main() -> None:
    import rclpy
    from rclpy.duration import Duration
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    ap = argparse.ArgumentParser()
    ap.add_argument("--type", required=True)
    ap.add_argument("--delay-ms", type=float, default=0.0)
    ap.add_argument("--exit-after", type=int, default=0, help="exit after N messages (0: never)")
    ap.add_argument("--start-delay-s", type=float, default=0.0,
                    help="sleep this long before creating the node (a program slow to start)")
    args, _ = ap.parse_known_args(rclpy.utilities.remove_ros_args(sys.argv)[1:])
    deadline = time.monotonic() + args.start_delay_s
    while not stop and time.monotonic() < deadline:
        time.sleep(0.05)
    package, _, name = args.type.partition("/msg/")
    cls = getattr(importlib.import_module(f"{package}.msg"), name)
    rclpy.init(args=sys.argv, signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node("delay_echo")
    qos = QoSProfile(depth=1000, reliability=ReliabilityPolicy.RELIABLE)
    echoed = [0]
    out = node.create_publisher(cls, "output", qos)

    def echo(msg: object) -> None:
        if args.delay_ms:
            time.sleep(args.delay_ms / 1000)
        out.publish(msg)
        echoed[0] += 1
        if args.exit_after and echoed[0] >= args.exit_after:
            global stop
            stop = True

    node.create_subscription(cls, "input", echo, qos)
    try:
        while not stop:
            rclpy.spin_once(node, timeout_sec=0.05)
    finally:
        if args.exit_after and echoed[0] >= args.exit_after:
            # what it published is delivered before it goes (a writer destroyed at once drops
            # what its reader has not acknowledged: the last echo, once under load); at most
            # half a second: a --pong-cmd test needs it gone well before its run ends (there
            # the wait did not return: a ping's reader that never acknowledges everything)
            out.wait_for_all_acked(Duration(seconds=0.5))
        print(f"echoed {echoed[0]}", flush=True)
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
