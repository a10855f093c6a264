"""``mwperf encodings``: the size of one message and its encode/decode time per encoding — CDR
(ROS 2's wire format), ROS 1 serialization, JSON as rosbridge sends it, and CBOR — with real
serializers: rosbags (CDR and ROS 1, from the message definitions below), Python's json and
cbor2. This is the table of the bridge latency comparison (intdash_ros2bridge vs
rosbridge_server, shared/seeds/002) for this machine, beside that paper's figures.

The message types are performance_test's, as that paper lists them: Struct256 (16 Struct16 of
16 one-byte elements), Array1k and Array64k (a byte array), PointCloud512k (a PointCloud2 of
524 288 data bytes without the fields list), each with ``int64 time`` and ``uint64 id``.

JSON as rosbridge sends it: ``{"op": "publish", "topic": ..., "msg": ...}`` with
``json.dumps``' defaults; a ``uint8[]`` array is one base64 string (rosbridge's binary
encoding), while a ``byte`` is a one-byte ``bytes`` value in ROS 2 and goes out as a
one-character string — a zero byte escaped as ``"\\u0000"``, ten characters per element with
its separator, which is why the paper's Array1k is ten times larger as JSON. This rule is
inferred from the paper's sizes (no ROS 2 or rosbridge here to ask): Array1k and PointCloud512k
reproduce them within a few per cent (tests/test_encodings.py). The paper does not name
Struct16's sixteen one-byte members; they are ``m0``..``mf`` here, and each name's length adds
to every element of Struct256's JSON.
CBOR: the same message with every byte array as one CBOR byte string.
"""
from __future__ import annotations

import base64
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

HEADER_DEF = "builtin_interfaces/Time stamp\nstring frame_id"
DEFINITIONS: dict[str, str] = {
    "Struct16": "\n".join(f"byte m{i:x}" for i in range(16)),
    "Struct256": "\n".join(f"Struct16 struct16{i:x}" for i in range(16)) + "\nint64 time\nuint64 id",
    "Array1k": "byte[1024] array\nint64 time\nuint64 id",
    "Array64k": "byte[65536] array\nint64 time\nuint64 id",
    "PointCloud512k": ("std_msgs/Header header\nuint32 height\nuint32 width\nbool is_bigendian\n"
                       "uint32 point_step\nuint32 row_step\nuint8[524288] data\nbool is_dense\n"
                       "int64 time\nuint64 id"),
}
PAYLOADS = ("Struct256", "Array1k", "Array64k", "PointCloud512k")
PACKAGE = "mwperf_msgs/msg/"
ENCODINGS = ("cdr", "ros1", "rosbridge-json", "cbor")
KIB = 1024
PAPER_BYTES: dict[str, dict[str, float]] = {
    "Struct256": {"cdr": 583, "rosbridge-json": 5.89 * KIB},
    "Array1k": {"cdr": 1.06 * KIB, "rosbridge-json": 10.10 * KIB},
    "PointCloud512k": {"cdr": 512.27 * KIB, "rosbridge-json": 683.37 * KIB},
}
"""the paper's sizes of one bridged message (intdash_ros2bridge's own framing around CDR,
rosbridge_server's JSON); its 'KByte' is 1024 bytes (PointCloud512k's 683.37 KByte is the
base64 of 524 288 bytes only in KiB)"""


@dataclass(frozen=True)
class Measured:
    """One payload in one encoding: its size and the median encode/decode time."""

    payload: str
    encoding: str
    bytes: int
    encode_ns: float
    decode_ns: float
    paper_bytes: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"payload": self.payload, "encoding": self.encoding, "bytes": self.bytes,
                "encode_ns": round(self.encode_ns), "decode_ns": round(self.decode_ns),
                "paper_bytes": self.paper_bytes}


def typestore() -> Any:
    """A ROS 2 (Humble) type store with the payload types registered."""
    from rosbags.typesys import Stores, get_types_from_msg, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    types: dict[str, Any] = {}
    for name, text in DEFINITIONS.items():
        types.update(get_types_from_msg(text.replace("Struct16 ", f"{PACKAGE}Struct16 "),
                                        PACKAGE + name))
    store.register(types)
    return store


def message(store: Any, name: str) -> Any:
    """A message of type ``name`` as performance_test sends it: zero-filled data (JSON's size
    depends on the content: a zero byte is escaped as \\u0000), a time and an id."""
    types = store.types
    if name == "Struct256":
        parts = {f"struct16{i:x}": types[PACKAGE + "Struct16"](**{f"m{j:x}": 0 for j in range(16)})
                 for i in range(16)}
        return types[PACKAGE + name](**parts, time=1_700_000_000_000_000_000, id=42)
    if name.startswith("Array"):
        size = {"Array1k": 1024, "Array64k": 65536}[name]
        return types[PACKAGE + name](array=np.zeros(size, dtype=np.uint8),
                                     time=1_700_000_000_000_000_000, id=42)
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](sec=1_700_000_000, nanosec=5), frame_id="lidar")
    return types[PACKAGE + name](header=header, height=1, width=32768, is_bigendian=False,
                                 point_step=16, row_step=524288,
                                 data=np.zeros(524288, dtype=np.uint8), is_dense=True,
                                 time=1_700_000_000_000_000_000, id=42)


