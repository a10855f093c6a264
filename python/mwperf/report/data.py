"""What a report shows, read from the results catalogue (never by walking folders): the runs,
their points with every catalogue column, their graph runs (graph_data.py), each point's
latency histogram (from its result, read as v3 with its stream view whatever version wrote it:
result/load.py), per-topic summaries, warnings, daemons, the per-second
series and, for points with raw samples, the per-message latency downsampled in DuckDB.

Large runs stay cheap: the distribution comes from the HDR histogram the agent stored (a few
thousand buckets at most), and raw samples are reduced to at most ``MESSAGE_BUCKETS`` buckets
per point by one DuckDB aggregation over the Parquet file, keeping each bucket's min and max.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from ..security.modes import mode_label
from ..errors import RunError
from ..result.load import NotReadable, as_stream, parse_result
from ..store.catalogue import connect
from ..show.table import first_message_ns
from ..store.catalogue import dict_rows as _rows
from .graph_data import GraphRun, load_graphs
from .select import resolve_runs

MESSAGE_BUCKETS = 1000
"""per-message series are reduced to at most this many buckets per point (min/max kept)"""


@dataclass
class Bucket:
    """A range of consecutive messages of a point: first sequence number, min, mean, max."""

    seq: int
    min_ns: float
    mean_ns: float
    max_ns: float


@dataclass
class Point:
    """One measured point: its catalogue row (``row``, column name -> value) and its result's
    blocks a report needs beyond the columns."""

    row: dict[str, Any]
    histogram: list[tuple[int, int]]
    topics: list[dict[str, Any]] = field(default_factory=list)
    """topics rows plus 'histogram', one per topic (one row, topic 0, for a single topic)"""
    warnings: list[dict[str, Any]] = field(default_factory=list)
    daemons: list[dict[str, Any]] = field(default_factory=list)
    processes: dict[str, dict[str, Any]] = field(default_factory=dict)
    """role -> the agent's process block (getrusage)"""
    source: dict[str, Any] | None = None
    """for an imported point: the tool and file it came from"""
    outage_s: tuple[float, float] | None = None
    """a scheduled link outage (--link outage=START+LENGTH) in seconds of the measurement's
    time axis: exact or approximate, see :func:`_outage`"""
    outage_exact: bool = False
    """``outage_s`` is the measured window (not an estimate)"""
    message_bytes: int | None = None
    """bytes per message as measured (payload + mwperf header; transport framing not counted)"""
    message_bytes_per_s: float | None = None
    topic_histograms: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    """topic -> its response histogram (from the result's per_topic)"""
    series: list[dict[str, Any]] = field(default_factory=list)
    messages: list[Bucket] = field(default_factory=list)
    bridge: dict[str, Any] | None = None
    """the result's ``bridge`` section (--bridge points: which bridge, or ``direct``)"""
    profile: dict[str, Any] | None = None
    """the result's ``profile`` section (--profile: top functions per process)"""
    alloc_sites: dict[str, Any] | None = None
    """the result's ``alloc_sites`` section (--alloc-sites: top call sites per agent)"""
    layers: dict[str, Any] | None = None
    """the result's ``layers`` section (--layers: where each message's time goes, per layer)"""
    resources: dict[str, Any] | None = None
    """the result's ``resources`` (each process's RSS, fds, threads, live heap per second)"""
    gates: list[dict[str, Any]] = field(default_factory=list)
    """the result's ``gates`` (--gate, a scenario's gates:)"""
    link: str | None = None
    """the emulated link the point crossed (its ``--link`` spec, or a scenario's hosts as
    JSON); None on one machine"""
    security: dict[str, Any] | None = None
    """with --secure: ``mode``, and with a tunnel its slowest ``handshake_ms`` and its
    wireguard-go's ``tunnel_cpu_s`` (report/security.py)"""

    @property
    def point_id(self) -> str:
        return str(self.row["point_id"])

    @property
    def status(self) -> str:
        return str(self.row["status"])

    def get(self, column: str) -> Any:
        """The catalogue column ``column`` (None when NULL)."""
        return self.row.get(column)


