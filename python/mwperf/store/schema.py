"""The catalogue's tables, its schema version, and migrate-or-refuse on open.

Tables: ``runs`` (one per mwperf invocation: a single point or a sweep), ``points`` (one per
measured point, every config field and summary statistic as a column plus the full result as
JSON), ``topics`` (per-topic summaries; one row for a single-topic point), ``subscribers``
(each subscriber of a ``--subscribers N`` point), ``warnings``, ``probes`` (saved ``mwperf
probe`` topics), the graph runs (``graph_runs``, ``graph_edges``, ``graph_chains``,
``graph_nodes``, ``graph_calls``: graph_tables.py) and ``schema_version`` (one row). A catalogue written by another
schema version is migrated when a migration is known, otherwise refused with the command that
recreates it from the folders.
"""

from typing import Any

import duckdb

from ..errors import RunError
from ..layer_names import NAMES as LAYER_NAMES
from .graph_tables import GRAPH_TABLES

SCHEMA_VERSION = 17
"""2: the resilience columns (time to connect, outage lost/recovery/session); 3: the
``subscribers`` table; 4: the cost columns (bytes on the wire, allocations per message); 5: the
``probes`` table; 6: ``topics.address`` (``topics.name`` is the topic's name: a replay's recorded
topic, else ``topic <i>``); 7: the graph tables (``graph_runs``, ``graph_edges``,
``graph_chains``, ``graph_nodes``); 8: service points (the calls' columns, and CPU, RSS and
allocations of the client and server roles); 9: ``graph_calls`` (a graph's call edges); 10: the
throughput columns (``--mode throughput``: delivered bytes/s, offered and sent rates, the
sender's blocked time, CPU per message and per MB, subscribers); 11: the layer columns
(``--layers``: each layer's p50, p99 and share, the method, messages split and measured); 12:
the ROS 2 probe columns of ``probes`` (publishers, subscribers, their nodes and QoS, samples
lost, bandwidth, incompatibilities; the probe's peak memory); 13: ``graph_runs.kind`` and every
stream point's nodes, edges, chains and calls in the graph tables (its result read as v3); 14:
``points.keep_awake``; 15: the graph tables' layers; 16: ``points.secure`` (--secure: the mode,
NULL for a plain point); 17: ``points.discovery_open_ns`` (opening the sender's endpoints, a TLS
handshake included; NULL for points measured before it was)"""

CONFIG_COLUMNS: tuple[tuple[str, str], ...] = (
    ("transport", "VARCHAR"), ("mode", "VARCHAR"), ("rate", "DOUBLE"), ("payload", "VARCHAR"),
    ("payload_bytes", "BIGINT"), ("duration_ns", "BIGINT"), ("count", "BIGINT"),
    ("warmup_ns", "BIGINT"), ("peer_timeout_ns", "BIGINT"), ("busy_poll", "BOOLEAN"),
    ("prevent_cpu_idle", "BOOLEAN"), ("spin_margin_ns", "BIGINT"), ("samples", "BOOLEAN"),
    ("reliability", "VARCHAR"), ("history", "VARCHAR"), ("depth", "BIGINT"),
    ("durability", "VARCHAR"), ("opts", "VARCHAR"), ("discovery_timeout_ns", "BIGINT"),
    ("pong", "VARCHAR"), ("topics", "BIGINT"), ("executor", "VARCHAR"), ("busy_loop_ns", "BIGINT"),
    ("keep_awake", "BOOLEAN"), ("secure", "VARCHAR"),
)
"""the point configuration, one column per field (config fields not listed are in ``result``)"""
CONFIG_ABSENT: dict[str, Any] = {"keep_awake": False}
"""a config column's value for a result written before its field existed"""

