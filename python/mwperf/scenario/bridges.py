"""Bridged points ranked by the latency their bridge adds (seed 002: which bridge costs least).

A bridge's cost is a same-run difference: at each point of the sweep (payload, rate and every
other axis alike), a bridged path's response-time p50 minus the p50 of the direct path of the
same transport (``bridge: direct``: the same middleware end to end over the same hosts and
links). Repetitions are combined by their median. Bridges are ranked by that added p50,
cheapest first; each entry also carries the added p99 and the share of the offered rate the
bridge delivered (a #192-style shortfall shows there).
"""

import statistics
from dataclasses import dataclass

from ..config import default
from ..durations import format_ns, parse_duration
from .observe import Observation

DIRECT = "direct"


@dataclass(frozen=True)
class BridgeCost:
    """One bridged path at one point, against its direct path."""

    bridge: str
    transport: str
    p50_ns: float | None
    direct_p50_ns: float | None
    p99_ns: float | None
    direct_p99_ns: float | None
    delivered: float | None
    """achieved / offered message rate through the bridge (None at rate 0 or unmeasured)"""

    @property
    def added_p50_ns(self) -> float | None:
        if self.p50_ns is None or self.direct_p50_ns is None:
            return None
        return self.p50_ns - self.direct_p50_ns

    @property
    def added_p99_ns(self) -> float | None:
        if self.p99_ns is None or self.direct_p99_ns is None:
            return None
        return self.p99_ns - self.direct_p99_ns


@dataclass(frozen=True)
class BridgeRanking:
    """The bridges at one point, least added p50 first (unmeasured ones last)."""

    point: str
    costs: tuple[BridgeCost, ...]

    def line(self) -> str:
        """'100 Hz Array1k: zenoh-ros2dds +1.2 ms (p99 +3 ms, 100 % delivered) < ...'."""
        parts = []
        for c in self.costs:
            if c.p50_ns is None:
                parts.append(f"{c.bridge} ({c.transport}) not measured")
                continue
            if c.direct_p50_ns is None:
                parts.append(f"{c.bridge} ({c.transport}) p50 {format_ns(c.p50_ns)}, direct "
                             f"path not measured (no difference)")
                continue
            delivered = f", {100 * c.delivered:.0f} % delivered" if c.delivered is not None else ""
            parts.append(f"{c.bridge} ({c.transport}) {_signed(c.added_p50_ns)} "
                         f"(p50 {format_ns(c.p50_ns)} vs direct {format_ns(c.direct_p50_ns)}; "
                         f"p99 {_signed(c.added_p99_ns)}{delivered})")
        return f"{self.point}: " + " < ".join(parts)

    def to_dict(self) -> dict[str, object]:
        return {"point": self.point,
                "bridges": [dict(c.__dict__, added_p50_ns=c.added_p50_ns,
                                 added_p99_ns=c.added_p99_ns) for c in self.costs]}


def _signed(ns: float | None) -> str:
    if ns is None:
        return "?"
    return ("+" if ns >= 0 else "-") + format_ns(abs(ns))


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def rank_bridges(observations: list[Observation]) -> list[BridgeRanking]:
    """One ranking per point (all axes but bridge and transport) that has a bridged path."""
    groups: dict[tuple, dict[tuple[str, str], list[Observation]]] = {}
    names: dict[tuple, str] = {}
    for obs in observations:
        axes = dict(obs.point.axes)
        bridge = axes.get("bridge") or obs.point.options.get("bridge")
        if bridge is None:
            continue
        key = tuple((n, v) for n, v in obs.point.axes if n not in ("bridge", "transport"))
        key += (("rate", str(obs.row.rate)), ("payload", obs.row.payload),
                ("mode", obs.row.mode))
        groups.setdefault(key, {}).setdefault((str(bridge), obs.row.transport), []).append(obs)
        names.setdefault(key, _point_name(obs))
    rankings = []
    for key, paths in groups.items():
        costs = []
        for (bridge, transport), found in paths.items():
            if bridge == DIRECT:
                continue
            direct = paths.get((DIRECT, transport), [])
            costs.append(BridgeCost(
                bridge, transport, _median([o.row.p50_ns for o in found if o.row.p50_ns]),
                _median([o.row.p50_ns for o in direct if o.row.p50_ns]),
                _median([o.row.p99_ns for o in found if o.row.p99_ns]),
                _median([o.row.p99_ns for o in direct if o.row.p99_ns]),
                _median([d for d in (_delivered(o) for o in found) if d is not None])))
        if costs:
            costs.sort(key=lambda c: (c.added_p50_ns is None, c.added_p50_ns or 0.0))
            rankings.append(BridgeRanking(names[key], tuple(costs)))
    return rankings


def _delivered(obs: Observation) -> float | None:
    """Replies that arrived / messages the sender was asked to send (rate x topics x duration,
    at least --min-samples per topic, or the count per topic), as the result's
    bridge.delivered_ratio (bridges/rate.py)."""
    options, row = obs.point.options, obs.row
    if row.rate <= 0 or row.count is None:
        return None
    topics = int(options.get("topics") or default("topics"))
    if options.get("count") is not None:
        planned = float(options["count"]) * topics
    else:
        per_topic = row.rate * parse_duration(str(options.get("duration") or default("duration"))) / 1e9
        planned = topics * max(per_topic, float(options.get("min_samples") or 0))
    return row.count / planned if planned else None


def _point_name(obs: Observation) -> str:
    """The point without its transport and bridge: 'roundtrip 100 Hz Array1k link=...'."""
    label = obs.point.label()
    words = [w for w in label.split(" ") if not w.startswith(("bridge=", "transport="))]
    if words and words[0] == obs.point.transport:
        words = words[1:]
    return " ".join(words)
