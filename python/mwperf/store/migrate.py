"""Bringing an older catalogue up to this mwperf's schema (schema.py): one step per version, some
of which refill columns from the points' results (rows.py). Here, not in schema.py, because
the steps need rows.py, which needs schema.py's column lists."""

import json
from collections.abc import Callable, Sequence
from typing import Any

import duckdb

from .flows import read_flows, store_flows
from .graph_rows import GraphPlace, graph_call_rows
from .graph_tables import GRAPH_CALL_COLUMNS, GRAPH_TABLES
from .rows import cost_columns, layer_columns, subscriber_rows, topic_rows
from .schema import (COST_COLUMNS, LAYER_COLUMNS, PROBE_COLUMNS, PROBE_ROS2_COLUMNS,
                     PROCESS_COLUMNS, RESILIENCE_COLUMNS,
                     SCHEMA_VERSION, SERVICE_COLUMNS, SUBSCRIBER_COLUMNS, THROUGHPUT_COLUMNS,
                     TOPIC_COLUMNS, SchemaMismatch, create)


def _add_resilience_columns(con: duckdb.DuckDBPyConnection) -> None:
    """1 -> 2: the resilience columns, NULL for the points measured before (their results
    have no resilience section; 'mwperf results rebuild' would fill time_to_connect_ns)."""
    for column, kind in RESILIENCE_COLUMNS:
        con.execute(f"ALTER TABLE points ADD COLUMN IF NOT EXISTS {column} {kind}")


def _add_subscribers_table(con: duckdb.DuckDBPyConnection) -> None:
    """2 -> 3: the subscribers table, filled from the points' results (they always kept
    ``per_subscriber``)."""
    body = ", ".join(f"{column} {kind}" for column, kind in SUBSCRIBER_COLUMNS)
    con.execute(f"CREATE TABLE IF NOT EXISTS subscribers ({body})")
    names = [name for name, _ in SUBSCRIBER_COLUMNS]
    found = con.execute("SELECT result FROM points WHERE json_array_length(result, "
                        "'$.per_subscriber') > 0").fetchall()
    records = [r for (text,) in found for r in subscriber_rows(json.loads(text))]
    if records:
        con.executemany(f"INSERT INTO subscribers ({', '.join(names)}) VALUES "
                        f"({', '.join('?' for _ in names)})",
                        [[record.get(name) for name in names] for record in records])


def _add_cost_columns(con: duckdb.DuckDBPyConnection) -> None:
    """3 -> 4: the cost columns, filled from the points' results (NULL where not measured)."""
    _fill(con, COST_COLUMNS, "json_exists(result, '$.wire') OR result LIKE "
          "'%\"allocations\"%'", cost_columns)


