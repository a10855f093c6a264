"""mwperf compare on what the middleware costs: allocations per message and bytes on the wire
per message, with budgets (`allocs_per_msg=+0`, `wire_bytes=+5%`) and their errors."""
import json
from pathlib import Path

import pytest
from report_support import latencies, result, write_point

from mwperf.compare import compare, render
from mwperf.compare.budget import parse_budget, resolve
from mwperf.errors import UsageError
from mwperf.store import ingest_point

BASE = "20261122T100000Z-udp-roundtrip-00a1"
NEW = "20261122T110000Z-udp-roundtrip-00a2"
PLAIN = "20261122T120000Z-udp-roundtrip-00a3"


def costly(root: Path, run_id: str, allocs: tuple[float, float], wire: tuple[float, float]
           ) -> None:
    doc = result(run_id, latencies(2000))
    for agent, per in zip(doc["agents"], allocs):  # ping, pong
        agent["allocations"] = {"allocs_per_msg": per}
    doc["wire"] = {"method": "test", "links": [], "up_bytes_per_message": wire[0],
                   "down_bytes_per_message": wire[1], "setup_bytes": 300,
                   "idle_bytes_per_s": 0.0}
    ingest_point(write_point(root / run_id, json.loads(json.dumps(doc))))


def test_cost_budgets(tmp_path: Path) -> None:
    assert parse_budget("allocs_per_msg", "+0", "x").exceeded(0.0, 1.0)
    assert not parse_budget("allocs_per_msg", "+0", "x").exceeded(2.0, 2.0)
    assert parse_budget("wire_bytes", "+16", "x").absolute == 16
    with pytest.raises(UsageError, match=r"wire_bytes='\+lots' is not a budget; allowed: "
                                         r"\+N% \(relative\) or \+N bytes per message"):
        resolve(("wire_bytes=+lots",), None)


def test_an_allocation_more_per_message_is_a_regression(tmp_path: Path) -> None:
    root = tmp_path / "results"
    costly(root, BASE, (0.0, 0.0), (148.0, 148.0))
    costly(root, NEW, (1.0, 0.0), (150.0, 150.0))
    budgets = resolve(("allocs_per_msg=+0", "wire_bytes=+5%"), None)
    outcome = compare(root, BASE, NEW, budgets)
    rows = {r.metric: r for r in outcome.rows}
    assert (rows["allocs_per_msg"].base, rows["allocs_per_msg"].new) == (0.0, 1.0)
    assert rows["allocs_per_msg"].verdict == "regression"
    assert (rows["wire_bytes"].base, rows["wire_bytes"].new) == (296.0, 300.0)
    assert rows["wire_bytes"].verdict == "ok"  # +1.4 % within +5 %
    text = render(outcome)
    assert "+1/msg" in text and "+4 B/msg" in text


def test_costs_not_measured_add_no_rows(tmp_path: Path) -> None:
    root = tmp_path / "results"
    for run_id in (BASE, PLAIN):
        ingest_point(write_point(root / run_id, result(run_id, latencies(2000))))
    outcome = compare(root, BASE, PLAIN, resolve((), None))
    assert {r.metric for r in outcome.rows}.isdisjoint({"allocs_per_msg", "wire_bytes"})