@dataclass
class Run:
    """One run (a single point, a graph run, a sweep or an import) and its points in measuring
    order."""

    row: dict[str, Any]
    points: list[Point]
    graphs: list[GraphRun] = field(default_factory=list)
    """its graph runs (graph_data.py): the run itself (kind graph) or a sweep's graph points"""

    @property
    def run_id(self) -> str:
        return str(self.row["run_id"])


def load_runs(root: Path, wanted: list[str], messages: bool = True) -> list[Run]:
    """The runs ``wanted`` names (ids, prefixes, 'latest') with everything a report draws."""
    with connect(root, read_only=True) as con:
        run_ids = resolve_runs(con, wanted)
        return [load_run(con, run_id, messages) for run_id in run_ids]


def load_run(con: duckdb.DuckDBPyConnection, run_id: str, messages: bool = True) -> Run:
    """One run with its points, read through the open catalogue connection ``con``."""
    run_row = _rows(con, "SELECT * FROM runs WHERE run_id = ?", [run_id])[0]
    points = [_point(row) for row in _rows(
        con, "SELECT * FROM points WHERE run_id = ? ORDER BY point_index NULLS LAST, repetition,"
        " started_at, point_id", [run_id])]
    by_id = {p.point_id: p for p in points}
    if by_id:
        ids = list(by_id)
        for row in _rows(con, "SELECT * FROM warnings WHERE point_id IN (SELECT unnest(?)) "
                         "ORDER BY point_id, seq", [ids]):
            by_id[row["point_id"]].warnings.append(row)
        for row in _rows(con, "SELECT * FROM series WHERE point_id IN (SELECT unnest(?)) "
                         "ORDER BY point_id, t_s", [ids]):
            by_id[row["point_id"]].series.append(row)
        _attach_topics(con, ids, by_id)
        if messages:
            sampled = [p.point_id for p in points if p.get("samples")]
            for point_id, buckets in message_buckets(con, sampled).items():
                by_id[point_id].messages = buckets
    return Run(run_row, points, load_graphs(con, run_id))


def message_buckets(con: duckdb.DuckDBPyConnection, point_ids: list[str]
                    ) -> dict[str, list[Bucket]]:
    """Per point, its raw samples' response latency in at most MESSAGE_BUCKETS buckets of
    consecutive sequence numbers (min, mean, max each), computed by DuckDB."""
    if not point_ids:
        return {}
    found: dict[str, list[Bucket]] = {}
    rows = con.execute(
        "WITH s AS (SELECT point_id, seq, response_ns FROM samples WHERE point_id IN "
        "(SELECT unnest(?)) AND response_ns IS NOT NULL), "
        "n AS (SELECT point_id, greatest(1, ceil((max(seq) - min(seq) + 1) / ?))::BIGINT AS "
        "width, min(seq) AS first FROM s GROUP BY point_id) "
        "SELECT s.point_id, min(s.seq), min(response_ns), avg(response_ns), max(response_ns) "
        "FROM s JOIN n USING (point_id) GROUP BY s.point_id, (s.seq - n.first) // n.width "
        "ORDER BY 1, 2", [point_ids, MESSAGE_BUCKETS]).fetchall()
    for point_id, seq, low, mean, high in rows:
        found.setdefault(point_id, []).append(Bucket(seq, low, mean, high))
    return found


def _attach_topics(con: duckdb.DuckDBPyConnection, ids: list[str], by_id: dict[str, Point]
                   ) -> None:
    for row in _rows(con, "SELECT * FROM topics WHERE point_id IN (SELECT unnest(?)) "
                     "ORDER BY point_id, topic", [ids]):
        point = by_id[row["point_id"]]
        row["histogram"] = point.topic_histograms.get(row["topic"], point.histogram)
        point.topics.append(row)