def _fill(con: duckdb.DuckDBPyConnection, columns: Sequence[tuple[str, str]], where: str,
          values: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """Add ``columns`` and fill them, for the points whose result matches ``where`` (SQL), from
    ``values`` of the parsed result (NULL for the rest)."""
    for column, kind in columns:
        con.execute(f"ALTER TABLE points ADD COLUMN IF NOT EXISTS {column} {kind}")
    names = [name for name, _ in columns]
    found = con.execute(f"SELECT point_id, result FROM points WHERE {where}").fetchall()
    updates = [[values(json.loads(text)).get(name) for name in names] + [point_id]
               for point_id, text in found]
    if updates:
        con.executemany(f"UPDATE points SET {', '.join(f'{n} = ?' for n in names)} "
                        f"WHERE point_id = ?", updates)


def _add_probes_table(con: duckdb.DuckDBPyConnection) -> None:
    """4 -> 5: the probes table (probes were not saved before: it starts empty)."""
    body = ", ".join(f"{column} {kind}" for column, kind in PROBE_COLUMNS)
    con.execute(f"CREATE TABLE IF NOT EXISTS probes ({body})")


def _add_topic_addresses(con: duckdb.DuckDBPyConnection) -> None:
    """5 -> 6: ``topics.address``; the topic rows of multi-topic and replayed points are made
    again from their results, so their ``name`` is the topic's name (it was the address)."""
    con.execute("ALTER TABLE topics ADD COLUMN IF NOT EXISTS address VARCHAR")
    names = [name for name, _ in TOPIC_COLUMNS]
    found = con.execute("SELECT point_id, result FROM points WHERE json_array_length(result, "
                        "'$.per_topic') > 0 OR json_exists(result, '$.config.replay')").fetchall()
    records = [r for _, text in found for r in topic_rows(json.loads(text))]
    if found:
        con.execute("DELETE FROM topics WHERE point_id IN (SELECT unnest(?))",
                    [[point_id for point_id, _ in found]])
    if records:
        con.executemany(f"INSERT INTO topics ({', '.join(names)}) VALUES "
                        f"({', '.join('?' for _ in names)})",
                        [[record.get(name) for name in names] for record in records])


def _add_graph_tables(con: duckdb.DuckDBPyConnection) -> None:
    """6 -> 7: the graph tables (graph runs were not catalogued before: they start empty;
    'mwperf results --rebuild' adds the graph runs already saved)."""
    for name, columns in GRAPH_TABLES.items():
        body = ", ".join(f"{column} {kind}" for column, kind in columns)
        con.execute(f"CREATE TABLE IF NOT EXISTS {name} ({body})")


def _add_service_columns(con: duckdb.DuckDBPyConnection) -> None:
    """7 -> 8: the service columns and the client/server roles' CPU, RSS and allocations, NULL
    for the points measured before (there were no service points)."""
    for column, kind in SERVICE_COLUMNS + PROCESS_COLUMNS + COST_COLUMNS:
        con.execute(f"ALTER TABLE points ADD COLUMN IF NOT EXISTS {column} {kind}")


def _add_graph_calls(con: duckdb.DuckDBPyConnection) -> None:
    """8 -> 9: the ``graph_calls`` table, filled from the graph runs' results (a result from
    before services has none)."""
    body = ", ".join(f"{column} {kind}" for column, kind in GRAPH_CALL_COLUMNS)
    con.execute(f"CREATE TABLE IF NOT EXISTS graph_calls ({body})")
    names = [name for name, _ in GRAPH_CALL_COLUMNS]
    found = con.execute("SELECT result FROM graph_runs WHERE json_array_length(result, "
                        "'$.calls') > 0").fetchall()
    records = [r for (text,) in found for r in graph_call_rows(json.loads(text))]
    if records:
        con.executemany(f"INSERT INTO graph_calls ({', '.join(names)}) VALUES "
                        f"({', '.join('?' for _ in names)})",
                        [[record.get(name) for name in names] for record in records])


def _add_throughput_columns(con: duckdb.DuckDBPyConnection) -> None:
    """9 -> 10: the throughput columns; the points measured before get their subscribers and
    delivered bytes/s from their results (in DuckDB: no result is parsed in Python); the rest
    stays NULL (there were no throughput points)."""
    for column, kind in THROUGHPUT_COLUMNS:
        con.execute(f"ALTER TABLE points ADD COLUMN IF NOT EXISTS {column} {kind}")
    con.execute(
        "UPDATE points SET subscribers = coalesce(TRY_CAST(json_extract_string(result, "
        "'$.config.subscribers') AS BIGINT), 1), payload_bytes_per_s = TRY_CAST("
        "json_extract_string(result, '$.measurement.throughput.payload_bytes_per_s') AS DOUBLE),"
        " message_bytes_per_s = TRY_CAST(json_extract_string(result, "
        "'$.measurement.throughput.message_bytes_per_s') AS DOUBLE)")


def _add_layer_columns(con: duckdb.DuckDBPyConnection) -> None:
    """10 -> 11: the layer columns, filled from the results that have a ``layers`` section
    (parsed in Python: the layers are a list keyed by name, one JSON path per column would not
    say which entry); NULL for the rest (measured without --layers)."""
    _fill(con, LAYER_COLUMNS, "json_type(result, '$.layers') = 'OBJECT'", layer_columns)


def _add_probe_ros2_columns(con: duckdb.DuckDBPyConnection) -> None:
    """11 -> 12: the ROS 2 probe columns of ``probes``, NULL for the probes saved before (ROS 1,
    MQTT and zenoh probes, which have no publishers or QoS; their probe.json had no bandwidth or
    peak memory either)."""
    for column, kind in PROBE_ROS2_COLUMNS:
        con.execute(f"ALTER TABLE probes ADD COLUMN IF NOT EXISTS {column} {kind}")


def _add_stream_flows(con: duckdb.DuckDBPyConnection) -> None:
    """12 -> 13: ``graph_runs.kind`` (the graph runs catalogued before: ``graph``) and every
    catalogued point's flows in the graph tables, from its result (ingest.store_flows)."""
    con.execute("ALTER TABLE graph_runs ADD COLUMN IF NOT EXISTS kind VARCHAR")
    con.execute("UPDATE graph_runs SET kind = 'graph' WHERE kind IS NULL")
    found = con.execute("SELECT p.run_id, p.folder, r.scenario, p.point_index, p.repetition, "
                        "p.result FROM points p LEFT JOIN runs r USING (run_id)").fetchall()
    for run_id, folder, scenario, index, repetition, text in found:
        document = json.loads(text)
        store_flows(con, document.get("run_id"), read_flows(document, folder),
                    GraphPlace(run_id, folder, scenario, index, repetition))


def _add_keep_awake(con: duckdb.DuckDBPyConnection) -> None:
    """13 -> 14: ``points.keep_awake`` (--keep-awake), false for the points measured before it
    existed (their configs have no such field: CONFIG_ABSENT)."""
    con.execute("ALTER TABLE points ADD COLUMN IF NOT EXISTS keep_awake BOOLEAN")
    con.execute("UPDATE points SET keep_awake = coalesce(TRY_CAST(json_extract_string(result, "
                "'$.config.keep_awake') AS BOOLEAN), false)")


def _add_graph_layers(con: duckdb.DuckDBPyConnection) -> None:
    """14 -> 15: ``graph_edges.layers`` and ``graph_chains.layers`` (a graph run's --layers
    sections), filled from each graph run's result as catalogued (its edges and chains by
    index); NULL for the rest (measured without --layers, and the stream points' flows)."""
    for table, key, column in (("graph_edges", "edges", "edge"), ("graph_chains", "chains",
                                                                  "chain")):
        con.execute(f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS layers JSON")
        con.execute(
            f"UPDATE {table} SET layers = json_extract(r.result, '$.{key}[' || "
            f"{table}.{column} || '].layers') FROM graph_runs r WHERE r.graph_id = "
            f"{table}.graph_id AND r.kind = 'graph' AND json_type(json_extract(r.result, "
            f"'$.{key}[' || {table}.{column} || '].layers')) = 'OBJECT'")


def _add_secure(con: duckdb.DuckDBPyConnection) -> None:
    """15 -> 16: ``points.secure`` (--secure: the mode; NULL for a plain point, as every point
    measured before it existed was)."""
    con.execute("ALTER TABLE points ADD COLUMN IF NOT EXISTS secure VARCHAR")
    con.execute("UPDATE points SET secure = json_extract_string(result, '$.config.secure')")


def _add_open_ns(con: duckdb.DuckDBPyConnection) -> None:
    """16 -> 17: ``points.discovery_open_ns`` (the sender's endpoints opening, a TLS handshake
    included), from the results that have it (NULL for the points measured before it was)."""
    con.execute("ALTER TABLE points ADD COLUMN IF NOT EXISTS discovery_open_ns BIGINT")
    con.execute("UPDATE points SET discovery_open_ns = TRY_CAST(coalesce(json_extract_string("
                "result, '$.stream.discovery.open_ns'), json_extract_string(result, "
                "'$.discovery.open_ns')) AS BIGINT)")


MIGRATIONS: dict[int, Callable[[duckdb.DuckDBPyConnection], None]] = {
    1: _add_resilience_columns,
    2: _add_subscribers_table,
    3: _add_cost_columns,
    4: _add_probes_table,
    5: _add_topic_addresses,
    6: _add_graph_tables,
    7: _add_service_columns,
    8: _add_graph_calls,
    9: _add_throughput_columns,
    10: _add_layer_columns,
    11: _add_probe_ros2_columns,
    12: _add_stream_flows,
    13: _add_keep_awake,
    14: _add_graph_layers,
    15: _add_secure,
    16: _add_open_ns,
}
"""version -> the step that upgrades a catalogue of that version to the next one"""


def prepare(con: duckdb.DuckDBPyConnection, where: str, rebuild_hint: str,
            found: int | None = None) -> None:
    """Create the tables of a new catalogue, migrate an old one (of version ``found``, the
    caller's version_of(): inside a transaction a failed query would abort it), or refuse one
    from the future."""
    if found is None:
        if not con.execute("SELECT table_name FROM duckdb_tables() "
                           "WHERE database_name = current_database()").fetchall():
            create(con)
            return
    if found == SCHEMA_VERSION:
        return
    if found is not None and found < SCHEMA_VERSION and all(
            v in MIGRATIONS for v in range(found, SCHEMA_VERSION)):
        for step in range(found, SCHEMA_VERSION):
            MIGRATIONS[step](con)
        con.execute("UPDATE schema_version SET version = ?", [SCHEMA_VERSION])
        return
    newer = found is not None and found > SCHEMA_VERSION
    raise SchemaMismatch(
        f"catalogue {where}: schema version {found if found is not None else 'missing'}, this "
        f"mwperf uses version {SCHEMA_VERSION}"
        + (" (written by a newer mwperf: upgrade mwperf, or" if newer else " (no migration:")
        + f" recreate it from the point folders with '{rebuild_hint}')")
