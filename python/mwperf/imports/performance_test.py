"""Importing Apex.AI performance_test logs (``--logfile x.json`` or ``x.csv``).

Formats, as written by performance_test's outputs (json_output.cpp, csv_output.cpp,
analysis_result.cpp and experiment_configuration.cpp of Apex.AI's performance_test, read in
public copies of github.com/ApexAI/performance_test for the field names and units; no code
taken):
- JSON: one object with the experiment configuration (``com_mean_str``,
  ``rmw_implementation``, ``qos_reliability``, ``qos_durability``, ``qos_history_kind``,
  ``qos_history_depth``, ``rate``, ``msg_name``, ``max_runtime``, ``roundtrip_mode``, ...) and
  ``analysis_results``: one object per second with ``num_samples_received/sent/lost``,
  ``total_data_received`` (bytes), ``latency_min/max/mean`` (seconds), ``latency_n``,
  ``latency_M2`` and ``latency_variance`` (seconds²), ``sys_tracker_ru_utime/stime`` (ns),
  ``sys_tracker_ru_maxrss`` (KiB) and ``cpu_info_cpu_usage`` (%).
- CSV: the configuration as ``Key: value`` lines (``Experiment id``, ``Performance Test
  Version``, ``RMW Implementation``, ``Communication mean``, ``Publishing rate``, ``Topic name``
  — the message type, e.g. Array1k —, ``Roundtrip Mode``, ...), then a line
  ``---EXPERIMENT-START---``, then
  a header and one row per second, comma separated (padded with tabs): ``received``, ``sent``,
  ``lost``, ``data_received``, ``latency_min (ms)``, ``latency_max (ms)``, ``latency_mean (ms)``,
  ``latency_variance (ms)`` (the variance in s² scaled by 1000, as the tool prints it),
  the QoS on one ``QOS: Reliability: R Durability: D History kind: K History depth: N`` line,
  ``ru_utime``/``ru_stime`` (s), ``ru_maxrss`` (KiB), ``cpu_usage (%)``.
"""

import csv
import io
import json
import re
from pathlib import Path
from typing import Any

from ..errors import UsageError
from .summary import Imported, Interval, config

START_MARKER = "---EXPERIMENT-START---"
SIZE = re.compile(r"(\d+)([kKmM]?)$")
QOS_PART = re.compile(r"(Reliability|Durability|History kind|History depth):\s*(\S+)")