STAT_FIELDS = ("count", "min", "mean", "p50", "p90", "p99", "p999", "max", "stddev")
LATENCIES = {"latency": "response", "service": "service"}
"""column prefix -> the measurement's stats block (response latency, service time)"""
ACCOUNTING = ("sent", "received", "lost", "duplicated", "reordered", "corrupted")
MEASUREMENT_COLUMNS: tuple[tuple[str, str], ...] = (
    *((f"{prefix}_{field}{'' if field == 'count' else '_ns'}",
       "DOUBLE" if field in ("mean", "stddev") else "BIGINT")
      for prefix in LATENCIES for field in STAT_FIELDS),
    *((name, "BIGINT") for name in ACCOUNTING),
    ("loss_pct", "DOUBLE"), ("msgs_per_s", "DOUBLE"), ("jitter_rfc3550_ns", "DOUBLE"),
    ("late_fraction", "DOUBLE"),
)
"""what a measurement summarizes to, for a point and for each of its topics"""

ROLES = ("ping", "pong", "pub", "sub", "client", "server")
PROCESS_COLUMNS: tuple[tuple[str, str], ...] = (
    *((f"{role}_{what}", kind) for role in ROLES
      for what, kind in (("cpu_s", "DOUBLE"), ("cpu_pct", "DOUBLE"), ("rss_kib", "BIGINT"))),
    ("daemons_cpu_s", "DOUBLE"), ("daemons_rss_kib", "BIGINT"),
    ("discovery_matched_ns", "BIGINT"), ("discovery_first_reply_ns", "BIGINT"),
    ("discovery_open_ns", "BIGINT"),
)
"""CPU and peak RSS per agent role and of the daemons (summed), and the discovery times"""

RESILIENCE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("time_to_connect_ns", "BIGINT"), ("outage_sent", "BIGINT"), ("outage_lost", "BIGINT"),
    ("outage_recovery_ns", "BIGINT"), ("outage_session", "VARCHAR"),
)
"""the result's ``resilience`` section (python/mwperf/resilience.py); outage_* NULL without one"""

COST_COLUMNS: tuple[tuple[str, str], ...] = (
    ("wire_up_bytes_per_msg", "DOUBLE"), ("wire_down_bytes_per_msg", "DOUBLE"),
    ("wire_setup_bytes", "BIGINT"), ("wire_idle_bytes_per_s", "DOUBLE"),
    *((f"{role}_allocs_per_msg", "DOUBLE") for role in ROLES),
)
"""what the middleware costs (docs/costs.md): --wire-bytes' figures of the first wire (IP
bytes per measured message each way, setup bytes, idle bytes/s) and --count-allocs' heap
allocations per message in the steady state per agent role (several agents of a role: the
largest); NULL when not measured"""

SERVICE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("in_flight", "BIGINT"), ("clients", "BIGINT"), ("reply_payload_bytes", "BIGINT"),
    ("server_work_ns", "BIGINT"), ("call_timeout_ns", "BIGINT"), ("calls_timeouts", "BIGINT"),
    ("calls_errors", "BIGINT"), ("calls_unmatched", "BIGINT"), ("server_time_p50_ns", "BIGINT"),
    ("server_time_p99_ns", "BIGINT"),
)
"""a service point's calls (``--mode service``, docs/services.md): its options, the calls
that timed out, failed or matched nothing, and the server's time per call; NULL for streams"""

THROUGHPUT_COLUMNS: tuple[tuple[str, str], ...] = (
    ("subscribers", "BIGINT"), ("delivery", "VARCHAR"), ("offered_per_s", "DOUBLE"),
    ("sent_per_s", "DOUBLE"), ("payload_bytes_per_s", "DOUBLE"),
    ("message_bytes_per_s", "DOUBLE"), ("wire_bytes_per_s", "DOUBLE"),
    ("checked_every", "BIGINT"), ("sending_s", "DOUBLE"), ("in_send_s", "DOUBLE"),
    ("blocked_s", "DOUBLE"), ("refused", "BIGINT"), ("send_p99_ns", "BIGINT"),
    *((f"{side}_cpu_{what}", "DOUBLE") for side in ("pub", "sub")
      for what in ("per_msg_us", "per_mb_ms")),
)
"""a throughput point's figures (``--mode throughput``, docs/throughput.md; NULL otherwise, but
``subscribers`` for every point and ``payload_bytes_per_s``/``message_bytes_per_s`` wherever
the result has them): the subscribers (``--subscribers``), the delivery (reliable or
best-effort), the offered rate (NULL = as fast as possible), the publisher's accepted
messages/s, the delivered bytes/s (payload, payload + header, on the wire where counted), the
payload check's sampling (1 = every message), the sender's time sending, inside the
middleware's send calls and held back by flow control, sends refused, its p99 send call, and
each side's steady-state CPU per message (µs) and per MB of payload (ms; pub: per accepted
message, sub: summed over the subscribers, per delivered message). Delivered msgs/s is ``msgs_per_s``; its loss is ``loss_pct`` (the
publisher's sent count against the delivered one)."""

