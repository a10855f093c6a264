"""Why a layer's boundary was not seen (docs/layers.md), from what the rows show and from what a
transport is known to hide: one answer for a point's ``layers`` section (parts/layers.py) and
for each edge of a graph (graph/layers.py)."""

from collections.abc import Collection

from .layers_rows import Row

KNOWN_UNSEEN = {
    "iceoryx2": ("no system call carries the message: iceoryx2 moves it through shared memory",
                 ("middleware_send", "kernel_network", "middleware_receive")),
    "fastdds": ("no system call carries the message: Fast DDS's shared-memory transport (on by "
                "default between processes of one host) moves it",
                ("middleware_send", "kernel_network", "middleware_receive")),
    "foxglove": ("a WebSocket client masks its frames (RFC 6455): the header is not in the bytes "
                 "its send call passes", ("middleware_send", "kernel_network")),
}
"""why a transport hides a moment, where it is known"""

NO_SEND_CALL = ("no system call carried the message's bytes (the middleware moves it through "
                "shared memory, or the sender's calls were not seen)")


def why_unseen(sent: Collection[Row], received: Collection[Row], transport: str
               ) -> dict[str, str]:
    """layer -> why its boundary was not seen: the sender's rows ``sent``, the receivers'
    ``received``, then what ``transport`` is known to hide (that reason wins)."""
    why: dict[str, str] = {}
    if sent and all(r.send_first is None for r in sent):
        why.update(dict.fromkeys(("middleware_send", "kernel_network", "middleware_receive"),
                                 NO_SEND_CALL))
    elif received and all(r.recv_last is None for r in received):
        reason = ("the message is split over several datagrams: the first carries the header, "
                  "the last cannot be recognised"
                  if any(r.recv_first is not None for r in received)
                  else "no receive system call carried the message's bytes")
        why.update(dict.fromkeys(("kernel_network", "middleware_receive"), reason))
    if transport in KNOWN_UNSEEN:
        reason, hidden = KNOWN_UNSEEN[transport]
        why.update(dict.fromkeys(hidden, reason))
    return why


def byte_stream_notes(received: Collection[Row]) -> list[str]:
    """The note a message received over several calls needs (a byte stream), if any was."""
    if any(r.recv_first is not None and r.recv_last is not None and r.recv_last > r.recv_first
           for r in received):
        return ["a message arrived over several receive calls (a byte stream): kernel and "
                "network ends at the call that completed its bytes"]
    return []