def _point(row: dict[str, Any]) -> Point:
    result = _read(row)
    measurement = result.get("measurement") or {}
    processes = {a.get("role"): a.get("process") or {} for a in result.get("agents") or []}
    topics = {int(t.get("topic", i)): _histogram(t.get("response") or {})
              for i, t in enumerate(result.get("per_topic") or [])}
    return Point(row=row, histogram=_histogram(measurement.get("response") or {}),
                 daemons=list(result.get("daemons") or []), processes=processes,
                 source=result.get("source"), outage_s=_outage(result),
                 outage_exact=exact_outage(result) is not None,
                 message_bytes=measurement.get("message_bytes"),
                 message_bytes_per_s=(measurement.get("throughput") or {}).get(
                     "message_bytes_per_s"), topic_histograms=topics,
                 bridge=result.get("bridge"), profile=result.get("profile"),
                 alloc_sites=result.get("alloc_sites"),
                 layers=result.get("layers") if isinstance(result.get("layers"), dict) else None,
                 resources=result.get("resources"), gates=list(result.get("gates") or []),
                 link=_link(result), security=_security(result))


def _link(result: dict[str, Any]) -> str | None:
    """The point's link setting as text (not a catalogue column)."""
    link = (result.get("config") or {}).get("link")
    return link if link is None or isinstance(link, str) else json.dumps(link, sort_keys=True)


def _security(result: dict[str, Any]) -> dict[str, Any] | None:
    """What report/security.py needs of a --secure point's result (None: not secured)."""
    config = result.get("config") or {}
    mode = config.get("secure")
    if not mode:
        return None
    mode = mode_label(mode, config.get("opts") or ())
    tunnel = (result.get("link") or {}).get("tunnel") or {}
    shakes = [h["ms"] for h in tunnel.get("handshakes") or [] if h.get("ms") is not None]
    return {"mode": mode, "handshake_ms": max(shakes) if shakes else None,
            "tunnel_cpu_s": sum((tunnel.get("cpu_s") or {}).values()) if tunnel else None}


def _read(row: dict[str, Any]) -> dict[str, Any]:
    """The point's result, from its catalogue row's copy of the document as written, read as
    v3 with its stream view (result/load.py), whatever version wrote it."""
    where = f"the catalogue's point {row['point_id']} ({row.get('folder')})"
    try:
        return as_stream(parse_result(json.loads(row.pop("result")), where, owned=True))
    except (NotReadable, ValueError) as exc:
        raise RunError(str(exc) if isinstance(exc, NotReadable) else
                       f"{where}: its result is not JSON ({exc})") from None


def _outage(result: dict[str, Any]) -> tuple[float, float] | None:
    """The link outage on the per-second axis, which starts at the end of the warm-up.

    Exact when the result has the outage window and the series' origin on one clock (the
    ``resilience`` section, python/mwperf/resilience.py). Otherwise (older results) the longer
    direction's scheduled outage, moved back by the warm-up and the discovery time: the agents'
    start-up (tens of ms) is not recorded and makes that approximate."""
    exact = exact_outage(result)
    if exact is not None:
        return exact
    link = result.get("link") or {}
    spans = [(d.get("outage_at_ns") or 0, d.get("outage_ns") or 0)
             for d in (link.get("up") or {}, link.get("down") or {}) if d.get("outage_ns")]
    if not spans:
        return None
    at_ns, length_ns = max(spans, key=lambda span: span[1])
    discovery = result.get("discovery") or {}
    before = ((result.get("config") or {}).get("warmup_ns") or 0) + \
        (first_message_ns(discovery) or 0)
    start = (at_ns - before) / 1e9
    return start, start + length_ns / 1e9


def exact_outage(result: dict[str, Any]) -> tuple[float, float] | None:
    """The measured outage window in seconds of the series' axis; None when not recorded."""
    outage = (result.get("resilience") or {}).get("outage") or {}
    origin = outage.get("series_origin_ns")
    if origin is None:
        return None
    return (outage["start_ns"] - origin) / 1e9, (outage["end_ns"] - origin) / 1e9


def _histogram(stats: dict[str, Any]) -> list[tuple[int, int]]:
    return [(int(v), int(c)) for v, c in stats.get("histogram") or [] if c]