LAYER_COLUMNS: tuple[tuple[str, str], ...] = (
    *((f"layer_{name}_{what}", kind) for name in LAYER_NAMES
      for what, kind in (("p50_ns", "BIGINT"), ("p99_ns", "BIGINT"), ("share", "DOUBLE"))),
    ("layers_method", "VARCHAR"), ("layers_split", "BIGINT"), ("layers_messages", "BIGINT"),
)
"""the result's ``layers`` section (``--layers``, docs/layers.md): per layer (layer_names.py)
its p50 and p99 in ns and its share of the mean latency (NULL where the point has no such
layer or it was not observable: shared memory has no system call to split at, and its
``middleware_transport`` stands for send path + kernel + receive path); the method
(``ld_preload``, or ``none`` when nothing could be observed), the measured messages split and
all measured messages. Round trips: both directions summed. NULL without --layers."""

POINT_KEYS: tuple[tuple[str, str], ...] = (
    ("point_id", "VARCHAR PRIMARY KEY"), ("run_id", "VARCHAR NOT NULL"),
    ("point_index", "INTEGER"), ("repetition", "INTEGER"), ("folder", "VARCHAR NOT NULL"),
    ("started_at", "TIMESTAMP"), ("finished_at", "TIMESTAMP"), ("status", "VARCHAR NOT NULL"),
    ("status_reason", "VARCHAR"), ("mwperf_version", "VARCHAR"), ("agent_version", "VARCHAR"),
)
POINT_COLUMNS = (POINT_KEYS + CONFIG_COLUMNS + MEASUREMENT_COLUMNS + PROCESS_COLUMNS
                 + RESILIENCE_COLUMNS + COST_COLUMNS + SERVICE_COLUMNS + THROUGHPUT_COLUMNS
                 + LAYER_COLUMNS + (("result", "JSON NOT NULL"),))
TOPIC_COLUMNS = (("point_id", "VARCHAR NOT NULL"), ("topic", "INTEGER NOT NULL"),
                 ("name", "VARCHAR"), ("address", "VARCHAR")) + MEASUREMENT_COLUMNS
"""one row per topic of a point (one, topic 0, for a single topic): its name (a replay's
recorded topic, else ``topic <i>``; NULL for a single topic that was not a replay), its address
(NULL for a single topic) and its measurement's summary"""
SUBSCRIBER_COLUMNS = (("point_id", "VARCHAR NOT NULL"), ("subscriber", "INTEGER NOT NULL"),
                      ("name", "VARCHAR"), ("status", "VARCHAR"),
                      ("status_reason", "VARCHAR")) + MEASUREMENT_COLUMNS
"""one row per subscriber of a point with ``--subscribers N`` (none for one subscriber: the
point's own row is that subscriber)"""
RUN_COLUMNS: tuple[tuple[str, str], ...] = (
    ("run_id", "VARCHAR PRIMARY KEY"), ("kind", "VARCHAR NOT NULL"), ("scenario", "VARCHAR"),
    ("started_at", "TIMESTAMP"), ("ended_at", "TIMESTAMP"), ("status", "VARCHAR NOT NULL"),
    ("mwperf_version", "VARCHAR"), ("agent_version", "VARCHAR"), ("hostname", "VARCHAR"),
    ("kernel", "VARCHAR"), ("cpu_model", "VARCHAR"), ("cores", "INTEGER"), ("host", "JSON"),
    ("folder", "VARCHAR NOT NULL"),
)
WARNING_COLUMNS = (("point_id", "VARCHAR NOT NULL"), ("seq", "INTEGER NOT NULL"),
                   ("code", "VARCHAR NOT NULL"), ("message", "VARCHAR NOT NULL"),
                   ("hint", "VARCHAR"))