def load(path: Path) -> Imported:
    """The performance_test log ``path`` (JSON or CSV, told apart by its first character)."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read: {exc}") from None
    if text.lstrip().startswith("{"):
        return _from_json(path, text)
    return _from_csv(path, text)


def _from_json(path: Path, text: str) -> Imported:
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise UsageError(f"{path}: not valid JSON ({exc})") from None
    results = doc.get("analysis_results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise UsageError(f"{path}: not a performance_test JSON log (no 'analysis_results' "
                         f"list)")
    intervals = []
    for i, row in enumerate(results):
        if not isinstance(row, dict) or "num_samples_received" not in row:
            raise UsageError(f"{path}: analysis_results[{i}]: no 'num_samples_received'")
        n = int(row.get("latency_n", row["num_samples_received"]))
        intervals.append(Interval(
            received=int(row["num_samples_received"]), sent=_opt_int(row, "num_samples_sent"),
            lost=_opt_int(row, "num_samples_lost"), min_ns=_scaled(row, "latency_min", 1e9),
            max_ns=_scaled(row, "latency_max", 1e9), mean_ns=_scaled(row, "latency_mean", 1e9),
            m2_ns2=(row["latency_variance"] * 1e18 * n if "latency_variance" in row else None)))
    last = results[-1] if results else {}
    cpu = ((last.get("sys_tracker_ru_utime") or 0) + (last.get("sys_tracker_ru_stime") or 0)) / 1e9
    data = sum(r.get("total_data_received") or 0 for r in results)
    received = sum(i.received for i in intervals)
    cfg = _config(doc.get("rmw_implementation") or doc.get("com_mean_str"), doc.get("rate"),
                  doc.get("msg_name") or doc.get("topic_name"),
                  data / received if received else None,
                  doc.get("roundtrip_mode"), doc.get("qos_reliability"),
                  doc.get("qos_durability"), doc.get("qos_history_kind"),
                  doc.get("qos_history_depth"))
    return Imported({"tool": "performance_test", "format": "json", "file": path.name,
                     "id": doc.get("id"), "version": doc.get("perf_test_version")},
                    cfg, intervals, cpu_s=cpu if results else None,
                    max_rss_kib=last.get("sys_tracker_ru_maxrss"),
                    wall_s=float(len(results)) or None)


def _from_csv(path: Path, text: str) -> Imported:
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == START_MARKER)
    except StopIteration:
        raise UsageError(f"{path}: not a performance_test CSV log (no '{START_MARKER}' line)"
                         ) from None
    settings = {}
    for line in lines[:start]:
        key, sep, value = line.partition(":")
        if sep:
            settings[key.strip().lower()] = value.strip()
        for name, inner in QOS_PART.findall(line):  # "QOS: Reliability: RELIABLE Durability: ..."
            settings[name.lower()] = inner
    reader = csv.reader(io.StringIO("\n".join(lines[start + 1:])))
    rows = [[cell.strip() for cell in row] for row in reader if any(c.strip() for c in row)]
    if not rows:
        raise UsageError(f"{path}:{start + 2}: no header after '{START_MARKER}'")
    header = [h for h in rows[0] if h]
    wanted = ("received", "latency_mean (ms)")
    for name in wanted:
        if name not in header:
            raise UsageError(f"{path}:{start + 2}: header has no column '{name}' (found: "
                             f"{', '.join(header)})")
    intervals = []
    table = []
    for number, row in enumerate(rows[1:], start=start + 3):
        cells = [c for c in row if c != ""]
        if len(cells) < len(header):
            raise UsageError(f"{path}:{number}: {len(cells)} values, the header has "
                             f"{len(header)}")
        record = dict(zip(header, cells))
        try:
            n = int(float(record["received"]))
            intervals.append(Interval(
                received=n, sent=_opt_csv(record, "sent"), lost=_opt_csv(record, "lost"),
                min_ns=_ms(record, "latency_min (ms)"), max_ns=_ms(record, "latency_max (ms)"),
                mean_ns=_ms(record, "latency_mean (ms)"),
                m2_ns2=(float(record["latency_variance (ms)"]) / 1000 * 1e18 * n
                        if "latency_variance (ms)" in record else None)))
        except ValueError as exc:
            raise UsageError(f"{path}:{number}: not a number ({exc})") from None
        table.append(record)
    last = table[-1] if table else {}
    cpu = (float(last.get("ru_utime", 0)) + float(last.get("ru_stime", 0))) if last else None
    data = sum(float(r.get("data_received", 0)) for r in table)
    received = sum(i.received for i in intervals)
    cfg = _config(settings.get("rmw implementation") or settings.get("communication mean"),
                  settings.get("publishing rate") or settings.get("rate"),
                  settings.get("msg name") or settings.get("topic name"),
                  data / received if received else None, settings.get("roundtrip mode"),
                  settings.get("reliability"), settings.get("durability"),
                  settings.get("history kind"), settings.get("history depth"))
    rss = last.get("ru_maxrss")
    return Imported({"tool": "performance_test", "format": "csv", "file": path.name,
                     "id": settings.get("experiment id"),
                     "version": settings.get("performance test version")},
                    cfg, intervals, cpu_s=cpu,
                    max_rss_kib=int(float(rss)) if rss else None,
                    wall_s=float(len(table)) or None)


def _config(transport: Any, rate: Any, msg: Any, bytes_per_msg: float | None, roundtrip: Any,
            reliability: Any, durability: Any, history: Any, depth: Any) -> dict[str, Any]:
    payload_bytes = _msg_bytes(str(msg)) if msg else None
    if payload_bytes is None and bytes_per_msg:
        payload_bytes = int(round(bytes_per_msg))
    return config(
        transport=str(transport or "performance_test"),
        mode="roundtrip" if roundtrip and str(roundtrip).upper() not in ("NONE", "") else
        "oneway", rate=float(rate) if rate not in (None, "") else 0.0,
        payload=str(msg) if msg else "unknown", payload_bytes=payload_bytes or 0,
        reliability=_qos(reliability, {"RELIABLE": "reliable", "BEST_EFFORT": "best-effort"}),
        durability=_qos(durability, {"VOLATILE": "volatile",
                                     "TRANSIENT_LOCAL": "transient-local"}),
        history=_qos(history, {"KEEP_LAST": "keep-last", "KEEP_ALL": "keep-all"}),
        depth=int(depth) if depth not in (None, "") else None)


def _msg_bytes(name: str) -> int | None:
    """Array1k -> 1024, Array4m -> 4 MiB, Struct256 -> 256 (the size in performance_test's
    message names); None for other names."""
    match = SIZE.search(name)
    if not match:
        return None
    scale = {"": 1, "k": 1024, "m": 1024 ** 2}[match[2].lower()]
    return int(match[1]) * scale


def _qos(value: Any, mapping: dict[str, str]) -> str | None:
    return mapping.get(str(value).upper()) if value is not None else None


def _scaled(row: dict[str, Any], key: str, factor: float) -> float | None:
    return float(row[key]) * factor if row.get(key) is not None else None


def _opt_int(row: dict[str, Any], key: str) -> int | None:
    return int(row[key]) if row.get(key) is not None else None


def _opt_csv(record: dict[str, str], key: str) -> int | None:
    return int(float(record[key])) if record.get(key) not in (None, "") else None


def _ms(record: dict[str, str], key: str) -> float | None:
    return float(record[key]) * 1e6 if record.get(key) not in (None, "") else None
