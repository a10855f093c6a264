"""The catalogue's graph tables: one row per graph run (``mwperf run --graph``, a scenario's
graph points), and per edge, call edge, chain and node of it. The run's folder holds ``graph-result.json``
(schema/result.v2.json ``$defs/graph_result``), the source of truth; graph_rows.py flattens it.

Every table is keyed by ``graph_id``, the graph run's own id (its folder's name). ``run_id`` is
the run it belongs to in the ``runs`` table: the graph run itself (kind ``graph``) when it ran
alone, its sweep folder (kind ``sweep``) when it is a point of a sweep.
"""

GRAPH_RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("graph_id", "VARCHAR PRIMARY KEY"), ("run_id", "VARCHAR NOT NULL"),
    ("point_index", "INTEGER"), ("repetition", "INTEGER"), ("folder", "VARCHAR NOT NULL"),
    ("scenario", "VARCHAR"), ("started_at", "TIMESTAMP"), ("finished_at", "TIMESTAMP"),
    ("status", "VARCHAR NOT NULL"), ("status_reason", "VARCHAR"),
    ("graph_name", "VARCHAR NOT NULL"), ("graph_source", "VARCHAR"), ("graph_spec", "VARCHAR"),
    ("transport", "VARCHAR"), ("link", "VARCHAR"), ("reliability", "VARCHAR"),
    ("history", "VARCHAR"), ("depth", "BIGINT"), ("duration_ns", "BIGINT"),
    ("warmup_ns", "BIGINT"), ("copies", "INTEGER"), ("rate_scale", "DOUBLE"),
    ("without_nodes", "VARCHAR"), ("baseline", "VARCHAR"),
    ("nodes", "INTEGER"), ("topics", "INTEGER"), ("edges", "INTEGER"), ("chains", "INTEGER"),
    ("discovery_ns", "BIGINT"), ("ready_s", "DOUBLE"), ("stop_s", "DOUBLE"), ("total_s", "DOUBLE"),
    ("edges_lost", "BIGINT"), ("worst_p99_share", "DOUBLE"),
    ("result", "JSON NOT NULL"), ("kind", "VARCHAR"),
)
"""one row per graph run: where it is, how it ended, the graph and its configuration
(``copies``/``rate_scale``/``without_nodes``/``baseline`` from config.graph), its size, the
run's times (all matched after ``discovery_ns``, the slowest node's; every node ready after
``ready_s``; the nodes stopped ``stop_s`` after the end; ``total_s`` the whole run), the
messages lost over all edges, the worst edge's p99 as a share of its topic's period, and the
whole graph-result as JSON; ``kind``: ``graph`` for a graph run, the stream kind
(``roundtrip``, ``oneway``, ``throughput``, ``service``) for a stream point, whose nodes, edges,
chains and calls are filled too (its result read as v3, result/upgrade.py: the one-path plan's
step 5), its row named after its kind and its ``result`` a pointer to ``points.result``. ``point_index``/``repetition``: the point's place in its sweep, as
its sweep.json lists it (NULL until the sweep lists it, or when the graph ran alone)."""

GRAPH_EDGE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("graph_id", "VARCHAR NOT NULL"), ("edge", "INTEGER NOT NULL"), ("topic", "VARCHAR NOT NULL"),
    ("from_node", "VARCHAR NOT NULL"), ("to_node", "VARCHAR NOT NULL"), ("period_ns", "BIGINT"),
    ("sent", "BIGINT"), ("received", "BIGINT"), ("lost", "BIGINT"), ("duplicated", "BIGINT"),
    ("reordered", "BIGINT"), ("corrupted", "BIGINT"),
    ("latency_count", "BIGINT"), ("latency_p50_ns", "BIGINT"), ("latency_p90_ns", "BIGINT"),
    ("latency_p99_ns", "BIGINT"), ("latency_max_ns", "BIGINT"),
    ("age_p50_ns", "BIGINT"), ("age_p99_ns", "BIGINT"), ("age_max_ns", "BIGINT"),
    ("jitter_ns", "DOUBLE"), ("late", "BIGINT"), ("too_late", "BIGINT"), ("late_ns", "BIGINT"),
    ("too_late_ns", "BIGINT"), ("offered_per_s", "DOUBLE"), ("achieved_per_s", "DOUBLE"),
    ("payload_bytes", "BIGINT"), ("p99_share", "DOUBLE"),
    ("alone_p50_ns", "BIGINT"), ("alone_p99_ns", "BIGINT"), ("alone_lost", "BIGINT"),
    ("in_graph_p50_ns", "BIGINT"), ("in_graph_p99_ns", "BIGINT"), ("layers", "JSON"),
)
"""one row per edge (a topic from one publisher to one subscriber), in the result's order:
its accounting, latency (publish to callback) and age (from the publisher's due time)
statistics, RFC 3550 jitter, how many arrived later than ``late_ns``/``too_late_ns``, the rate
offered and achieved, ``p99_share`` (latency p99 / period: what the report sorts by, worst
first) and, for the edges a ``--baseline`` ran alone first, its p50/p99/loss alone and in the
graph (NULL otherwise); ``layers``: its ``--layers`` section as the result has it (JSON; NULL
without, and for a stream point's flows)"""

