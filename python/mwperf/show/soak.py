"""The gates and the resource growth as text: under a single point's table (``mwperf run``)
and in a sweep's summary."""

from __future__ import annotations

from typing import Any

from ..sizes import format_bytes


def gate_lines(gates: list[dict[str, Any]]) -> list[str]:
    """'gate rss-growth<=2MiB: passed  largest pong 12 KiB over 54 s ...' per gate."""
    return [f"gate {g['gate']}{_source(g)}: {'passed' if g['passed'] else 'FAILED'}  "
            f"{g['what']}" for g in gates]


def _source(gate: dict[str, Any]) -> str:
    """' (mont_blanc_rpi3.json resources.cpu[%])' for a target file's gate, else ''."""
    return f" ({gate['source']})" if gate.get("source") else ""


def _signed_bytes(value: float | None) -> str:
    if value is None:
        return "\u2014"
    return ("-" if value < 0 else "+") + format_bytes(int(round(abs(value))))


def _signed(value: float | None) -> str:
    return "\u2014" if value is None else f"{value:+.2f}"


def growth_lines(resources: dict[str, Any] | None) -> list[str]:
    """Per process: its growth over the steady state (RSS, fds, threads, live heap) and its
    last RSS; nothing when no process was sampled."""
    processes = (resources or {}).get("processes") or []
    if not processes:
        return []
    first = next((p["growth"] for p in processes if p["growth"].get("start_ns") is not None),
                 None)
    span = (f"{(first['end_ns'] - first['start_ns']) / 1e9:.0f} s of steady state, "
            f"{first['samples']} samples" if first else "too short a steady state to fit")
    out = [f"resources (sampled each second; growth = least-squares slope x duration over "
           f"{span}):"]
    for p in processes:
        g, series = p["growth"], p["series"]
        last = series[-1] if series else {}
        rss = format_bytes(last["rss_bytes"]) if last.get("rss_bytes") is not None else "\u2014"
        heap = (f", live heap {_signed_bytes(g.get('live_heap_bytes'))}"
                if any(s.get("live_heap_bytes") is not None for s in series) else "")
        out.append(f"  {p['name']:<14} RSS {rss:>10} growth {_signed_bytes(g.get('rss_bytes'))}"
                   f", fds {last.get('fds', chr(0x2014))} ({_signed(g.get('fds'))}), threads "
                   f"{last.get('threads', chr(0x2014))} ({_signed(g.get('threads'))}){heap}")
    return out


def render(result: dict[str, Any]) -> str:
    """The growth lines and the gate lines of a single point's result ('' when neither)."""
    lines = growth_lines(result.get("resources")) if result.get("gates") else []
    lines += gate_lines(result.get("gates") or [])
    return "".join(line + "\n" for line in lines)
