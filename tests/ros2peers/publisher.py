"""A ROS 2 publisher (or subscriber) in plain python ``cyclonedds``, no ROS 2 installed: one topic
``rt/NAME`` of a ROS 2 type (ros2types.py), at a rate on absolute deadlines, optionally paused once,
its node announced on ``ros_discovery_info`` as rmw does. A test peer of ``mwperf probe --ros2``.

    python3 publisher.py --domain 180 --topic rt/imu --type header --rate 100 --size 100 \
        --stamp-offset-ms 7 --node /sensors/imu_driver --duration 6 [--pause-at 2 --pause-ms 500]
    python3 publisher.py --role sub --domain 180 --topic rt/imu --type header --reliability reliable \
        --node /listener

Run it with the same CYCLONEDDS_URI as the probe (tests/ros2peers/peers.py: the agents' loopback
configuration). stdout, one JSON object per line:
  {"ready": true, "participant": GUID, "endpoint": GUID, "topic":..., "type":..., "size": BYTES}
  at the end: {"sent": N, "first_ns":.., "last_ns":.., "rate_hz":..}
  (sub: {"received": N, "age_p50_ns": receive time - header.stamp, median; null without header})
GUIDs are 32 lower-case hex digits. header.stamp = the send time (CLOCK_REALTIME) - the stamp
offset, so a receiver's age is its latency + that offset. --sends FILE: every send time (unix
ns), one per line, written at the end: the ground truth of a rate over any window.
"""

import argparse
import json
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cyclonedds.core import (InstanceState, Policy, Qos, ReadCondition, SampleState,  # noqa: E402
                             ViewState, WaitSet)
from cyclonedds._clayer import ddspy_write  # noqa: E402
from cyclonedds.core import DDSException  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

from ros2types import PARTICIPANT_QOS, TYPES, Header, announce, make_sample, set_stamp  # noqa: E402

stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True


def qos_of(args: argparse.Namespace) -> Qos:
    policies = [Policy.Reliability.Reliable(duration(milliseconds=100))
                if args.reliability == "reliable" else Policy.Reliability.BestEffort,
                Policy.Durability.TransientLocal if args.durability == "transient-local"
                else Policy.Durability.Volatile,
                Policy.History.KeepLast(args.depth)]
    if args.deadline_ms:
        policies.append(Policy.Deadline(duration(milliseconds=args.deadline_ms)))
    return Qos(*policies)


def say(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def _paused(due: float, pause: tuple[float, float], every: float) -> bool:
    """Whether the message due at ``due`` s falls in a pause (one from pause[0] to pause[1],
    again every ``every`` s when > 0)."""
    if due < pause[0]:
        return False
    into = (due - pause[0]) % every if every > 0 else due - pause[0]
    return into < pause[1] - pause[0]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--role", choices=("pub", "sub"), default="pub")
    p.add_argument("--domain", type=int, required=True)
    p.add_argument("--topic", required=True, help="the DDS topic name, e.g. rt/imu")
    p.add_argument("--type", choices=sorted(TYPES), default="header")
    p.add_argument("--size", type=int, default=100, help="serialized bytes incl. the 4-byte CDR header")
    p.add_argument("--rate", type=float, default=100.0)
    p.add_argument("--duration", type=float, default=0.0, help="seconds; 0 = until SIGTERM")
    p.add_argument("--reliability", choices=("reliable", "best-effort"), default="best-effort")
    p.add_argument("--durability", choices=("volatile", "transient-local"), default="volatile")
    p.add_argument("--depth", type=int, default=10)
    p.add_argument("--deadline-ms", type=float, default=0.0)
    p.add_argument("--stamp-offset-ms", type=float, default=7.0)
    p.add_argument("--pause-at", type=float, default=None, help="seconds after the first send")
    p.add_argument("--pause-ms", type=float, default=500.0)
    p.add_argument("--pause-every", type=float, default=0.0,
                   help="seconds: pause again this long after each pause began (0: once)")
    p.add_argument("--start-after", type=float, default=0.0,
                   help="seconds between READY and the first send")
    p.add_argument("--node", default=None, help="announce this ROS 2 node, e.g. /ns/talker")
    p.add_argument("--gid", type=int, choices=(16, 24), default=24)
    p.add_argument("--sends", type=Path, default=None)
    args = p.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    msgtype = TYPES[args.type]
    participant = DomainParticipant(args.domain, qos=PARTICIPANT_QOS)
    topic = Topic(participant, args.topic, msgtype)
    qos = qos_of(args)
    if args.role == "sub":
        endpoint = DataReader(participant, topic, qos=qos)
        nodes = {args.node: ([endpoint], [])} if args.node else {}
    else:
        endpoint = DataWriter(participant, topic, qos=qos)
        nodes = {args.node: ([], [endpoint])} if args.node else {}
    info = announce(participant, nodes, args.gid) if nodes else None  # noqa: F841 (kept alive)
    sample = make_sample(args.type, args.size)
    say(ready=True, participant=participant.guid.hex, endpoint=endpoint.guid.hex, topic=args.topic,
        type=msgtype.__idl_typename__, size=len(sample.serialize()), node=args.node)

    if args.role == "sub":
        received, ages = 0, []
        end = time.monotonic() + args.duration if args.duration else float("inf")
        waitset = WaitSet(participant)
        waitset.attach(ReadCondition(endpoint, SampleState.Any | ViewState.Any | InstanceState.Any))
        while not stop and time.monotonic() < end:
            waitset.wait(duration(milliseconds=100))
            now = time.time_ns()
            for got in endpoint.take(N=100):
                received += 1
                header = got if isinstance(got, Header) else getattr(got, "header", None)
                if header is not None:
                    ages.append(now - header.stamp.sec * 1_000_000_000 - header.stamp.nanosec)
        ages.sort()
        say(received=received, age_p50_ns=ages[len(ages) // 2] if ages else None)
        return 0

    time.sleep(args.start_after)
    period = 1.0 / args.rate
    offset_ns = int(args.stamp_offset_ms * 1e6)
    pause = ((args.pause_at, args.pause_at + args.pause_ms / 1000)
             if args.pause_at is not None else None)
    sends: list[int] = []
    start = time.monotonic()
    k = 0
    while not stop:
        due = k * period
        k += 1
        if args.duration and due >= args.duration:
            break
        if pause and _paused(due, pause, args.pause_every):
            continue
        delay = start + due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        now = time.time_ns()
        set_stamp(sample, now - offset_ns)
        # the serialized sample written as DataWriter.write does, without its check of the
        # sample's class (CompressedImageBytes: the topic's layout, data as python bytes)
        ret = ddspy_write(endpoint._ref, sample.serialize())
        if ret < 0:
            raise DDSException(ret, f"writing {args.topic}")
        sends.append(now)
    span = (sends[-1] - sends[0]) if len(sends) > 1 else 0
    if args.sends:
        args.sends.write_text("".join(f"{t}\n" for t in sends))
    say(sent=len(sends), first_ns=sends[0] if sends else None, last_ns=sends[-1] if sends else None,
        rate_hz=(len(sends) - 1) * 1e9 / span if span else None)
    time.sleep(0.2)  # the last samples leave (best-effort: nothing waits for them)
    return 0


if __name__ == "__main__":
    sys.exit(main())
