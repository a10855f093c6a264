"""A real ROS 2 node (rclpy, on the RMW of the managed environment, rmw_fastrtps_cpp): a
publisher of sensor_msgs/msg/Imu or std_msgs/msg/String at a rate on absolute deadlines, or a
subscription. A peer of ``mwperf probe --ros2`` (tests/test_probe_ros2_rclpy_e2e.py). Run with
the managed environment's python (mwperf.ros2: ``child_env``), in the ROS 2 environment under test
(ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS):

    python rclpy_node.py --node talker --topic /imu --type imu --rate 50 --stamp-offset-ms 7
    python rclpy_node.py --role sub --node listener --topic /imu --type imu --reliability reliable
    python rclpy_node.py --role relay --node echo --type bytes --topic /mwperf/b/ping --to /mwperf/b/pong

stdout, one JSON object per line: {"ready": true, "node": ..., "topic": ..., "type": ...} once
the entity exists; a publisher {"matched": N, "t_ns": UNIX_NS} each time the number of
subscriptions its RMW matched changes (its own view of discovery, checked before each send); on
SIGTERM/SIGINT {"sent": N}, {"received": N, ...} or {"relayed": N}. A subscription of type
``bytes``, ``pointcloud2`` or ``image`` (what mwperf's ros2 transport publishes) also counts the
messages whose data is a whole mwperf message (magic, header length, payload length; ``intact``)
and, among them, the data messages (no flag: not warm-up, probe or end-of-stream; ``data``). A
relay republishes each message it takes, as it is, on ``--to`` (topic_tools relay's job). header.stamp = the send
time (CLOCK_REALTIME) - the stamp offset. --sends FILE: every send time (unix ns), one per
line, written at the end: the ground truth of a rate over any window.
"""

import argparse
import json
import signal
import time
from pathlib import Path

import rclpy
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image, Imu, PointCloud2
from std_msgs.msg import String, UInt8MultiArray

TYPES = {"imu": (Imu, "sensor_msgs/msg/Imu"), "string": (String, "std_msgs/msg/String"),
         "bytes": (UInt8MultiArray, "std_msgs/msg/UInt8MultiArray"),
         "pointcloud2": (PointCloud2, "sensor_msgs/msg/PointCloud2"),
         "image": (Image, "sensor_msgs/msg/Image")}
CARRIERS = (UInt8MultiArray, PointCloud2, Image)
"""the types mwperf's ros2 transport carries its messages in (in their ``data``)"""
HEADER_LEN = 56
"""mwperf's wire header (tests/mwperf_header.py): magic b"MWPF" at 0, flags at 5, header length
(u16) at 6, payload length (u32) at 48"""

stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--role", choices=("pub", "sub", "relay"), default="pub")
    ap.add_argument("--to", help="the topic a relay republishes on")
    ap.add_argument("--node", default="talker")
    ap.add_argument("--topic", default="/imu")
    ap.add_argument("--type", choices=tuple(TYPES), default="imu")
    ap.add_argument("--rate", type=float, default=50.0)
    ap.add_argument("--reliability", choices=("reliable", "best-effort"), default="reliable")
    ap.add_argument("--durability", choices=("volatile", "transient-local"), default="volatile")
    ap.add_argument("--depth", type=int, default=10)
    ap.add_argument("--stamp-offset-ms", type=float, default=0.0)
    ap.add_argument("--sends", type=Path)
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    cls, type_name = TYPES[args.type]
    qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=args.depth,
                     reliability=ReliabilityPolicy.RELIABLE if args.reliability == "reliable"
                     else ReliabilityPolicy.BEST_EFFORT,
                     durability=DurabilityPolicy.TRANSIENT_LOCAL
                     if args.durability == "transient-local" else DurabilityPolicy.VOLATILE)
    rclpy.init(signal_handler_options=rclpy.signals.SignalHandlerOptions.NO)
    node = rclpy.create_node(args.node)
    try:
        if args.role == "pub":
            publish(node, node.create_publisher(cls, args.topic, qos), cls, args, type_name)
        elif args.role == "relay":
            out = node.create_publisher(cls, args.to, qos)
            relayed = [0]

            def again(msg: object) -> None:
                out.publish(msg)
                relayed[0] += 1

            node.create_subscription(cls, args.topic, again, qos)
            say(ready=True, node=node.get_fully_qualified_name(), topic=args.topic,
                type=type_name)
            while not stop:
                rclpy.spin_once(node, timeout_sec=0.05)
            say(relayed=relayed[0])
        else:
            counts = {"received": 0, "intact": 0, "data": 0}

            def got(msg: object) -> None:
                counts["received"] += 1
                if cls in CARRIERS:
                    data = bytes(msg.data)
                    if (data[:4] == b"MWPF" and len(data) >= HEADER_LEN
                            and int.from_bytes(data[6:8], "little") == HEADER_LEN
                            and len(data) == HEADER_LEN + int.from_bytes(data[48:52], "little")):
                        counts["intact"] += 1
                        counts["data"] += data[5] == 0

            node.create_subscription(cls, args.topic, got, qos)
            say(ready=True, node=node.get_fully_qualified_name(), topic=args.topic,
                type=type_name)
            while not stop:
                rclpy.spin_once(node, timeout_sec=0.05)
            say(**counts)
    finally:
        node.destroy_node()
        rclpy.shutdown()


def publish(node: object, pub: object, cls: type, args: argparse.Namespace,
            type_name: str) -> None:
    say(ready=True, node=node.get_fully_qualified_name(), topic=args.topic, type=type_name)
    period = 1.0 / args.rate
    offset_ns = int(args.stamp_offset_ms * 1e6)
    sends: list[int] = []
    msg = cls()
    if cls is String:
        msg.data = "x" * 64
    next_at = time.monotonic()
    matched = 0
    while not stop:
        count = pub.get_subscription_count()
        if count != matched:
            matched = count
            say(matched=count, t_ns=time.time_ns())
        now_ns = time.time_ns()
        if cls is Imu:
            stamp = now_ns - offset_ns
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
            msg.header.frame_id = "imu_link"
        pub.publish(msg)
        sends.append(now_ns)
        next_at += period
        left = next_at - time.monotonic()
        if left > 0:
            time.sleep(left)
    if args.sends:
        args.sends.write_text("".join(f"{t}\n" for t in sends))
    say(sent=len(sends))


if __name__ == "__main__":
    main()
