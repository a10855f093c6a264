"""The report's cost section: drawn from the catalogue's cost columns when a point measured
bytes on the wire or allocations, absent otherwise."""
import json
from pathlib import Path

from report_support import latencies, result, write_point

from mwperf.report import build
from mwperf.store import ingest_point


def point(root: Path, run_id: str, costs: bool) -> None:
    doc = result(run_id, latencies(500))
    if costs:
        doc["wire"] = {"method": "test", "links": [], "up_bytes_per_message": 1108.0,
                       "down_bytes_per_message": 1108.0, "setup_bytes": 2216,
                       "idle_bytes_per_s": 0.0}
        for agent in doc["agents"]:
            agent["allocations"] = {"allocs_per_msg": 3.0 if agent["role"] == "ping" else 2.0}
    ingest_point(write_point(root / run_id, json.loads(json.dumps(doc))))


def test_the_cost_section_draws_bytes_and_allocations(tmp_path: Path) -> None:
    root = tmp_path / "results"
    point(root, "20261122T100000Z-udp-roundtrip-0c01", costs=True)
    page = build(root, ["latest"])
    assert 'id="costs"' in page
    assert "sender \u2192 server: 1108 B" in page
    assert "ping: 3 allocations per message" in page and "pong: 2 allocations" in page


def test_no_costs_no_section(tmp_path: Path) -> None:
    root = tmp_path / "results"
    point(root, "20261122T100000Z-udp-roundtrip-0c02", costs=False)
    assert "What the middleware costs" not in build(root, ["latest"])


def test_alloc_sites_show_their_table_and_feed_the_allocation_chart(tmp_path: Path) -> None:
    """--alloc-sites without --count-allocs: the call-site section, and the catalogue's
    allocations per message (the cost chart) from heaptrack's count."""
    root = tmp_path / "results"
    run_id = "20261122T100000Z-cyclonedds-roundtrip-0c03"
    doc = result(run_id, latencies(500))
    site = {"function": "dds_write (+3 unnamed in libddsc.so.0)", "module": "libddsc.so.0",
            "callers": ["<CycloneEndpoint as Endpoint>::send"], "steady_count": 998,
            "per_msg": 2.0, "steady_bytes": 1000, "total_count": 1200, "total_bytes": 2000}
    doc["alloc_sites"] = {"tool": "heaptrack", "version": "1.4.0", "processes": [
        {"name": role, "role": role, "steady_messages": 499, "steady_allocs": 998,
         "allocs_per_msg": 2.0, "bytes_per_msg": 2.0, "total_allocs": 1200, "total_bytes": 2000,
         "record": f"alloc-sites/{role}.heaptrack.gz", "table": f"alloc-sites/{role}.txt",
         "sites": [site]} for role in ("ping", "pong")]}
    ingest_point(write_point(root / run_id, json.loads(json.dumps(doc))))
    page = build(root, ["latest"])
    assert 'id="alloc-sites"' in page
    assert "dds_write (+3 unnamed in libddsc.so.0)" in page
    assert "2.00 allocations per message over 499 messages" in page
    assert "ping: 2 allocations per message" in page  # the cost chart, from heaptrack's count
