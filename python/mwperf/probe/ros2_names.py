"""ROS 2 names on DDS and back (the rmw conventions every ROS 2 DDS layer follows).

A topic ``/x/y`` is the DDS topic ``rt/x/y``; a service ``/x`` is the pair ``rq/xRequest``
(client -> server) and ``rr/xReply`` (server -> client); a message type ``pkg/msg/Type`` is the
DDS type ``pkg::msg::dds_::Type_`` and a service type ``pkg/srv/Type`` the pair
``pkg::srv::dds_::Type_Request_`` / ``Type_Response_``. A DDS topic without these prefixes is a
plain DDS topic (``ddsperf``'s ``DDSPerfRDataKS``): it keeps its DDS name.
"""

from ..errors import UsageError

TOPIC_PREFIX = "rt/"
REQUEST_PREFIX, REQUEST_SUFFIX = "rq/", "Request"
REPLY_PREFIX, REPLY_SUFFIX = "rr/", "Reply"
DISCOVERY_INFO = "ros_discovery_info"
"""the topic where ROS 2 nodes say which DDS endpoints are theirs"""


def ros_topic(dds_topic: str) -> str | None:
    """``rt/x/y`` -> ``/x/y``; None for a DDS topic that is not a ROS 2 topic."""
    if dds_topic.startswith(TOPIC_PREFIX) and len(dds_topic) > len(TOPIC_PREFIX):
        return "/" + dds_topic[len(TOPIC_PREFIX):]
    return None


def service_of(dds_topic: str) -> tuple[str, str] | None:
    """(service name, ``request`` | ``reply``) of a service topic, else None."""
    for prefix, suffix, side in ((REQUEST_PREFIX, REQUEST_SUFFIX, "request"),
                                 (REPLY_PREFIX, REPLY_SUFFIX, "reply")):
        if dds_topic.startswith(prefix) and dds_topic.endswith(suffix):
            name = dds_topic[len(prefix):-len(suffix)]
            if name:
                return "/" + name, side
    return None


def is_ros_internal(dds_topic: str) -> bool:
    """Topics the probe does not report as topics: discovery info, services, DDS built-ins."""
    return (dds_topic == DISCOVERY_INFO or service_of(dds_topic) is not None
            or dds_topic.startswith("DCPS"))


def ros_type(dds_type: str) -> str:
    """``pkg::msg::dds_::Type_`` -> ``pkg/msg/Type``; ``pkg::srv::dds_::Type_Request_`` (or
    ``_Response_``) -> ``pkg/srv/Type``; any other type name is returned as it is."""
    parts = dds_type.split("::")
    if len(parts) >= 4 and parts[-2] == "dds_" and parts[-1].endswith("_"):
        name = parts[-1][:-1]
        if parts[-3] in ("srv", "action"):
            for suffix in ("_Request", "_Response"):
                name = name.removesuffix(suffix)
        return "/".join(parts[:-2] + [name])
    return dds_type


def dds_topic_of(name: str) -> str:
    """What the user named, as the DDS topic to ask the agent for: a ROS name (``/chatter``)
    becomes ``rt/chatter``; anything else is a DDS name already (``rt/chatter``,
    ``DDSPerfRDataKS``). UsageError for a ROS name that cannot be one."""
    if not name.startswith("/"):
        if not name or any(c.isspace() for c in name):
            raise UsageError(f"TOPICS: {name!r} is not a topic name; give ROS 2 names such as "
                             f"/chatter or DDS names such as rt/chatter")
        return name
    body = name[1:]
    if not body or body.endswith("/") or "//" in body or any(c.isspace() for c in body):
        raise UsageError(f"TOPICS: {name!r} is not a ROS 2 topic name; give names such as "
                         f"/chatter or /robot/scan, or DDS names such as rt/chatter")
    return TOPIC_PREFIX + body


def node_name(namespace: str, name: str) -> str:
    """The full node name: namespace ``/`` and name ``talker`` -> ``/talker``."""
    return namespace.rstrip("/") + "/" + name
