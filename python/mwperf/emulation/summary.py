"""How a run's emulated link is shown to people under the result table: the spec and backend,
then per direction what the emulator did (only the causes that dropped something), then what an
outage cost (python/mwperf/resilience.py)."""

from typing import Any

from ..durations import format_ns


def render_link(result: dict[str, Any]) -> str:
    """The ``link`` lines of a single run's details; empty without --link."""
    link = result.get("link")
    if not link:
        return ""
    text = f"link          {link['spec']}  ({link['backend']})\n"
    report = link.get("emulator") or {}
    for name in ("up", "down"):
        counts = report.get(name)
        if not counts:
            continue
        dropped = "  ".join(f"{cause} {n}" for cause, n in counts["dropped"].items() if n)
        extra = "  ".join(f"{key} {counts[key]}" for key in ("duplicated", "reordered",
                                                             "corrupted") if counts.get(key))
        late = counts.get("release_late_ns")
        text += (f"  {name:<11} received {counts.get('received', '?')}  forwarded "
                 f"{counts['forwarded']}" + (f"  dropped: {dropped}" if dropped else "")
                 + (f"  {extra}" if extra else "")
                 + (f"  released late >50 µs: {late['over_50us']} (max "
                    f"{format_ns(late['max'])})" if late else "") + "\n")
    outage = (result.get("resilience") or {}).get("outage")
    if outage:
        recovery = outage["recovery_ns"]
        text += (f"  outage      {format_ns(outage['duration_ns'])}: sent {_n(outage['sent'])}  "
                 f"lost {_n(outage['lost'])}  recovery "
                 + ("none" if recovery is None else format_ns(recovery))
                 + f"  session {outage['session']} (bound "
                 f"{format_ns(outage['session_timeout_ns'])})\n")
    return text


def _n(value: int | None) -> str:
    return "?" if value is None else str(value)
