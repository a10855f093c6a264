"""A burst of ros_discovery_info announcements, as a ROS 2 launch makes them: once a reader of
the topic has matched, COUNT announcements back to back from one writer, each of a participant
GID of its own (derived from this participant's) with one node ``/burst/nI``. A test peer of
``mwperf probe --ros2``: a probe that keeps only the last N samples of the keyless topic between
two of its polls loses the announcements pushed out, and those participants' nodes.

    python3 announcer.py --domain 180 --count 300

stdout: {"ready": true, "participant": GUID} once its writer exists, then {"matched": true}
once a reader matched, then {"sent": COUNT, "gids": [32 hex each]} after the burst. Run it with
the probe's CYCLONEDDS_URI. It stays (a participant the probe discovers) until SIGTERM.
"""

import argparse
import json
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cyclonedds.core import Policy, Qos  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.pub import DataWriter  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds.util import duration  # noqa: E402

from ros2types import INFO_TYPES, PARTICIPANT_QOS  # noqa: E402

BURST_QOS = Qos(Policy.Reliability.Reliable(duration(seconds=1)),
                Policy.Durability.TransientLocal, Policy.History.KeepAll)
"""keep-all: every announcement of the burst reaches the reader (rmw's keep-last 1 writer would
replace one not yet acknowledged; here each stands for another participant's writer)"""


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--domain", type=int, required=True)
    p.add_argument("--count", type=int, default=300)
    p.add_argument("--wait", type=float, default=20.0, help="seconds to wait for a reader")
    args = p.parse_args()
    stop: list[int] = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    gid_t, node_t, info_t = INFO_TYPES[24]
    participant = DomainParticipant(args.domain, qos=PARTICIPANT_QOS)
    topic = Topic(participant, "ros_discovery_info", info_t, qos=BURST_QOS)
    writer = DataWriter(participant, topic, qos=BURST_QOS)
    print(json.dumps({"ready": True, "participant": participant.guid.hex}), flush=True)
    end = time.monotonic() + args.wait
    while writer.get_publication_matched_status().current_count == 0:
        if time.monotonic() > end:
            print(json.dumps({"error": f"no reader matched in {args.wait:g} s"}), flush=True)
            return 1
        time.sleep(0.01)
    print(json.dumps({"matched": True}), flush=True)
    base = participant.guid.bytes[:12]
    gids = [base + i.to_bytes(4, "big") for i in range(1, args.count + 1)]
    samples = [info_t(gid_t(list(g) + [0] * 8), [node_t("/burst", f"n{i}", [], [])])
               for i, g in enumerate(gids)]
    for sample in samples:
        writer.write(sample)
    writer.wait_for_acks(duration(seconds=10))
    print(json.dumps({"sent": len(samples), "gids": [g.hex() for g in gids]}), flush=True)
    while not stop:
        time.sleep(0.05)
    return 0


if __name__ == "__main__":
    sys.exit(main())
