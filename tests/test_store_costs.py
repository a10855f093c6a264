"""The catalogue's cost columns (bytes on the wire, allocations per message): filled from a
point's result, NULL where not measured, and filled in for the points of an older catalogue."""
from pathlib import Path

import duckdb
from test_store_support import catalogue_rows, clone_point, measure_point

from conftest import read_saved
from mwperf import store
from mwperf.store import schema

WIRE = {"method": "test", "links": [], "message_bytes": 120, "messages": 10,
        "up_bytes_per_message": 148.0, "down_bytes_per_message": 150.5, "setup_bytes": 296,
        "idle_bytes_per_s": 12.5}
COLUMNS = ("wire_up_bytes_per_msg, wire_down_bytes_per_msg, wire_setup_bytes, "
           "wire_idle_bytes_per_s, ping_allocs_per_msg, pong_allocs_per_msg")


def with_costs(first: Path, root: Path, run_id: str) -> Path:
    agents = read_saved(first / "result.json")["agents"]
    for agent in agents:
        agent["allocations"] = {"allocs_per_msg": {"ping": 0.0, "pong": 3.5}[agent["role"]]}
    return clone_point(first, root, run_id, wire=WIRE, agents=agents)


def test_cost_columns_come_from_the_result(fake_env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "results"
    first = measure_point(root)
    costly = with_costs(first, root, "20261122T000000Z-udp-roundtrip-00c1")
    store.ingest_point(costly)
    rows = catalogue_rows(root, f"SELECT point_id, {COLUMNS} FROM points ORDER BY point_id")
    assert rows == [(costly.name, 148.0, 150.5, 296, 12.5, 0.0, 3.5),
                    (first.name, None, None, None, None, None, None)]


def test_a_version_3_catalogue_gains_the_cost_columns(fake_env: dict[str, str],
                                                      tmp_path: Path) -> None:
    root = tmp_path / "results"
    first = measure_point(root)
    costly = with_costs(first, root, "20261122T000000Z-udp-roundtrip-00c2")
    store.ingest_point(costly)
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        for column, _ in schema.COST_COLUMNS:
            con.execute(f"ALTER TABLE points DROP COLUMN {column}")
        con.execute("UPDATE schema_version SET version = 3")
    store.ingest_point(first)  # any write migrates; the older points' costs are filled in
    assert catalogue_rows(root, "SELECT version FROM schema_version") == [(schema.SCHEMA_VERSION,)]
    assert catalogue_rows(root, f"SELECT {COLUMNS} FROM points WHERE point_id = ?",
                          [costly.name]) == [(148.0, 150.5, 296, 12.5, 0.0, 3.5)]
