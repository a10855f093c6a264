"""Resilience metrics of one run (seed 004's questions): how long until messages flowed, and
around a scheduled link outage how many messages it cost, how long the session took to recover,
and whether it recovered at all.

Who measures what: the link emulator reports the outage window it applied on CLOCK_MONOTONIC
(its epoch + the spec's offset; mwperf-linkem's report), which the agents also timestamp with
(network namespaces do not virtualise that clock). mwperf passes the window to the agents
(``--outage-window``), and each keeps constant-memory counts (crates/mwperf-core/src/stats/
outage.rs): the sender how many measured messages it sent inside the window, the measuring agent
how many of those were delivered at any time, and the first delivery at or after the window's end
of a message sent at or after its start. Everything else is derived here, from those numbers
only (no raw samples needed):

- lost: sent inside the window and never delivered (a ping counts a round trip that never came
  back; a reliable transport that retransmits afterwards loses nothing);
- recovery: window end -> that first delivery;
- session: ``survived`` (recovered within the bound), ``dead`` (nothing delivered within
  ``--session-timeout`` after the window, though the sender was still running by then), or
  ``undetermined`` (nothing delivered, but the sender stopped before the bound elapsed);
- time to connect (every run): discovery + the first echo, as the table's first-message column.

Repeated flaps (``outage=5s+2s,every=10s``): the agents count around the first window only (their
``--outage-window``, so the figures above are the first flap's); the control plane keeps the
measuring agent's raw samples (``--samples`` is implied) and works out every flap from them
(``flaps``): per flap, ``sent_in_gap`` = the sequence numbers between the last message sent
before the flap that arrived and the first sent after it came back that arrived, ``lost`` = of
those, the ones that never arrived (the sender's sequence numbers are consecutive: every one was
sent), and ``recovery_ns`` = the flap's end -> the first arrival of a message sent at or after
its start (as for the single outage). A flap that began after the last arrival, or whose link
came back after the sender stopped, says so in its ``note`` and has no figures.

An outage that missed the measurement (over before the first measured message, as when it is
scheduled inside the set-up, or begun after the sender finished) has nothing to say about loss
or recovery: those stay unknown, the session ``undetermined``, and ``missed_warning`` says why.
"""

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from .result_types import Resilience, ResilienceOutage
from .show.table import first_message_ns

SESSION_STATES = ("survived", "dead", "undetermined")


def section(discovery: Mapping[str, Any] | None, sender: Mapping[str, Any] | None,
            receiver: Mapping[str, Any] | None, session_timeout_ns: int,
            sender_stopped_ns: int | None) -> Resilience:
    """The run-result's ``resilience`` section.

    ``sender``/``receiver``: the ``outage`` sections of the sending and the measuring agent's
    reports (the same one for a ping; None when absent); ``sender_stopped_ns``: CLOCK_MONOTONIC
    when the sender had exited (None = unknown), which bounds what could still be observed.
    """
    counts = receiver or sender
    outage: ResilienceOutage | None = None
    if counts is not None:
        start, end = counts["start_ns"], counts["end_ns"]
        sent = (sender or {}).get("sent")
        delivered = (receiver or {}).get("delivered")
        first_after = (receiver or {}).get("first_after_ns")
        missed = _missed(sent, (receiver or {}).get("last_before_ns"), start, sender_stopped_ns)
        recovery = None if first_after is None or missed else first_after - end
        outage = {
            "start_ns": start, "end_ns": end, "duration_ns": end - start,
            "sent": sent, "delivered": delivered,
            "lost": (None if sent is None or delivered is None or missed
                     else max(sent - delivered, 0)),
            "last_before_ns": (receiver or {}).get("last_before_ns"),
            "recovery_ns": recovery,
            "session": session_state(recovery, end, session_timeout_ns, sender_stopped_ns),
            "session_timeout_ns": session_timeout_ns,
            "series_origin_ns": (receiver or {}).get("series_origin_ns"),
        }
    return {"time_to_connect_ns": first_message_ns(discovery), "outage": outage}


