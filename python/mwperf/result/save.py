"""The document a result is saved as (``result.json``) and printed as (``mwperf run --json``)
once the writers write v3 (docs/one-path-plan.md step 7): the result as v3 (upgrade.py) with, for
a stream kind, its stream view in ``stream`` (stream.py; docs/architecture.md §2.3). The view is
derived, never an input: every reader reads the document through load.py, which derives it
again from the flows. Pure: nothing here writes a file yet."""

from typing import Any

from .stream import stream_view
from .upgrade import STREAM_KINDS, upgrade


def written(result: dict[str, Any]) -> dict[str, Any]:
    """``result`` (any version load.py reads) as the v3 document saved for it."""
    document = upgrade(result)
    document.pop("stream", None)  # derived again below, from this document's own flows
    if document["config"].get("kind") in STREAM_KINDS:
        document["stream"] = stream_view(document)
    return document
