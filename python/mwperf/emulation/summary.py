"""How a run's emulated link is shown to people under the result table: the spec and backend,
then per direction what the emulator did (only the causes that dropped something), then what an
outage cost (python/mwperf/resilience.py)."""

from typing import Any

from ..durations import format_ns


def render_link(result: dict[str, Any]) -> str:
    """The ``link`` lines of a single run's details; empty without --link. With a scenario's
    hosts and several links, every link and each of its wires' directions."""
    link = result.get("link")
    if not link:
        return ""
    links = link.get("links") or []
    if len(links) <= 1:
        text = f"link          {link['spec']}  ({link['backend']})\n"
        report = link.get("emulator") or {}
        text += "".join(_direction(f"  {name:<11}", report.get(name)) for name in ("up", "down"))
    else:
        hosts = ", ".join(f"{name} {host['address']}" for name, host in link["hosts"].items())
        text = f"links         {len(links)} ({link['backend']}); hosts {hosts}\n"
        for k in links:
            members = (f" [{' '.join(k['hosts'])}]" if k.get("segment") else "") + (
                " shared medium" if k.get("shared") else "")
            text += f"  {k['name']}{members}  {k['spec']}\n"
            for wire in k.get("emulator") or []:
                report = wire.get("report") or {}
                text += _direction(f"    {wire['from']} -> {wire['to']}  ", report.get("up"))
                text += _direction(f"    {wire['to']} -> {wire['from']}  ", report.get("down"))
    outage = (result.get("resilience") or {}).get("outage")
    if outage:
        recovery = outage["recovery_ns"]
        text += (f"  outage      {format_ns(outage['duration_ns'])}: sent {_n(outage['sent'])}  "
                 f"lost {_n(outage['lost'])}  recovery "
                 + ("none" if recovery is None else format_ns(recovery))
                 + f"  session {outage['session']} (bound "
                 f"{format_ns(outage['session_timeout_ns'])})\n")
    return text


def _direction(label: str, counts: dict[str, Any] | None) -> str:
    """One direction's line: what the emulator received and forwarded, and only the causes that
    dropped something; empty when it has no counters (netem)."""
    if not counts:
        return ""
    dropped = "  ".join(f"{cause} {n}" for cause, n in counts["dropped"].items() if n)
    extra = "  ".join(f"{key} {counts[key]}" for key in ("duplicated", "reordered",
                                                         "corrupted") if counts.get(key))
    late = counts.get("release_late_ns")
    return (f"{label}received {counts.get('received', '?')}  forwarded {counts['forwarded']}"
            + (f"  dropped: {dropped}" if dropped else "") + (f"  {extra}" if extra else "")
            + (f"  released late >50 µs: {late['over_50us']} (max {format_ns(late['max'])})"
               if late else "") + "\n")


def _n(value: int | None) -> str:
    return "?" if value is None else str(value)
