"""One reader of saved results: ``load_result`` reads any result mwperf has written (a v1/v2
``run-result``, a v1 ``graph-result``, a v3 ``result``) and gives it as v3 (upgrade.py);
``as_stream`` adds a stream kind's figures as a v2 run-result states them (stream.py), for the
readers that still read those. docs/one-path-plan.md step 5."""

import json
from pathlib import Path
from typing import Any

from .stream import stream_view
from .upgrade import STREAM_KINDS, NotAResult, upgrade


class NotReadable(ValueError):
    """A file that is not a readable result; the message names the file and why."""


def load_result(path: Path) -> dict[str, Any]:
    """The result in ``path`` as v3."""
    return parse_result(read_document(path), str(path), owned=True)


def read_document(path: Path) -> Any:
    """The JSON document in ``path`` as it was written (for a reader that keeps it as written,
    as the catalogue does; ``parse_result`` reads it)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise NotReadable(f"{path}: not a readable result file ({exc})") from None


def parse_result(document: Any, where: str, owned: bool = False) -> dict[str, Any]:
    """``document`` (a result as JSON data, from ``where``) as v3. ``owned``: the caller parsed
    ``document`` for this call alone and keeps no other use of it: the v3 result may share its
    parts (upgrade.py's ``share``)."""
    try:
        return upgrade(document, share=owned)
    except NotAResult as exc:
        raise NotReadable(f"{where}: not an mwperf result ({exc})") from None
    except (KeyError, TypeError) as exc:
        raise NotReadable(f"{where}: not an mwperf result (a {type(exc).__name__} on "
                          f"{exc}: a field is missing or of the wrong kind)") from None


def written_as_graph_result(result: dict[str, Any]) -> bool:
    """Whether a v3 ``result`` was read from a v1 graph-result (an old graph run folder's
    graph-result.json)."""
    return (result.get("upgraded_from") or {}).get("kind") == "graph-result"


def is_stream(result: dict[str, Any]) -> bool:
    """Whether a v3 ``result`` is a stream kind's (it has a stream view), not a graph's."""
    return result["config"].get("kind") in STREAM_KINDS


def as_stream(result: dict[str, Any]) -> dict[str, Any]:
    """A stream kind's v3 ``result`` with its stream figures beside (measurement, per_topic,
    per_subscriber, agents, discovery); a graph result as it is."""
    return {**result, **stream_view(result)} if is_stream(result) else result
