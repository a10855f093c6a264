"""Validation against schema/result.v2.json, the Rust <-> Python result contract.

Errors point at the offending field (``$.measurement.accounting.lost``) so a broken document
can be traced to the code that wrote it.
"""

import functools
import json
from typing import TYPE_CHECKING, Any, Literal

import jsonschema_rs

from . import BUNDLED_DATA, REPO_ROOT
from .errors import RunError

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

SCHEMA_NAME = "result.v2.json"
RESULT_VERSION: Literal[2] = 2
"""the schema_version this mwperf writes (agents and run results); run results of version 1 are
still read, without their agents' memory figures (see the schema's description)"""
SCHEMA_PATH = (BUNDLED_DATA / SCHEMA_NAME if (BUNDLED_DATA / SCHEMA_NAME).is_file()
               else REPO_ROOT / "schema" / SCHEMA_NAME)
"""the installed wheel's copy, else the checkout's schema/result.v2.json"""
KIND_DEFS = {"agent-report": "agent_report", "run-result": "run_result",
             "node-report": "node_report", "graph-result": "graph_result", "result": "result_v3"}


def validation_error(document: Any, kind: str) -> str | None:
    """Return None when ``document`` is a valid ``kind`` document, else 'path: problem'.

    jsonschema-rs (Rust) answers whether it is valid, ~600 times faster than jsonschema
    (a throughput result's 440 KB: 1.4 ms against 0.9 s); only a document it refuses goes
    through jsonschema, whose best match names the field (and whose answer is the one given:
    tests/test_schema_fast.py holds both to the same verdicts). jsonschema is imported only
    then (~0.1 s of a process's start that a valid document never needs)."""
    if _fast(kind).is_valid(document):
        return None
    from jsonschema.exceptions import best_match

    error = best_match(_validator(kind).iter_errors(document))
    if error is None:
        return None
    return f"{error.json_path}: {error.message}"


@functools.cache
def _fast(kind: str) -> Any:
    """jsonschema-rs's validator of the same schema as ``_validator(kind)``."""
    return jsonschema_rs.validator_for(_schema(kind))


@functools.cache
def _validator(kind: str) -> "Draft202012Validator":
    """jsonschema's validator of ``kind`` (_schema)."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(_schema(kind))


@functools.cache
def _schema(kind: str) -> dict[str, Any]:
    """The schema of one kind of document: schema/result.v2.json's definition of ``kind``,
    inlined."""
    try:
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RunError(f"cannot read the result schema {SCHEMA_PATH}: {exc.strerror}; "
                       f"reinstall mwperf (pip install . from a checkout)") from None
    # Validate against one kind directly: the top-level oneOf would only say "matches neither".
    # Its definitions are inlined (a non-recursive $ref replaced by what it points at): the same
    # checks, without a reference lookup per value — half the time of a run-result's validation,
    # which every point pays three times (two agent reports and the result).
    schema.pop("oneOf")
    defs = schema["$defs"]
    root = _inlined(defs[KIND_DEFS[kind]], defs, (KIND_DEFS[kind],))
    return {**{k: v for k, v in schema.items() if k.startswith("$")}, **root}


def _inlined(node: Any, defs: dict[str, Any], through: tuple[str, ...]) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/NAME"}`` replaced by the definition (recursively;
    a reference back into ``through``, the definitions being inlined, is kept as it is). A $ref
    beside other keywords becomes ``allOf`` of both, as 2020-12 applies them."""
    if isinstance(node, list):
        return [_inlined(item, defs, through) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    name = ref[len("#/$defs/"):] if isinstance(ref, str) and ref.startswith("#/$defs/") else None
    if name is None or name not in defs or name in through:
        return {key: _inlined(value, defs, through) for key, value in node.items()}
    target = _inlined(defs[name], defs, (*through, name))
    rest = {key: _inlined(value, defs, through) for key, value in node.items() if key != "$ref"}
    return {"allOf": [target, rest]} if rest else target