GRAPH_CHAIN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("graph_id", "VARCHAR NOT NULL"), ("chain", "INTEGER NOT NULL"), ("name", "VARCHAR NOT NULL"),
    ("topics", "VARCHAR NOT NULL"), ("deadline_ns", "BIGINT"), ("e2e_count", "BIGINT"),
    ("e2e_p50_ns", "BIGINT"), ("e2e_p99_ns", "BIGINT"), ("e2e_max_ns", "BIGINT"),
    ("over_deadline", "BIGINT"), ("hops", "JSON NOT NULL"),
    ("alone_p50_ns", "BIGINT"), ("alone_p99_ns", "BIGINT"),
    ("in_graph_p50_ns", "BIGINT"), ("in_graph_p99_ns", "BIGINT"), ("layers", "JSON"),
)
"""one row per chain: its topics (joined by ``' -> '``), deadline, end-to-end age of its last
topic (from the origin's due time), how many arrived over the deadline, and its hops as JSON
(``[{"topic", "stage_p50_ns", "latency_p50_ns", "age_p50_ns"}, ...]``); with a chain
``--baseline``, its end to end alone and in the graph; ``layers`` as an edge's"""

GRAPH_NODE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("graph_id", "VARCHAR NOT NULL"), ("name", "VARCHAR NOT NULL"),
    ("status", "VARCHAR NOT NULL"), ("status_reason", "VARCHAR"), ("cpu_s", "DOUBLE"),
    ("cpu_percent", "DOUBLE"), ("max_rss_kib", "BIGINT"), ("discovery_ns", "BIGINT"),
    ("max_send_lag_ns", "BIGINT"), ("send_errors", "BIGINT"),
)
"""one row per node: how it ended, its CPU time and share of its wall time, peak RSS, when it
had matched everything, its longest send lag behind schedule and its failed sends"""

GRAPH_CALL_COLUMNS: tuple[tuple[str, str], ...] = (
    ("graph_id", "VARCHAR NOT NULL"), ("call", "INTEGER NOT NULL"),
    ("service", "VARCHAR NOT NULL"), ("client", "VARCHAR NOT NULL"), ("server", "VARCHAR"),
    ("period_ns", "BIGINT"), ("request_bytes", "BIGINT"), ("in_flight", "INTEGER"),
    ("timeout_ns", "BIGINT"), ("sent", "BIGINT"), ("answered", "BIGINT"),
    ("timeouts", "BIGINT"), ("errors", "BIGINT"), ("send_errors", "BIGINT"),
    ("unmatched", "BIGINT"), ("skipped", "BIGINT"), ("server_requests", "BIGINT"),
    ("server_answered", "BIGINT"), ("work_ns", "BIGINT"),
    ("latency_count", "BIGINT"), ("latency_p50_ns", "BIGINT"), ("latency_p99_ns", "BIGINT"),
    ("latency_max_ns", "BIGINT"), ("call_latency_p50_ns", "BIGINT"),
    ("call_latency_p99_ns", "BIGINT"), ("server_time_p50_ns", "BIGINT"),
    ("server_time_p99_ns", "BIGINT"), ("offered_per_s", "DOUBLE"), ("achieved_per_s", "DOUBLE"),
)
"""one row per call edge (a client node's calls of a service, its server node's side of them),
in the result's order: the calls sent, answered, timed out, failed; the server's own count of
that client's requests; latency from the intended call time (``latency_*``) and from the actual
call (``call_latency_*``), and the server's time per call (callback start to reply)"""

GRAPH_TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "graph_runs": GRAPH_RUN_COLUMNS, "graph_edges": GRAPH_EDGE_COLUMNS,
    "graph_chains": GRAPH_CHAIN_COLUMNS, "graph_nodes": GRAPH_NODE_COLUMNS,
    "graph_calls": GRAPH_CALL_COLUMNS,
}
