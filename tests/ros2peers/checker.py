"""A second DDS participant's view of a domain, from DDS discovery only: every participant, writer
and reader (the DCPSParticipant/Publication/Subscription built-in topics) and the ROS 2 nodes
announced on ``ros_discovery_info`` (Humble's 24-byte and Jazzy's 16-byte Gid layouts), seen
during SECONDS. A test peer of ``mwperf probe --ros2``: what the probe created (its readers, and
that it has no writers) checked from outside.

    python3 checker.py --domain 180 --seconds 5

Run it with the same CYCLONEDDS_URI as the probe. stdout: {"ready": true, "participant": GUID}
at the start, then one JSON document at the end:
  {"self": GUID, "participants": [GUID...],
   "writers": [{"guid", "participant", "topic", "type", "reliability", "durability",
                "left": true once it was deleted}...],
   "readers": [same], "nodes": {PARTICIPANT_GUID: ["/ns/name", ...]}}
Every entity ever seen during the time (those that left too); this checker's own participants left out.
"""

import argparse
import json
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cyclonedds.builtin import (BuiltinDataReader, BuiltinTopicDcpsParticipant,  # noqa: E402
                                BuiltinTopicDcpsPublication, BuiltinTopicDcpsSubscription)
from cyclonedds.core import Policy  # noqa: E402
from cyclonedds.domain import DomainParticipant  # noqa: E402
from cyclonedds.core import InstanceState, SampleState, ViewState  # noqa: E402
from cyclonedds.sub import DataReader  # noqa: E402
from cyclonedds.topic import Topic  # noqa: E402
from cyclonedds._clayer import ddspy_take  # noqa: E402

from ros2types import GRAPH_READER_QOS, INFO_TYPES  # noqa: E402

stop = False


def on_signal(*_: object) -> None:
    global stop
    stop = True


DURABILITY = {"Volatile": "volatile", "TransientLocal": "transient-local",
              "Transient": "transient", "Persistent": "persistent"}


def kind(policy: object) -> str:
    """'Reliable' for Policy.Reliability.Reliable(...), 'TransientLocal', ..."""
    return type(policy).__name__.rpartition(".")[2]


def endpoint(sample) -> dict:
    qos = sample.qos
    rel = qos[Policy.Reliability] if qos is not None else None
    dur = qos[Policy.Durability] if qos is not None else None
    return {"guid": sample.key.hex, "participant": sample.participant_key.hex,
            "topic": sample.topic_name, "type": sample.type_name,
            "reliability": "reliable" if kind(rel) == "Reliable" else "best-effort",
            "durability": DURABILITY.get(kind(dur), "volatile")}


def read_cdr_string(buf: bytes, pos: int) -> tuple[str, int]:
    pos = (pos + 3) & ~3
    n = int.from_bytes(buf[pos:pos + 4], "little")
    return buf[pos + 4:pos + 4 + n - 1].decode(), pos + 4 + n


def nodes_of(raw: bytes) -> tuple[str, list[str]]:
    """(participant gid as 32 hex, ["/ns/name"...]) from a serialized ParticipantEntitiesInfo
    (XCDR1 little-endian after the 4-byte header, whose last byte's low 2 bits count the padding
    at the end). Gids are 24 bytes (Humble) or 16 (Iron and later): the layout that parses to
    exactly the end, with non-empty names, wins."""
    body = raw[4:len(raw) - (raw[3] & 3)]
    for width in (24, 16):
        try:
            pos = width
            count = int.from_bytes(body[pos:pos + 4], "little")
            pos += 4
            names = []
            for _ in range(count):
                ns, pos = read_cdr_string(body, pos)
                name, pos = read_cdr_string(body, pos)
                if not name or not ns.startswith("/") or pos > len(body):
                    raise ValueError
                for _ in range(2):
                    pos = (pos + 3) & ~3
                    pos += 4 + width * int.from_bytes(body[pos:pos + 4], "little")
                names.append(ns.rstrip("/") + "/" + name)
            if pos == len(body):
                return body[:16].hex(), names
        except (UnicodeDecodeError, ValueError):
            continue
    return body[:16].hex(), []


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--domain", type=int, required=True)
    p.add_argument("--seconds", type=float, default=5.0)
    args = p.parse_args()
    signal.signal(signal.SIGTERM, on_signal)
    dp = DomainParticipant(args.domain)
    me = dp.guid.hex
    readers = {kind: BuiltinDataReader(dp, topic) for kind, topic in (
        ("participants", BuiltinTopicDcpsParticipant), ("writers", BuiltinTopicDcpsPublication),
        ("readers", BuiltinTopicDcpsSubscription))}
    # ros_discovery_info in both Gid layouts: a reader of one layout does not match a writer
    # that sends the other's type information; each in a participant of its own (one topic
    # name, one type per participant); the samples are parsed from their bytes (nodes_of)
    extra = [DomainParticipant(args.domain) for _ in INFO_TYPES]
    infos = [DataReader(d, Topic(d, "ros_discovery_info", types[2]), qos=GRAPH_READER_QOS)
             for d, types in zip(extra, INFO_TYPES.values())]
    mine = {me, *(d.guid.hex for d in extra)}
    any_state = SampleState.Any | ViewState.Any | InstanceState.Any
    print(json.dumps({"ready": True, "participant": me}), flush=True)
    seen: dict[str, dict] = {"participants": {}, "writers": {}, "readers": {}}
    nodes: dict[str, list[str]] = {}
    end = time.monotonic() + args.seconds
    while not stop and time.monotonic() < end:
        for kind, reader in readers.items():
            for sample in reader.take(N=1000):
                key = sample.key.hex
                if kind == "participants":
                    seen[kind][key] = key
                elif getattr(sample, "topic_name", None) is not None:
                    seen[kind][key] = {**endpoint(sample), "left": False}
                elif key in seen[kind]:  # an invalid sample: only the key, the entity left
                    seen[kind][key]["left"] = True
        for info in infos:
            for data, sample_info in ddspy_take(info._ref, any_state, 100):
                if sample_info.valid_data:
                    gid, names = nodes_of(data)
                    nodes[gid] = names
        time.sleep(0.05)
    print(json.dumps({
        "self": me, "participants": sorted(g for g in seen["participants"] if g not in mine),
        "writers": [w for w in seen["writers"].values() if w["participant"] not in mine],
        "readers": [r for r in seen["readers"].values() if r["participant"] not in mine],
        "nodes": {g: n for g, n in nodes.items() if g not in mine}}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
