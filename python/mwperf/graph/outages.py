"""A graph's link outages (``--link outage=START+LENGTH[,every=PERIOD]`` between its hosts): what
each outage cost every edge that crosses hosts, worked out as a stream point's flaps are
(resilience.flaps): from the edge's raw samples, which an outage implies (``--samples``: every
subscription writes its edges' arrivals, graph/plan.py), per window the sequence numbers sent in
the gap and of those the ones that never arrived, and the recovery (the window's end -> the
first arrival of a message sent at or after its start). An edge between nodes on one host has
no ``outages`` (the link's windows do not apply to it)."""

from pathlib import Path
from typing import Any

from ..emulation.links import flap_windows
from ..resilience import flaps
from ..restarts import read_samples

METHOD = "from the edge's raw samples (its samples_file)"


def attach(result: dict[str, Any], folder: Path, hosts: dict[str, str],
           window: tuple[int, int] | None, every_ns: int, sending_end_ns: int | None) -> None:
    """Give each edge of ``result`` between two hosts (``hosts``: node -> host) its
    ``outages`` (``folder``: where the samples files are, as the edges name them);
    ``sending_end_ns``: when the publishers stopped (CLOCK_MONOTONIC), None when unknown."""
    if window is None:
        return
    windows = flap_windows(window[0], window[1], every_ns, sending_end_ns or window[1])
    for edge in result["edges"]:
        if hosts.get(edge["from"]) == hosts.get(edge["to"]) or not edge.get("samples_file"):
            continue
        rows = read_samples(folder / edge["samples_file"])
        section = flaps(windows, every_ns, rows, sending_end_ns)
        section["method"] = METHOD
        edge["outages"] = section
