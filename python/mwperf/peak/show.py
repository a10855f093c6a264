"""A peak search as text: each walk's trials in the order run, then the peak."""

from __future__ import annotations

from typing import Any


def render(peak: dict[str, Any]) -> str:
    graph = peak["request"]["graph"]
    lines = []
    for number, walk in enumerate(peak["walks"], 1):
        lines.append(f"walk {number}: {walk['verdict']}"
                     + (f", peak {_rate(walk['peak'], graph)}" if walk["peak"] else ""))
        for t in walk["trials"]:
            lines.append(f"  {t['step']:<6} {_rate(t['rate'], graph):>12}  "
                         f"{'passed' if t['passed'] else 'FAILED':<6}  {t['why']}"
                         + (f"  [{t['run_id']}]" if t.get("run_id") else ""))
    if peak["peak"] is None:
        lines.append(f"peak: none found ({peak['how']}; see each walk's verdict)")
    else:
        spread = [p for p in peak["peaks"] if p is not None]
        span = (f", walks {_rate(min(spread), graph)}..{_rate(max(spread), graph)}"
                if len(spread) > 1 else "")
        what = (f" on {peak['request']['topic']}'s publishers" if peak["request"].get("topic")
                else " on every publisher" if graph else "")
        lines.append(f"peak: {_rate(peak['peak'], graph)}{what} ({peak['how']}{span}); "
                     f"loss <= {peak['request']['max_loss']:g}%, p99 <= "
                     f"{'the period' if peak['request']['p99_limit_ns'] is None else 'the limit'}")
    return "".join(line + "\n" for line in lines)


def _rate(rate: float | None, graph: bool) -> str:
    if rate is None:
        return "-"
    return f"x{rate:.6g}" if graph else f"{rate:.6g} Hz"
