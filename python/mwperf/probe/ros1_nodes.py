"""Who publishes and subscribes to each topic of a ROS 1 system: the master's ``getSystemState``
(its XML-RPC API, Python's own xmlrpc: no rospy on this side). The probe asks before its window
and after, and takes both answers together, so a node present at either end is named; its own
node (``/mwperf_probe_...``) is left out."""

import http.client
import xmlrpc.client
from typing import Any

CALLER_ID = "/mwperf_probe_state"
TIMEOUT_S = 3.0

State = dict[str, tuple[set[str], set[str]]]
"""topic -> (publishing nodes, subscribing nodes)"""


class _Transport(xmlrpc.client.Transport):
    """xmlrpc.client's transport with a timeout: a master that stops answering cannot hang the
    probe."""

    def make_connection(self, host: Any) -> http.client.HTTPConnection:
        connection = super().make_connection(host)
        connection.timeout = TIMEOUT_S
        return connection


def system_state(master: str) -> State | None:
    """The master's view of every topic; None when it does not answer, answers an error or
    something else than a system state (the probe itself says why the master failed)."""
    try:
        proxy = xmlrpc.client.ServerProxy(master, transport=_Transport())
        code, _, (publishers, subscribers, _) = proxy.getSystemState(CALLER_ID)
        if code != 1:
            return None
        state: State = {}
        for index, table in enumerate((publishers, subscribers)):
            for topic, nodes in table:
                state.setdefault(str(topic), (set(), set()))[index].update(str(n) for n in nodes)
        return state
    except (OSError, xmlrpc.client.Error, ValueError, TypeError):
        return None


def merged(states: list[State | None], own_node: str | None) -> State | None:
    """The union of ``states`` (the ones that answered) without ``own_node``; None when none
    answered."""
    answered = [s for s in states if s is not None]
    if not answered:
        return None
    out: State = {}
    for state in answered:
        for topic, (pubs, subs) in state.items():
            mine = out.setdefault(topic, (set(), set()))
            mine[0].update(pubs)
            mine[1].update(subs)
    for pubs, subs in out.values():
        pubs.discard(own_node or "")
        subs.discard(own_node or "")
    return out


def endpoints(state: State | None, topic: str, index: int) -> list[dict[str, Any]] | None:
    """The probe document's ``publishers`` (index 0) or ``subscribers`` (1) of ``topic``:
    ``[{"node": "/talker"}, ...]`` in name order; None when the master was never asked."""
    if state is None:
        return None
    return [{"node": n} for n in sorted(state.get(topic, (set(), set()))[index])]