PROBE_ROS2_COLUMNS: tuple[tuple[str, str], ...] = (
    ("probe_max_rss_bytes", "BIGINT"), ("bandwidth_bps", "DOUBLE"), ("dds_topic", "VARCHAR"),
    ("ros", "BOOLEAN"), ("publishers", "BIGINT"), ("subscribers", "BIGINT"),
    ("publisher_nodes", "VARCHAR"), ("subscriber_nodes", "VARCHAR"), ("publisher_qos", "VARCHAR"),
    ("subscriber_qos", "VARCHAR"), ("subscribed", "BOOLEAN"), ("why_not", "VARCHAR"),
    ("lost", "BIGINT"), ("incompatibilities", "VARCHAR"),
)
"""added by schema 12: the probe's peak memory and each topic's bytes/s (every probe, where
measured), and what a ROS 2 probe knows of a topic (NULL for other probes): its DDS name, whether
it is a ROS 2 topic, the publishers and subscribers alive at the end (counts; their nodes, or
endpoint GUIDs without one, joined by ', '; their distinct compact QoS, e.g.
``reliable/volatile/keep-last:10``, joined by ' | '), whether the probe subscribed and why not,
the samples DDS said were lost to the probe, and the QoS incompatibilities on the topic (one
"no data flows from W to R on T: ..." per line; NULL when none)"""
PROBE_COLUMNS: tuple[tuple[str, str], ...] = (
    ("probe_id", "VARCHAR NOT NULL"), ("folder", "VARCHAR NOT NULL"),
    ("started_at", "TIMESTAMP"), ("system", "VARCHAR NOT NULL"), ("duration_ns", "BIGINT"),
    ("probe_cpu_s", "DOUBLE"), ("topic", "VARCHAR NOT NULL"), ("msgtype", "VARCHAR"),
    ("count", "BIGINT"), ("rate_hz", "DOUBLE"), ("rate_cv", "DOUBLE"), ("gap_p50_ns", "BIGINT"),
    ("gap_p99_ns", "BIGINT"), ("gap_max_ns", "BIGINT"), ("gaps", "INTEGER"),
    ("bursts", "INTEGER"), ("size_p50", "BIGINT"), ("size_max", "BIGINT"),
    ("age_p50_ns", "BIGINT"), ("age_p99_ns", "BIGINT"),
) + PROBE_ROS2_COLUMNS
"""one row per topic of a saved ``mwperf probe`` (its folder holds probe.json: the source)"""
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "runs": RUN_COLUMNS, "points": POINT_COLUMNS, "topics": TOPIC_COLUMNS,
    "subscribers": SUBSCRIBER_COLUMNS, "warnings": WARNING_COLUMNS, "probes": PROBE_COLUMNS,
    **GRAPH_TABLES,
}

class SchemaMismatch(RunError):
    """The catalogue was written by a schema version this mwperf cannot use."""


def create(con: duckdb.DuckDBPyConnection) -> None:
    """Create every table of an empty catalogue."""
    for name, columns in TABLES.items():
        body = ", ".join(f"{column} {kind}" for column, kind in columns)
        con.execute(f"CREATE TABLE {name} ({body})")
    con.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    con.execute("INSERT INTO schema_version VALUES (?)", [SCHEMA_VERSION])


def version_of(con: duckdb.DuckDBPyConnection) -> int | None:
    """The catalogue's schema version; None when it has no schema_version table (the cheap
    check first: listing the tables costs ~10 times a query, and this runs for every point)."""
    try:
        found = con.execute("SELECT max(version) FROM schema_version").fetchone()
    except duckdb.CatalogException:
        return None
    return found[0] if found else None
