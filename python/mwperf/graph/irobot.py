"""iRobot ros2-performance topology JSON files, read as they are (its parser's fields:
``nodes[].node_name``, ``number``, ``executor_id``, ``publishers[].topic_name / msg_type /
period_ms | freq_hz / msg_size``, ``subscribers[].topic_name``, ``clients[].service_name /
srv_type / period_ms | freq_hz``, ``servers[].service_name / srv_type``, ``qos_*``).

A message's size is what iRobot's tool reports: the bytes of its ``data`` (its own 20-byte
header, like mwperf's header, is not counted): the fixed array of the stamped types, or
``msg_size`` for ``stamped_vector``. Its subscribers do no work and publish nothing (the tool
has no causal chains): each becomes a subscriber with no busy loop. Late and too late keep its
defaults (min(20 % of the period, 5 ms), min(100 %, 50 ms)).

Services as iRobot's tool runs them: a server answers at once (no work) with a response of its
srv type; a client calls on its timer with one call outstanding at most (its node's
``m_client_lock``: a timer tick while a call is pending does nothing) and gives up after 1 s
(its ``wait_for_service`` bound). Request and response sizes are the srv type's ``data`` bytes:
``stamped10b`` (irobot_interfaces_plugin/srv/Stamped10b.srv: ``byte[10] data`` both ways, the
only srv type it ships), a name of its message types (``stamped1kb``: 1024) the bytes that
name says, any other srv type ``SRV_DEFAULT_BYTES``.
"""

import json
import math
from dataclasses import replace
from typing import Any

from ..errors import UsageError
from .check import check_graph
from .model import Client, Graph, Node, Publisher, Qos, Server, Subscriber

SIZES = {
    "stamped_int64": 8, "stamped3_float32": 12, "stamped4_float32": 16, "stamped4_int32": 16,
    "stamped9_float32": 36, "stamped12_float32": 48, "stamped10b": 10, "stamped100b": 100,
    "stamped250b": 250, "stamped1kb": 1024, "stamped10kb": 10240, "stamped50kb": 51200,
    "stamped100kb": 102400, "stamped250kb": 256000, "stamped500kb": 512000,
    "stamped600kb": 614400, "stamped1mb": 1048576, "stamped4mb": 4194304,
    "stamped5mb": 5120000, "stamped8mb": 8388608,
}
"""irobot_interfaces_plugin's message types -> data bytes (stamped_vector: its msg_size)"""
VECTOR = "stamped_vector"
RELIABILITY = {"reliable": "reliable", "best_effort": "best-effort"}
MIN_PERIOD_NS = 10_000
"""100 kHz, the graph file's limit too"""
MAX_COPIES = 1000
DURABILITY = {"volatile": "volatile", "transient_local": "transient-local"}
SRV_DEFAULT_BYTES = 10
"""a srv type whose size its name does not say: Stamped10b's, iRobot's only srv type"""
CALL_TIMEOUT_NS = 1_000_000_000
"""iRobot's client waits 1 s for its service"""


def parse_irobot(text: str, where: str, name: str, checked: bool = True) -> Graph:
    """A graph from iRobot topology JSON ``text`` (``where``: the file, for errors);
    ``checked``: on its own, else as a part of several files (combine.py checks the whole)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{where}: not valid JSON: {exc}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("nodes"), list):
        raise UsageError(f"{where}: an iRobot topology is an object with a 'nodes' list")
    nodes: list[Node] = []
    for index, raw in enumerate(doc["nodes"]):
        nodes += _nodes(where, index, raw)
    graph = Graph(name, tuple(nodes), source=where,
                  description=f"iRobot ros2-performance topology {name}")
    if checked:
        check_graph(graph)
    return graph


def _nodes(where: str, index: int, raw: Any) -> list[Node]:
    if not isinstance(raw, dict) or not isinstance(raw.get("node_name"), str):
        raise UsageError(f"{where}: nodes[{index}]: needs a node_name")
    name = raw["node_name"]
    if raw.get("node_namespace"):
        name = f"{str(raw['node_namespace']).strip('/')}/{name}"
    what = f"{where}: node '{name}'"
    publishers = tuple(_publisher(what, p) for p in _list(what, raw, "publishers"))
    subscribers = tuple(Subscriber(_topic(what, s), qos=_qos(what, s))
                        for s in _list(what, raw, "subscribers"))
    servers = tuple(_server(what, s) for s in _list(what, raw, "servers"))
    clients = tuple(_client(what, c) for c in _list(what, raw, "clients"))
    group = str(raw["executor_id"]) if "executor_id" in raw else None
    node = Node(name, publishers, subscribers, group=group, servers=servers, clients=clients)
    number = raw.get("number", 1)
    if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= MAX_COPIES:
        raise UsageError(f"{what}: number '{number}' is not a whole number from 1 to "
                         f"{MAX_COPIES}")
    if number == 1:
        return [node]
    return [replace(node, name=f"{name}_{i}", copy_of=name) for i in range(1, number + 1)]


def _list(what: str, raw: dict[str, Any], key: str) -> list[dict[str, Any]]:
    items = raw.get(key) or []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise UsageError(f"{what}: {key} must be a list of objects")
    return items


def _topic(what: str, entity: dict[str, Any]) -> str:
    topic = entity.get("topic_name")
    if not isinstance(topic, str) or not topic:
        raise UsageError(f"{what}: an entity without topic_name")
    return topic


def _service(what: str, entity: dict[str, Any]) -> str:
    service = entity.get("service_name")
    if not isinstance(service, str) or not service:
        raise UsageError(f"{what}: a client or server without service_name")
    return service


def _srv_bytes(here: str, raw: dict[str, Any]) -> int:
    """A srv type's request (and response) data bytes (the module doc)."""
    srv_type = raw.get("srv_type")
    if not isinstance(srv_type, str) or not srv_type:
        raise UsageError(f"{here}: needs a srv_type (e.g. stamped10b)")
    return SIZES.get(srv_type, SRV_DEFAULT_BYTES)


