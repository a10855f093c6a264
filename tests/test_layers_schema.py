"""The ``layers`` section of a run-result (issue 27, docs/layers.md) in the schema: a section
as the spec has it validates in every shape (split, shared memory, --link parts, several
topics, method none); a wrong method, a layer name the spec does not know or a missing figure
fail at the field."""

import copy
from typing import Any

import pytest
from fakes.reports import agent_report, measurement
from layers_support import none_section, section

from mwperf.merge import AgentRun, merge
from mwperf.schema import validation_error


def with_layers(layers: object) -> dict[str, Any]:
    """A valid run-result (merged from a fake ping's report) with ``layers``."""
    ping: Any = agent_report("ping", measured=measurement(), sent=1000)
    document: dict[str, Any] = dict(merge(
        run_id="r", mode="roundtrip", config={"payload_bytes": 1024},
        runs=[AgentRun("ping", 0, ping, "")], started_at="t", finished_at="t"))
    assert validation_error(document, "run-result") is None
    document["layers"] = layers
    return document


@pytest.mark.parametrize("layers", [
    section(), section(kind="oneway"), section(shm=True), section(link=True),
    section(topics=["/imu", "/scan"]), section(unsplit={"other_pattern": 10}),
    none_section(), None])
def test_a_layers_section_validates(layers: object) -> None:
    assert validation_error(with_layers(layers), "run-result") is None


def test_a_result_without_the_section_still_validates() -> None:
    document = with_layers(None)
    del document["layers"]
    assert validation_error(document, "run-result") is None


@pytest.mark.parametrize(("change", "where"), [
    (lambda s: s.update(method="ebpf"), "$.layers"),
    (lambda s: s["layers"][1].update(name="serialize"), "$.layers"),
    (lambda s: s["layers"][0].pop("p50_ns"), "$.layers"),
    (lambda s: s["agents"][0].update(dropped=-1), "$.layers"),
])
def test_a_broken_section_fails_at_the_field(change: object, where: str) -> None:
    broken = copy.deepcopy(section())
    change(broken)  # type: ignore[operator]
    problem = validation_error(with_layers(broken), "run-result")
    assert problem is not None and where in problem