def flaps(windows: Sequence[tuple[int, int]], every_ns: int,
          rows: Sequence[tuple[int, int, int]], sender_stopped_ns: int | None
          ) -> dict[str, Any]:
    """The outage section's ``flaps``: each window's figures from the measuring agent's samples
    (``rows``: (seq, sent_ns, recv_ns)); see the module docstring."""
    received = {seq for seq, _, _ in rows}
    by_recv = sorted(rows, key=lambda r: r[2])
    last_recv = by_recv[-1][2] if by_recv else None
    items: list[dict[str, Any]] = []
    for start, end in windows:
        item: dict[str, Any] = {"start_ns": start, "end_ns": end, "sent_in_gap": None,
                                "lost": None, "first_message_after_ns": None,
                                "recovery_ns": None, "note": None}
        items.append(item)
        if last_recv is None:
            item["note"] = "no raw samples to work it out from (several topics: one file each)"
            continue
        if start > last_recv:
            item["note"] = "after the last arrival: nothing measured"
            continue
        if sender_stopped_ns is not None and end > sender_stopped_ns:
            item["note"] = "the sender stopped before the link came back"
            continue
        before = [seq for seq, sent, _ in rows if sent < start]
        after = [seq for seq, sent, _ in rows if sent >= end]
        first = next((r for r in by_recv if r[1] >= start), None)
        if first is not None:
            item["first_message_after_ns"] = first[2]
            item["recovery_ns"] = first[2] - end
        if not before or not after:
            item["note"] = ("no arrival sent before the flap" if not before
                            else "nothing sent after the flap arrived")
            continue
        gap = range(max(before) + 1, min(after))
        item["sent_in_gap"] = len(gap)
        item["lost"] = sum(1 for seq in gap if seq not in received)
    measured = [i for i in items if i["lost"] is not None]
    return {"every_ns": every_ns, "count": len(items), "measured": len(measured),
            "lost": sum(i["lost"] for i in measured) if measured else None,
            "method": "from the measuring agent's raw samples (samples.csv)", "items": items}


def session_state(recovery_ns: int | None, end_ns: int, timeout_ns: int,
                  sender_stopped_ns: int | None) -> Literal["survived", "dead", "undetermined"]:
    """survived / dead / undetermined (see the module docstring)."""
    if recovery_ns is not None and recovery_ns <= timeout_ns:
        return "survived"
    if recovery_ns is not None:
        return "dead"  # it came back, but later than the bound: dead by the definition
    if sender_stopped_ns is None or sender_stopped_ns < end_ns + timeout_ns:
        return "undetermined"
    return "dead"


def _missed(sent: int | None, last_before_ns: int | None, start_ns: int,
            sender_stopped_ns: int | None) -> str | None:
    """Why the outage could not touch the measured messages, or None when it could."""
    if sent == 0 and last_before_ns is None:
        return "before"  # nothing measured was sent in it nor delivered before it
    if sender_stopped_ns is not None and sender_stopped_ns <= start_ns:
        return "after"
    return None


def missed_warning(section_: Mapping[str, Any], sender: Mapping[str, Any] | None,
                   receiver: Mapping[str, Any] | None, sender_stopped_ns: int | None
                   ) -> tuple[str, str, str] | None:
    """(code, message, hint) when the outage missed the measurement, else None."""
    outage = section_.get("outage")
    if outage is None:
        return None
    when = _missed((sender or {}).get("sent"), (receiver or {}).get("last_before_ns"),
                   outage["start_ns"], sender_stopped_ns)
    if when is None:
        return None
    what = ("was over before the first measured message" if when == "before"
            else "began after the sender had finished")
    return ("outage-missed", f"the link outage {what}: no loss, recovery or session figures",
            "outage=START+LENGTH counts from when the link came up, before daemons, discovery "
            "and warm-up: start it later, inside the measured duration")
