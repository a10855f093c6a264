"""schema.validation_error asks jsonschema-rs first and jsonschema only for a document it
refuses: its answers must be jsonschema's alone, valid and invalid, for every kind — the golden
results (each run kind, a graph, their v3 upgrades, the agents' reports inside them) and each
of them broken in the ways a writer breaks a document (a field missing, a wrong type, a value
out of range, an unknown field where none is allowed, a date that is not one)."""

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema.exceptions import best_match

from mwperf.result.upgrade import upgrade
from mwperf.schema import _validator, validation_error

GOLDEN = Path(__file__).parent / "vectors" / "results"


def slow(document: Any, kind: str) -> str | None:
    """jsonschema alone (what validation_error answered before jsonschema-rs)."""
    error = best_match(_validator(kind).iter_errors(document))
    return None if error is None else f"{error.json_path}: {error.message}"


def shrunk(value: Any) -> Any:
    """``value`` with every list cut to its first LONGEST items: the goldens' histograms and
    series are thousands of items of one shape, which jsonschema walks one by one (~2 s per
    100 KB); a few of each shape keep every field of every kind checked."""
    if isinstance(value, dict):
        return {k: shrunk(v) for k, v in value.items()}
    if isinstance(value, list):
        return [shrunk(v) for v in value[:LONGEST]]
    return value


LONGEST = 6


def documents() -> Iterator[tuple[str, str, Any]]:
    for path in sorted(GOLDEN.glob("*.json")):
        old = json.loads(path.read_text())
        kind = old["kind"]
        yield path.name, kind, shrunk(old)
        yield f"{path.name} as v3", "result", shrunk(upgrade(old))
        for report in (old.get("agents") or [])[:1]:
            yield f"{path.name} agent", "agent-report", shrunk(report)


def broken(document: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for key in list(document)[:3]:
        gone = copy.deepcopy(document)
        del gone[key]
        yield f"without {key}", gone
    numbers = [k for k, v in document.items() if isinstance(v, int) and not isinstance(v, bool)]
    for key in numbers[:2]:
        wrong = copy.deepcopy(document)
        wrong[key] = "x"
        yield f"{key} a string", wrong
        negative = copy.deepcopy(document)
        negative[key] = -1
        yield f"{key} -1", negative
    extra = copy.deepcopy(document)
    extra["not_a_field"] = 1
    yield "an unknown field", extra
    if "started_at" in document:
        date = copy.deepcopy(document)
        date["started_at"] = "not a date"
        yield "started_at not a date", date


CASES = list(documents())
SMALL = 60_000
"""bytes of JSON up to which a document is also broken (jsonschema takes ~2 s per 100 KB)"""


@pytest.mark.parametrize("name,kind,document", CASES, ids=[c[0] for c in CASES])
def test_the_verdicts_are_jsonschemas(name: str, kind: str, document: dict[str, Any]) -> None:
    assert validation_error(document, kind) is None is slow(document, kind)
    if len(json.dumps(document)) > SMALL:
        return
    for what, variant in broken(document):
        assert validation_error(variant, kind) == slow(variant, kind), what


def test_a_broken_document_is_named_at_its_field() -> None:
    document = json.loads((GOLDEN / "roundtrip.json").read_text())
    document["measurement"]["accounting"]["lost"] = "x"
    assert validation_error(document, "run-result") == (
        "$.measurement.accounting.lost: 'x' is not of type 'integer'")
