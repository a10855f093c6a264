"""Typed results (python/mwperf/result_types.py) are generated from schema/result.v2.json: the
file is up to date, and a real run-result (the fake agent through the real runner, as it
merges it before saving it as v3) conforms
to the types key by key and value by value — required keys present, no unknown key, each value
of its declared type."""

import types
import typing
from pathlib import Path
from typing import Any

from mwperf import result_types
from mwperf.agent import find_agent
from mwperf.config import build_point
from mwperf.session import measure
from mwperf.result_typegen import render

ROOT = Path(__file__).resolve().parent.parent


def test_result_types_are_generated_from_the_current_schema() -> None:
    generated = render(ROOT / "schema" / "result.v2.json")
    assert (ROOT / "python" / "mwperf" / "result_types.py").read_text("utf-8") == generated, (
        "python/mwperf/result_types.py is stale: run 'python3 scripts/result_types.py'")


def problems(value: Any, kind: Any, where: str = "$") -> list[str]:
    """Where ``value`` departs from the type ``kind`` (empty: it conforms)."""
    origin = typing.get_origin(kind)
    if kind is Any:
        return []
    if kind is type(None) or kind is None:
        return [] if value is None else [f"{where}: {value!r} is not None"]
    if origin in (typing.Union, types.UnionType):
        allowed = [o for o in typing.get_args(kind) if value is None or o is not type(None)]
        options = [problems(value, option, where) for option in allowed]
        return [] if any(not found for found in options) else min(options, key=len)
    if origin is typing.Literal:
        return [] if value in typing.get_args(kind) else [f"{where}: {value!r} not allowed"]
    if origin is list:
        if not isinstance(value, list):
            return [f"{where}: not a list"]
        (item,) = typing.get_args(kind)
        return [p for i, v in enumerate(value) for p in problems(v, item, f"{where}[{i}]")]
    if origin is dict:
        return [] if isinstance(value, dict) else [f"{where}: not an object"]
    if typing.is_typeddict(kind):
        if not isinstance(value, dict):
            return [f"{where}: not an object"]
        hints = typing.get_type_hints(kind)
        found = [f"{where}.{key}: missing" for key in kind.__required_keys__ if key not in value]
        found += [f"{where}.{key}: not in the types" for key in value if key not in hints]
        for key, hint in hints.items():
            if key in value:
                if typing.get_origin(hint) is typing.NotRequired:
                    hint = typing.get_args(hint)[0]
                found += problems(value[key], hint, f"{where}.{key}")
        return found
    if kind is float:
        return [] if isinstance(value, (int, float)) and not isinstance(value, bool) else [
            f"{where}: {value!r} is not a number"]
    if kind is int:
        return [] if isinstance(value, int) and not isinstance(value, bool) else [
            f"{where}: {value!r} is not an integer"]
    return [] if isinstance(value, kind) else [f"{where}: {value!r} is not {kind.__name__}"]


def test_a_real_run_result_conforms(fake_env: dict[str, str]) -> None:
    """The run-result the runner merges (saved as its v3 document: result/save.py)."""
    raw = {"transport": "udp", "duration": "300ms", "warmup": "100ms"}
    outcome, _ = measure(build_point(raw, find_agent), find_agent(), None)
    document: Any = outcome.result
    assert problems(document, result_types.RunResult) == []
    assert problems(document["agents"][0], result_types.AgentReport) == []
    broken = dict(document, status="fine", measurement={"mode": "roundtrip"})
    found = problems(broken, result_types.RunResult)
    assert "$.status: 'fine' not allowed" in found
    assert any(p.startswith("$.measurement.") and p.endswith(": missing") for p in found)
