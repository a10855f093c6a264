"""The benchmark scripts read results and agent reports through one accessor
(benchmarks/benchlib.py: ``read_result``, ``as_read``, ``measurement_of``; docs/one-path-plan.md
step 7), so that they read the same figures from a v2 run-result as from the v3 result the
writers will write: each golden result (tests/vectors/results/) in both forms, and an agent's
report, give the figures the golden states."""

import json
import re
import sys
from pathlib import Path

import pytest

from mwperf.result.save import written
from mwperf.result.stream import CLAIMS

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))

from benchlib import as_read, measurement_of, read_result  # noqa: E402

GOLDEN = Path(__file__).parent / "vectors" / "results"
NAMES = sorted(p.name for p in GOLDEN.glob("*.json"))


@pytest.mark.parametrize("name", NAMES)
def test_a_result_of_either_version_reads_as_its_figures(name: str) -> None:
    old = json.loads((GOLDEN / name).read_text())
    for document in (old, written(old)):
        read = read_result(json.dumps(document))
        assert read == as_read(document)
        if old["kind"] == "run-result":
            for claim in CLAIMS:
                assert read.get(claim) == old.get(claim), claim
            assert measurement_of(document) == old["measurement"]
            assert read["status"] == old["status"] and read["config"]["mode"] == \
                old["config"]["mode"]
        else:
            assert [c["end_to_end"] for c in read["chains"]] == [
                c["end_to_end"] for c in old["chains"]]
            assert measurement_of(document) is None


def test_an_agent_report_is_read_as_it_is() -> None:
    report = json.loads((GOLDEN / "roundtrip.json").read_text())["agents"][1]
    assert report["kind"] == "agent-report"
    assert as_read(report) is report and measurement_of(report) == report["measurement"]
    assert measurement_of(None) is None


def test_no_script_reads_a_measurement_straight_from_the_json_it_loaded() -> None:
    straight = re.compile(r"json\.loads?\([^\n]*\)\)?(\[\"measurement\"\]|\.get\(\"measurement\"\))")
    found = [f"{path.name}:{n}" for path in sorted(BENCHMARKS.glob("*.py"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if straight.search(line)]
    assert found == []
