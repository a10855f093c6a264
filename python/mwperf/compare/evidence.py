"""What a comparison tests on, per point: quantiles of batches of consecutive messages (the
method of batch means), or failing that the whole distribution grouped by value.

Why batches: successive messages are not independent — one stall of the machine delays many
in a row — so a test that treats 10^5 messages as 10^5 independent draws finds "significant"
differences between two identical runs (observed on this machine: the p99 of two back-to-back
udp runs differed 2×, and an order-statistic interval over the raw samples called it a
regression). Splitting each run into consecutive batches and comparing the batches' quantiles
keeps a burst inside one or two batches, where it belongs.

Sources, in order: raw samples (``BATCHES`` batches by sequence number, computed in DuckDB,
each holding at least ``MIN_BATCH[q]`` messages), else the per-second series (each second a
batch, when both runs have at least ``MIN_BATCHES`` usable seconds), else None (the caller
falls back to the grouped distribution and says it assumes independent messages).
"""

from dataclasses import dataclass

import duckdb

from ..report.data import Point

BATCHES = 20
MIN_BATCHES = 5
MIN_BATCH = {0.5: 10, 0.99: 100}
"""messages a batch needs for its quantile to mean something (a p99 of 10 is the max)"""
SERIES_COLUMN = {0.5: "p50_ns", 0.99: "p99_ns"}
Grouped = list[tuple[float, int]]


@dataclass
class Evidence:
    """Reads a point's evidence through an open catalogue connection (with its views)."""

    con: duckdb.DuckDBPyConnection

    def batches(self, point: Point, q: float) -> tuple[list[float], str] | None:
        """The q-quantiles of the point's batches, and what the batches are."""
        size = MIN_BATCH[q]
        count = point.get("latency_count") or 0
        if point.get("samples") and count // size >= MIN_BATCHES:
            batches = min(BATCHES, count // size)
            values = [row[0] for row in self.con.execute(
                "WITH s AS (SELECT seq, response_ns FROM samples WHERE point_id = $1 AND "
                "response_ns IS NOT NULL), r AS (SELECT min(seq) AS lo, max(seq) - min(seq) + 1"
                " AS span FROM s) SELECT quantile_disc(response_ns, $2) FROM s, r "
                "GROUP BY (s.seq - r.lo) * $3 // r.span ORDER BY 1",
                [point.point_id, q, batches]).fetchall()]
            if len(values) >= MIN_BATCHES:
                return values, "batches of consecutive raw samples"
        column = SERIES_COLUMN[q]
        seconds = [row[column] for row in point.series
                   if row.get(column) is not None and (row.get("received") or 0) >= size]
        if len(seconds) >= MIN_BATCHES:
            return [float(v) for v in seconds], "seconds (per-second series)"
        return None

    def grouped(self, point: Point) -> tuple[Grouped, str]:
        """The point's response latencies grouped by value: raw samples when it has them,
        else its HDR histogram."""
        if point.get("samples"):
            rows = self.con.execute("SELECT response_ns, count(*) FROM samples WHERE point_id = ?"
                                    " AND response_ns IS NOT NULL GROUP BY 1 ORDER BY 1",
                                    [point.point_id]).fetchall()
            if rows:
                return [(float(v), int(c)) for v, c in rows], "raw samples"
        return [(float(v), c) for v, c in point.histogram], "HDR histograms"
