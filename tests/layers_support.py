"""Helpers of the tests of what shows the ``layers`` section (no tests here): a section built
the way the shared spec of issue 27 has it, from per-message layer durations, so its quantiles,
means and shares agree with each other exactly as the real producer's must (every message's
layers add up to its latency; shares of the observable layers sum to 1)."""

import math
import random
from collections.abc import Mapping
from typing import Any

from mwperf.layer_names import label_of

QUANTILES = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1]
FIVE = ("app_send", "middleware_send", "kernel_network", "middleware_receive",
        "executor_callback")
SHM_NOTE = "shared memory: no system call carries the message"


def _q(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def figures(values: list[int] | None, total_mean: float | None) -> dict[str, Any]:
    """The figures of one layer (all null for None: not observable)."""
    if not values:
        return {"p50_ns": None, "p90_ns": None, "p99_ns": None, "max_ns": None,
                "mean_ns": None, "q_ns": None, "share": None}
    mean = sum(values) / len(values)
    return {"p50_ns": _q(values, 0.5), "p90_ns": _q(values, 0.9), "p99_ns": _q(values, 0.99),
            "max_ns": max(values), "mean_ns": mean, "q_ns": [_q(values, q) for q in QUANTILES],
            "share": mean / total_mean if total_mean else None}


def per_message(medians: Mapping[str, int | None], n: int, seed: int) -> dict[str, list[int]]:
    """Log-normal durations of each observable layer (median ``medians[name]``), n messages."""
    rng = random.Random(seed)
    return {name: [max(1, int(m * math.exp(rng.gauss(0, 0.3)))) for _ in range(n)]
            for name, m in medians.items() if m is not None}


def layer_list(medians: Mapping[str, int | None], n: int, seed: int,
               notes: dict[str, str] | None = None, link: bool = False
               ) -> tuple[list[dict[str, Any]], list[int]]:
    """The layers list and the per-message totals."""
    values = per_message(medians, n, seed)
    totals = [sum(v[i] for v in values.values()) for i in range(n)]
    mean = sum(totals) / n
    out = []
    for name, median in medians.items():
        entry = {"name": name, "label": label_of(name), "observable": median is not None,
                 "note": (notes or {}).get(name), **figures(values.get(name), mean),
                 "parts": None}
        if link and name == "kernel_network" and median is not None:
            whole = values[name]
            parts = {"sender_kernel": [v // 10 for v in whole],
                     "link": [v - v // 10 - v // 5 for v in whole],
                     "receiver_kernel": [v // 5 for v in whole]}
            entry["parts"] = [{"name": p, "label": label_of(p), "observable": True,
                               "note": None, **figures(v, mean), "parts": None}
                              for p, v in parts.items()]
        out.append(entry)
    return out, totals


def section(medians: Mapping[str, int | None] | None = None, *, n: int = 1000, seed: int = 1,
            kind: str = "roundtrip", link: bool = False, shm: bool = False,
            unsplit: dict[str, int] | None = None, topics: list[str] | None = None
            ) -> dict[str, Any]:
    """A ``layers`` section: ``medians`` per layer name (None: not observable); ``shm``: the
    shared-memory shape (send, kernel, receive not observable, middleware_transport instead)."""
    if medians is None:
        medians = {"app_send": 2_000, "middleware_send": 8_000, "kernel_network": 30_000,
                   "middleware_receive": 6_000, "executor_callback": 4_000}
    notes: dict[str, str] = {}
    if shm:
        medians = {"app_send": medians.get("app_send", 2_000), "middleware_send": None,
                   "kernel_network": None, "middleware_receive": None,
                   "executor_callback": medians.get("executor_callback", 4_000),
                   "middleware_transport": medians.get("middleware_transport", 20_000)}
        notes = {name: SHM_NOTE for name in ("middleware_send", "kernel_network",
                                              "middleware_receive")}
    layers, totals = layer_list(medians, n, seed, notes, link)
    counts = {"events_dropped": 0, "other_pattern": 0, "inconsistent": 0,
              **(unsplit or {})}
    total = figures(totals, None)
    total.pop("share")
    directions = None
    if kind == "roundtrip":
        half = {k: (v // 2 if v is not None else None) for k, v in medians.items()}
        directions = {"forward": layer_list(half, n, seed + 1, notes)[0],
                      "return": layer_list(half, n, seed + 2, notes)[0]}
    per_topic = None
    if topics:
        per_topic = []
        for i, topic in enumerate(topics):
            topic_layers, topic_totals = layer_list(medians, n // len(topics), seed + 10 + i,
                                                    notes)
            topic_total = figures(topic_totals, None)
            topic_total.pop("share")
            per_topic.append({"topic": topic, "messages": n // len(topics),
                              "split": n // len(topics), "total": topic_total,
                              "layers": topic_layers})
    return {"method": "ld_preload", "why_none": None, "kind": kind,
            "messages": n + sum(counts.values()), "split": n, "unsplit": counts,
            "quantiles": QUANTILES, "total": total, "layers": layers, "directions": directions,
            "per_topic": per_topic,
            "agents": [{"name": "ping", "events": 2 * n, "dropped": counts["events_dropped"]},
                       {"name": "pong", "events": 2 * n, "dropped": 0}],
            "notes": []}


def none_section(why: str = "the agent is a static binary: LD_PRELOAD cannot interpose"
                 ) -> dict[str, Any]:
    """The section of a run where no layer could be observed."""
    return {"method": "none", "why_none": why, "kind": None, "messages": None, "split": None,
            "unsplit": None, "quantiles": None, "total": None, "layers": [],
            "directions": None, "per_topic": None, "agents": [], "notes": []}
