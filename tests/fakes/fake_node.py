"""The fake agent's ``node`` role (docs/agent-contract.md, "node"): reads its spec, prints
``READY node <name>``, waits for the go file, "runs" for warm-up + duration + linger (on virtual
time: not at all) and writes a schema-valid node report with invented latencies and counts that
follow from the graph: each publisher sent duration / period messages, and each subscription
received every one of them from every node publishing its topic (read from the sibling nodes'
spec files the control plane wrote beside this one: a shortcut only a fake may take). A stage
forwards what its subscription received. Services are not faked (exit 2).

FAKE_AGENT=node-NAME:BEHAVIOUR as for the other roles: ``fail`` (status failed, exit 1),
``no-report``, ``lost=N`` (each of this node's edges lost N), ``hang`` (ignores signals)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from pathlib import Path
TYPE_CHECKING = False  # typing's import costs each fake agent start ~5 ms of CPU
if TYPE_CHECKING:
    from typing import Any

from reports import TOOL, measurement, stats  # noqa: F401,E402  (TOOL: the report's tool block)

SATURATING_SENT = 10_000
"""what a saturating publisher (period 0) claims to have sent"""


def sent_by(period_ns: int, span_ns: int) -> int:
    return SATURATING_SENT if period_ns == 0 else span_ns // period_ns


def publishers_of(folder: Path) -> dict[str, list[tuple[int, int, int]]]:
    """topic -> (publishing node's index, period_ns, payload bytes) over every spec in
    ``folder``; a stage's outlet counts with its subscription's period."""
    found: dict[str, list[tuple[int, int, int]]] = {}
    for path in sorted(folder.glob("*.spec.json")):
        spec = json.loads(path.read_text())
        for p in spec["publishers"]:
            found.setdefault(p["topic"], []).append(
                (spec["index"], p["period_ns"], p["payload_bytes"] or 0))
        for s in spec["subscriptions"]:
            if s.get("publish"):
                found.setdefault(s["publish"]["topic"], []).append(
                    (spec["index"], s["period_ns"], s["publish"]["payload_bytes"] or 0))
    return found


_STDOUT = threading.Lock()


def run(spec_path: str, go_file: str, json_out: str, how: dict[str, str],
        stopped: Any) -> int:
    """The node's life; ``stopped()`` says whether SIGINT/SIGTERM came."""
    spec = json.loads(Path(spec_path).read_text())
    if spec.get("servers") or spec.get("clients"):
        sys.stderr.write("error: the fake agent does not fake a node's services\n")
        return 2
    started = time.monotonic()
    with _STDOUT:  # whole lines, as the real agent's println! (nodes sharing a process)
        sys.stdout.write(f"READY node {spec['name']}\n")
        sys.stdout.flush()
    go = Path(go_file)
    while not go.exists():
        if stopped():
            return _write(json_out, how, _report(spec, {}, 0, "partial", "interrupted by signal",
                                                 started))
        time.sleep(0.005)
    go_ns = int(go.read_text().split()[0])
    span = spec["warmup_ns"] + spec["duration_ns"] + spec["linger_ns"]
    if os.environ.get("FAKE_AGENT_CLOCK") != "virtual":
        while not stopped() and time.monotonic_ns() < go_ns + span:
            time.sleep(0.005)
    status, reason = ("partial", "interrupted by signal") if stopped() else ("complete", None)
    if "fail" in how:
        status, reason = "failed", "peer unreachable"
    return _write(json_out, how, _report(spec, publishers_of(Path(spec_path).parent), go_ns,
                                         status, reason, started, int(how.get("lost", 0))))


def run_several(spec_paths: list[str], json_outs: list[str], go_file: str,
                how: dict[str, str], stopped: Any) -> int:
    """Nodes sharing a process (the real agent's node/process.rs): each on a thread of its
    own; the worst exit code (a failure over a partial over complete)."""
    codes: list[int] = []
    threads = [threading.Thread(target=lambda s=s, j=j: codes.append(run(s, go_file, j, how,
                                                                         stopped)))
               for s, j in zip(spec_paths, json_outs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return max(codes, key=lambda c: {0: 0, 3: 1}.get(c, 2))


def _report(spec: dict[str, Any], publishers: dict[str, list[tuple[int, int, int]]],
            go_ns: int, status: str, reason: str | None, started: float,
            lost: int = 0) -> dict[str, Any]:
    duration, warmup = spec["duration_ns"], spec["warmup_ns"]
    subscriptions = []
    for s in spec["subscriptions"]:
        edges = []
        for source, period, payload in publishers.get(s["topic"], []):
            sent = sent_by(period, duration)
            gone = min(lost, sent)
            m = measurement("oneway", sent=sent, lost=gone, payload_bytes=payload,
                            rate=1e9 / period if period else 0.0, duration_s=duration / 1e9)
            edges.append({"topic": s["topic"], "id": s["id"], "source": source,
                          "measurement": m, "late": 0, "too_late": 0,
                          "late_ns": s["late_ns"], "too_late_ns": s["too_late_ns"],
                          "offered_per_s": 1e9 / period if period else 0.0})
        entry: dict[str, Any] = {"topic": s["topic"], "id": s["id"], "edges": edges,
                                 "foreign": 0, "malformed": 0, "warmup_received": 0}
        if s.get("publish"):
            forwarded = sum(e["measurement"]["accounting"]["received"] for e in edges)
            entry["stage"] = {"topic": s["publish"]["topic"], "id": s["publish"]["id"],
                              "sent": forwarded, "warmup_sent": 0, "send_errors": 0,
                              "max_send_lag_ns": 0}
            entry["stage_time"] = stats(forwarded, 5_000)
        subscriptions.append(entry)
    wall = max(time.monotonic() - started, 1e-3)
    return {"role": "node", "name": spec["name"], "index": spec["index"], "status": status,
            "status_reason": reason, "discovery_ns": 1_000_000, "go_ns": go_ns or None,
            "sessions": 1,
            "publishers": [{"topic": p["topic"], "id": p["id"],
                            "sent": sent_by(p["period_ns"], duration),
                            "warmup_sent": sent_by(p["period_ns"], warmup) if p["period_ns"]
                            else 0, "send_errors": 0, "max_send_lag_ns": 0}
                           for p in spec["publishers"]],
            "subscriptions": subscriptions,
            "process": {"pid": os.getpid(), "wall_s": wall, "cpu_user_s": 0.01,
                        "cpu_sys_s": 0.01, "max_rss_kib": 4096, "voluntary_ctx_switches": 1,
                        "involuntary_ctx_switches": 0}}


def _write(json_out: str, how: dict[str, str], report: dict[str, Any]) -> int:
    if "no-report" not in how:
        tmp = json_out + ".tmp"
        Path(tmp).write_text(json.dumps(report))
        os.replace(tmp, json_out)
    return {"complete": 0, "partial": 3, "failed": 1}[report["status"]]