def to_plain(store: Any, msg: Any, typename: str, binary: Callable[[bytes, bool], Any]) -> Any:
    """The message as dicts and lists; ``binary(raw, one_string)`` encodes a byte array:
    ``one_string`` for uint8[] (rosbridge: one base64 string), per element for byte[]."""
    fields = store.fielddefs[typename][1]
    out: dict[str, Any] = {}
    for field, (kind, detail) in fields:
        value = getattr(msg, field)
        out[field] = _plain_value(store, value, kind, detail, binary)
    return out


def _plain_value(store: Any, value: Any, kind: int, detail: Any,
                 binary: Callable[[bytes, bool], Any]) -> Any:
    from rosbags.interfaces import Nodetype

    if kind == Nodetype.NAME:
        return to_plain(store, value, detail, binary)
    if kind in (Nodetype.ARRAY, Nodetype.SEQUENCE):
        (inner_kind, inner), _ = detail
        if inner_kind == Nodetype.BASE and inner[0] in ("uint8", "octet", "byte", "char"):
            return binary(np.asarray(value, dtype=np.uint8).tobytes(), inner[0] == "uint8")
        return [_plain_value(store, v, inner_kind, inner, binary) for v in value]
    if kind == Nodetype.BASE and detail[0] in ("byte", "octet", "char"):
        return binary(bytes([int(value)]), False)
    if isinstance(value, np.generic):
        return value.item()
    return value


def rosbridge_json(store: Any, msg: Any, typename: str, topic: str) -> bytes:
    def binary(raw: bytes, one_string: bool) -> Any:
        if one_string:
            return base64.b64encode(raw).decode("ascii")
        text = raw.decode("latin-1")  # ROS 2 gives a byte as a bytes value: one character each
        return text if len(raw) == 1 else list(text)

    body = {"op": "publish", "topic": topic, "msg": to_plain(store, msg, typename, binary)}
    return json.dumps(body).encode()


def cbor(store: Any, msg: Any, typename: str) -> bytes:
    import cbor2

    return cbor2.dumps(to_plain(store, msg, typename, lambda raw, _: raw))


def _median_ns(action: Callable[[], Any], budget_s: float) -> float:
    """The median time of one call over repeated batches (about ``budget_s`` in all)."""
    start = time.perf_counter()
    action()
    once = max(time.perf_counter() - start, 1e-7)
    per_batch = max(1, int(budget_s / 7 / once))
    samples = []
    for _ in range(7):
        t0 = time.perf_counter_ns()
        for _ in range(per_batch):
            action()
        samples.append((time.perf_counter_ns() - t0) / per_batch)
    return statistics.median(samples)


def measure(payloads: tuple[str, ...] = PAYLOADS, budget_s: float = 0.2) -> list[Measured]:
    """Every payload in every encoding."""
    import cbor2

    store = typestore()
    found = []
    for name in payloads:
        typename = PACKAGE + name
        msg = message(store, name)
        topic = f"/{name}"
        codecs: dict[str, tuple[Callable[[], bytes], Callable[[bytes], Any]]] = {
            "cdr": (lambda msg=msg, typename=typename: store.serialize_cdr(msg, typename),
                    lambda raw, typename=typename: store.deserialize_cdr(raw, typename)),
            "ros1": (lambda msg=msg, typename=typename: store.serialize_ros1(msg, typename),
                     lambda raw, typename=typename: store.deserialize_ros1(raw, typename)),
            "rosbridge-json": (lambda msg=msg, typename=typename, topic=topic:
                               rosbridge_json(store, msg, typename, topic), json.loads),
            "cbor": (lambda msg=msg, typename=typename: cbor(store, msg, typename), cbor2.loads),
        }
        for encoding, (encode, decode) in codecs.items():
            raw = bytes(encode())
            found.append(Measured(name, encoding, len(raw), _median_ns(encode, budget_s),
                                  _median_ns(lambda r=raw, d=decode: d(r), budget_s),
                                  PAPER_BYTES.get(name, {}).get(encoding)))
    return found


def render(rows: list[Measured]) -> str:
    """An aligned table, one row per payload and encoding."""
    from .durations import format_ns
    from .sizes import format_bytes

    head = ("payload", "encoding", "size", "x CDR", "encode", "decode", "paper (seed 002)")
    cdr = {r.payload: r.bytes for r in rows if r.encoding == "cdr"}
    cells = [(r.payload, r.encoding, format_bytes(r.bytes), f"{r.bytes / cdr[r.payload]:.2f}",
              format_ns(r.encode_ns), format_ns(r.decode_ns),
              "" if r.paper_bytes is None else format_bytes(int(r.paper_bytes)))
             for r in rows]
    widths = [max(len(c[i]) for c in [head, *cells]) for i in range(len(head))]
    return "".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() + "\n"
                   for row in [head, *cells])
