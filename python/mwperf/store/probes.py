"""Saved probes: ``mwperf probe`` writes ``<results>/<stamp>-probe-<kind>-<tag>/`` with
``probe.json`` (the summary, the source of truth) and ``probe.txt`` (the table it printed), and
one catalogue row per topic in the ``probes`` table (``mwperf query "SELECT * FROM probes"``);
``mwperf show FOLDER`` prints the table again."""

import json
import secrets
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..probe.qos_text import qos_text
from .catalogue import connect
from .schema import PROBE_COLUMNS, PROBE_ROS2_COLUMNS

PROBE_NAME = "probe.json"
TEXT_NAME = "probe.txt"


def save_probe(root: Path, document: dict[str, Any], text: str) -> Path:
    """Write the probe's folder under ``root`` and catalogue it; returns the folder."""
    started = datetime.fromtimestamp(document["start_ns"] / 1e9, timezone.utc)
    kind = str(document["system"]).split(" ", 1)[0]
    folder = root / f"{started:%Y%m%dT%H%M%SZ}-probe-{kind}-{secrets.token_hex(2)}"
    partial = root / f".{folder.name}.partial"
    partial.mkdir(parents=True)
    (partial / PROBE_NAME).write_text(json.dumps(document, indent=2) + "\n")
    (partial / TEXT_NAME).write_text(text)
    partial.rename(folder)
    ingest_probe(folder, document)
    return folder


def probe_rows(document: dict[str, Any], probe_id: str, folder: str) -> list[dict[str, Any]]:
    """The catalogue rows of one probe: one per topic."""
    started = datetime.fromtimestamp(document["start_ns"] / 1e9, timezone.utc)
    common = {"probe_id": probe_id, "folder": folder, "started_at": started.replace(tzinfo=None),
              "system": document["system"], "duration_ns": document["duration_ns"],
              "probe_cpu_s": document.get("probe_cpu_s"),
              "probe_max_rss_bytes": document.get("probe_max_rss_bytes")}
    derived = {name for name, _ in PROBE_ROS2_COLUMNS}
    names = [name for name, _ in PROBE_COLUMNS if name not in derived]
    incompatible = (document.get("ros2") or {}).get("incompatibilities") or []
    return [common | {k: t.get(k) for k in names if k not in common}
            | {"bandwidth_bps": t.get("bandwidth_bps")} | ros2_columns(t, incompatible)
            for t in document.get("topics") or []]


def ros2_columns(topic: dict[str, Any], incompatible: list[dict[str, Any]]) -> dict[str, Any]:
    """A ROS 2 probe topic's catalogue columns (schema.PROBE_ROS2_COLUMNS); {} for the topics of
    other probes (no ``dds_topic``: their columns stay NULL)."""
    if "dds_topic" not in topic:
        return {}
    row: dict[str, Any] = {k: topic.get(k) for k in ("dds_topic", "ros", "subscribed", "why_not",
                                                       "lost")}
    for key, role in (("publishers", "publisher"), ("subscribers", "subscriber")):
        alive = [e for e in topic.get(key) or [] if e.get("alive", True)]
        row[key] = len(alive)
        row[f"{role}_nodes"] = ", ".join(dict.fromkeys(
            str(e.get("node") or e.get("endpoint")) for e in alive)) or None
        row[f"{role}_qos"] = " | ".join(dict.fromkeys(
            qos_text(e.get("qos") or {}) for e in alive)) or None
    texts = [i["text"] for i in incompatible if i.get("topic") == topic.get("topic")]
    row["incompatibilities"] = "\n".join(texts) or None
    return row


def ingest_probe(folder: Path, document: dict[str, Any] | None = None) -> None:
    """Catalogue the probe folder (its probe.json unless ``document``); replaces its rows."""
    document = document or json.loads((folder / PROBE_NAME).read_text())
    root = folder.parent
    rows = probe_rows(document, folder.name, folder.name)
    names = [name for name, _ in PROBE_COLUMNS]
    with connect(root, views=False) as con:
        con.execute("BEGIN")
        con.execute("DELETE FROM probes WHERE probe_id = ?", [folder.name])
        if rows:
            con.executemany(f"INSERT INTO probes ({', '.join(names)}) VALUES "
                            f"({', '.join('?' for _ in names)})",
                            [[row.get(n) for n in names] for row in rows])
        con.execute("COMMIT")


def is_probe_folder(path: Path) -> bool:
    return (path / PROBE_NAME).is_file()


def probe_text(folder: Path) -> str:
    """What the probe printed (``mwperf show``)."""
    text = folder / TEXT_NAME
    return text.read_text() if text.is_file() else json.dumps(
        json.loads((folder / PROBE_NAME).read_text()), indent=2) + "\n"