def _server(what: str, raw: dict[str, Any]) -> Server:
    service = _service(what, raw)
    _srv_bytes(f"{what}, server of '{service}'", raw)
    return Server(service)  # its response the request's size: one srv type per service


def _client(what: str, raw: dict[str, Any]) -> Client:
    service = _service(what, raw)
    here = f"{what}, client of '{service}'"
    return Client(service, _period_ns(here, raw), _srv_bytes(here, raw), in_flight=1,
                  timeout_ns=CALL_TIMEOUT_NS)


def _publisher(what: str, raw: dict[str, Any]) -> Publisher:
    topic = _topic(what, raw)
    here = f"{what}, publisher of '{topic}'"
    period_ns = _period_ns(here, raw)
    msg_type = raw.get("msg_type")
    if msg_type == VECTOR:
        size = raw.get("msg_size", 0)
        if not isinstance(size, int) or size < 0:
            raise UsageError(f"{here}: msg_size '{size}' must be a whole number of bytes")
    elif msg_type in SIZES:
        size = SIZES[msg_type]
    else:
        raise UsageError(f"{here}: msg_type '{msg_type}' is not one of irobot_interfaces_plugin's "
                         f"({', '.join([*SIZES, VECTOR])})")
    return Publisher(topic, period_ns, size, _qos(here, raw))


def _period_ns(here: str, raw: dict[str, Any]) -> int:
    """A timer's period from ``freq_hz`` or ``period_ms``, as iRobot's parser reads them."""
    if "freq_hz" in raw:
        freq = raw["freq_hz"]
        if not isinstance(freq, (int, float)) or not math.isfinite(freq) or freq <= 0:
            raise UsageError(f"{here}: freq_hz '{freq}' must be a number > 0")
        period_ns = int(1e6 / freq) * 1000  # as iRobot's parser: whole microseconds
    elif "period_ms" in raw:
        period = raw["period_ms"]
        if not isinstance(period, (int, float)) or not math.isfinite(period) or period <= 0:
            raise UsageError(f"{here}: period_ms '{period}' must be a number > 0")
        period_ns = round(period * 1e6)
    else:
        raise UsageError(f"{here}: needs period_ms or freq_hz")
    if period_ns < MIN_PERIOD_NS:
        raise UsageError(f"{here}: a period of {period_ns} ns; at most 100 kHz (10 us)")
    return period_ns


def _qos(what: str, raw: dict[str, Any]) -> Qos:
    reliability = raw.get("qos_reliability")
    durability = raw.get("qos_durability")
    history = raw.get("qos_history")
    depth = raw.get("qos_depth")
    for key, value, table in (("qos_reliability", reliability, RELIABILITY),
                              ("qos_durability", durability, DURABILITY)):
        if value not in (None, "system_default", *table):
            raise UsageError(f"{what}: {key} '{value}'; allowed: system_default, "
                             f"{', '.join(table)}")
    if history not in (None, "system_default", "keep_last", "keep_all"):
        raise UsageError(f"{what}: qos_history '{history}'; allowed: system_default, keep_last, "
                         "keep_all")
    hist = None
    if history == "keep_all":
        hist = "keep-all"
    elif history == "keep_last" or depth is not None:
        hist = f"keep-last:{int(depth)}" if isinstance(depth, int) and depth > 0 else "keep-last"
    return Qos(RELIABILITY.get(reliability or ""), hist, DURABILITY.get(durability or ""))
