"""Validation against schema/result.v2.json, the Rust <-> Python result contract.

Errors point at the offending field (``$.measurement.accounting.lost``) so a broken document
can be traced to the code that wrote it.
"""

import functools
import json
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from . import BUNDLED_DATA, REPO_ROOT
from .errors import RunError

SCHEMA_NAME = "result.v2.json"
RESULT_VERSION: Literal[2] = 2
"""the schema_version this mwperf writes (agents and run results); run results of version 1 are
still read, without their agents' memory figures (see the schema's description)"""
SCHEMA_PATH = (BUNDLED_DATA / SCHEMA_NAME if (BUNDLED_DATA / SCHEMA_NAME).is_file()
               else REPO_ROOT / "schema" / SCHEMA_NAME)
"""the installed wheel's copy, else the checkout's schema/result.v2.json"""
KIND_DEFS = {"agent-report": "agent_report", "run-result": "run_result"}


def validation_error(document: Any, kind: str) -> str | None:
    """Return None when ``document`` is a valid ``kind`` document, else 'path: problem'."""
    error = best_match(_validator(kind).iter_errors(document))
    if error is None:
        return None
    return f"{error.json_path}: {error.message}"


@functools.cache
def _validator(kind: str) -> Draft202012Validator:
    try:
        schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RunError(f"cannot read the result schema {SCHEMA_PATH}: {exc.strerror}; "
                       f"reinstall mwperf (pip install . from a checkout)") from None
    # Validate against one kind directly: the top-level oneOf would only say "matches neither".
    schema.pop("oneOf")
    schema["$ref"] = f"#/$defs/{KIND_DEFS[kind]}"
    return Draft202012Validator(schema)
