"""ROS 2 message types on the wire, written from scratch for python ``cyclonedds`` (no ROS 2
installed): the DDS type names rmw gives them (``pkg::msg::dds_::Type_``), XCDR1 as ROS 2 uses,
and the ``ros_discovery_info`` announcement of a node (rmw_dds_common, Humble's 24-byte Gid =
the 16-byte DDS GUID + 8 zero bytes; ``--gid 16`` for the Iron/Jazzy layout)."""

from dataclasses import dataclass, field

from cyclonedds.core import Policy, Qos
from cyclonedds.idl import IdlStruct
from cyclonedds.idl.types import array, int32, sequence, uint8, uint32
from cyclonedds.pub import DataWriter
from cyclonedds.topic import Topic
from cyclonedds.util import duration


@dataclass
class Time(IdlStruct, typename="builtin_interfaces::msg::dds_::Time_"):
    sec: int32
    nanosec: uint32


@dataclass
class Header(IdlStruct, typename="std_msgs::msg::dds_::Header_"):
    stamp: Time
    frame_id: str


@dataclass
class CompressedImage(IdlStruct, typename="sensor_msgs::msg::dds_::CompressedImage_"):
    """A std_msgs/Header-first type of any size (its data): the topic's type (its XTypes type
    object is made from it; python's ``bytes`` has none)."""
    header: Header
    format: str
    data: sequence[uint8]


@dataclass
class CompressedImageBytes(IdlStruct, typename="sensor_msgs::msg::dds_::CompressedImage_"):
    """The same wire layout with ``data`` as python bytes: what is written (DataWriter.write
    serializes the sample it is given; a sequence[uint8] of 1 MB takes ~45 ms, bytes 0.4 ms)."""
    header: Header
    format: str
    data: bytes


@dataclass
class String(IdlStruct, typename="std_msgs::msg::dds_::String_"):
    """A type without a header."""
    data: str


TYPES = {"header": Header, "compressed": CompressedImage, "string": String}
"""--type name -> type; every one has a way to reach a given serialized size (make_sample)"""


def make_sample(kind: str, size: int) -> IdlStruct:
    """A sample of ``kind`` whose serialized size (with the 4-byte encapsulation header, what the
    probe reports) is ``size``, or the smallest the type has when ``size`` is below that."""
    if kind == "header":
        base = len(Header(Time(0, 0), "").serialize())
        return Header(Time(0, 0), "f" * max(0, size - base))
    if kind == "string":
        base = len(String("").serialize())
        return String("x" * max(0, size - base))
    base = len(CompressedImageBytes(Header(Time(0, 0), "camera"), "jpeg", b"").serialize())
    return CompressedImageBytes(Header(Time(0, 0), "camera"), "jpeg", bytes(max(0, size - base)))


def set_stamp(sample: IdlStruct, stamp_ns: int) -> None:
    header = sample if isinstance(sample, Header) else getattr(sample, "header", None)
    if header is not None:
        header.stamp = Time(stamp_ns // 1_000_000_000, stamp_ns % 1_000_000_000)


@dataclass
class Gid24(IdlStruct, typename="rmw_dds_common::msg::dds_::Gid_"):
    data: array[uint8, 24]


@dataclass
class Gid16(IdlStruct, typename="rmw_dds_common::msg::dds_::Gid_"):
    data: array[uint8, 16]


@dataclass
class NodeInfo24(IdlStruct, typename="rmw_dds_common::msg::dds_::NodeEntitiesInfo_"):
    node_namespace: str
    node_name: str
    reader_gid_seq: sequence[Gid24] = field(default_factory=list)
    writer_gid_seq: sequence[Gid24] = field(default_factory=list)


@dataclass
class NodeInfo16(IdlStruct, typename="rmw_dds_common::msg::dds_::NodeEntitiesInfo_"):
    node_namespace: str
    node_name: str
    reader_gid_seq: sequence[Gid16] = field(default_factory=list)
    writer_gid_seq: sequence[Gid16] = field(default_factory=list)


@dataclass
class ParticipantInfo24(IdlStruct, typename="rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"):
    gid: Gid24
    node_entities_info_seq: sequence[NodeInfo24] = field(default_factory=list)


@dataclass
class ParticipantInfo16(IdlStruct, typename="rmw_dds_common::msg::dds_::ParticipantEntitiesInfo_"):
    gid: Gid16
    node_entities_info_seq: sequence[NodeInfo16] = field(default_factory=list)


INFO_TYPES = {24: (Gid24, NodeInfo24, ParticipantInfo24), 16: (Gid16, NodeInfo16, ParticipantInfo16)}
DISCOVERY_QOS = Qos(Policy.Reliability.Reliable(duration(milliseconds=100)),
                    Policy.Durability.TransientLocal, Policy.History.KeepLast(1))
"""what rmw gives ros_discovery_info's writer (and publisher.py its one)"""
GRAPH_READER_QOS = Qos(Policy.Reliability.Reliable(duration(milliseconds=100)),
                       Policy.Durability.TransientLocal, Policy.History.KeepAll)
"""a reader that must see every participant's announcement: the topic is keyless, so a keep-last
1 reader holds ONE sample of all writers together, and two announcements arriving between two
takes (every writer's transient-local sample comes at once when the reader matches) leave only
the later (seen: the bridge's node lost to a listener's that came 1 ms after it)"""
PARTICIPANT_QOS = Qos(Policy.Userdata(b"enclave=/;"))
"""the USER_DATA an rmw participant carries"""


def gid_bytes(guid, width: int) -> list[int]:
    """A DDS GUID (uuid.UUID from cyclonedds) as a rmw Gid: its 16 bytes, zero-padded."""
    return list(guid.bytes) + [0] * (width - 16)


def split_node(full: str) -> tuple[str, str]:
    """'/ns/name' -> ('/ns', 'name'); 'name' or '/name' -> ('/', 'name')."""
    namespace, _, name = ("/" + full.lstrip("/")).rpartition("/")
    return namespace or "/", name


def announce(participant, nodes: dict[str, tuple[list, list]], width: int = 24) -> DataWriter:
    """Publish the participant's nodes on ros_discovery_info as rmw does: ``nodes`` maps a full
    node name to (readers, writers), cyclonedds entities. The writer is returned: keep it alive
    (transient-local: late joiners get the last announcement)."""
    gid_t, node_t, info_t = INFO_TYPES[width]
    topic = Topic(participant, "ros_discovery_info", info_t, qos=DISCOVERY_QOS)
    writer = DataWriter(participant, topic, qos=DISCOVERY_QOS)
    infos = []
    for full, (readers, writers) in nodes.items():
        namespace, name = split_node(full)
        infos.append(node_t(namespace, name, [gid_t(gid_bytes(r.guid, width)) for r in readers],
                            [gid_t(gid_bytes(w.guid, width)) for w in writers]))
    writer.write(info_t(gid_t(gid_bytes(participant.guid, width)), infos))
    return writer
