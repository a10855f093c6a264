"""A real rclpy publisher of mwperf messages: each std_msgs/msg/UInt8MultiArray's ``data`` is a
whole mwperf message (tests/mwperf_header.py: sequence number, the send time on
CLOCK_MONOTONIC, the payload pattern the receiver checks), then one end-of-stream marker, so an mwperf sub of the raw DDS
transports (``--opt ros2-type``) measures what a ROS 2 node published. Run with the managed
environment's python (mwperf.ros2: ``child_env``):

    python mwperf_talker.py --topic /mwperf/b/ping --count 300 --rate 200 --payload 64

It waits until its RMW matched a subscription and the subscription acknowledged one warm-up
message, publishes ``--count`` messages on absolute
deadlines, waits until the subscriptions acknowledged them (reliable) and prints, one JSON
object per line: {"ready": true, ...} once the publisher exists, {"matched": N} when it starts
and {"sent": N} when done (its own count, the ground truth of the sub's).
"""

import argparse
import json
import sys
import time
from pathlib import Path

import rclpy
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import UInt8MultiArray

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from mwperf_header import FLAG_FIN, FLAG_WARMUP, encode, pattern  # noqa: E402

RUN_ID = 0x5EED


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--topic", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--rate", type=float, default=200.0)
    ap.add_argument("--payload", type=int, default=64)
    ap.add_argument("--depth", type=int, default=1000)
    ap.add_argument("--match-timeout", type=float, default=30.0)
    args = ap.parse_args()
    qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=args.depth,
                     reliability=ReliabilityPolicy.RELIABLE,
                     durability=DurabilityPolicy.VOLATILE)
    rclpy.init()
    node = rclpy.create_node("mwperf_talker")
    try:
        pub = node.create_publisher(UInt8MultiArray, args.topic, qos)
        say(ready=True, node=node.get_fully_qualified_name(), topic=args.topic)
        end = time.monotonic() + args.match_timeout
        while pub.get_subscription_count() == 0:
            if time.monotonic() > end:
                say(error=f"no subscription matched within {args.match_timeout} s")
                sys.exit(1)
            time.sleep(0.01)
        say(matched=pub.get_subscription_count())
        # One warm-up message, acknowledged: the subscription's own word that it is in step
        # with this writer (a Cyclone DDS reader holds a new writer's first samples until that
        # writer's first heartbeat, every 3 s on ROS 2's Fast DDS, and drops what overflows).
        msg = UInt8MultiArray()
        msg.data = encode(RUN_ID, 0, 0, flags=FLAG_WARMUP, payload=pattern(0, args.payload),
                          sent=time.monotonic_ns())
        pub.publish(msg)
        if not pub.wait_for_all_acked(Duration(seconds=args.match_timeout)):
            say(error=f"the warm-up message was not acknowledged within {args.match_timeout} s")
            sys.exit(1)
        period_ns = int(1e9 / args.rate)
        next_ns = time.monotonic_ns()
        for seq in range(args.count):
            msg.data = encode(RUN_ID, 0, seq, payload=pattern(seq, args.payload), intended=next_ns,
                              sent=time.monotonic_ns())
            pub.publish(msg)
            next_ns += period_ns
            left = next_ns - time.monotonic_ns()
            if left > 0:
                time.sleep(left / 1e9)
        msg.data = encode(RUN_ID, 0, args.count, flags=FLAG_FIN, sent=time.monotonic_ns())
        pub.publish(msg)
        pub.wait_for_all_acked(Duration(seconds=10))
        say(sent=args.count)
    finally:
        node.destroy_node()
        rclpy.shutdown()


if __name__ == "__main__":
    main()
