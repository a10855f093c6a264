"""Result schema versions: agents and run results are written as version 2; a stored run result
of version 1 is still valid and read — without its agents' memory figures, which in version 1
were the control plane's (getrusage's high-water mark inherited through fork), not the agents'."""

import json

from jsonschema import Draft202012Validator

from mwperf.schema import RESULT_VERSION, SCHEMA_PATH
from mwperf.store.rows import process_columns
from report_support import latencies, result


def version_rule(kind: str) -> Draft202012Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    return Draft202012Validator(schema["$defs"][kind]["properties"]["schema_version"])


def test_this_mwperf_writes_version_2() -> None:
    assert RESULT_VERSION == 2
    assert version_rule("agent_report").is_valid(2)
    assert not version_rule("agent_report").is_valid(1), "agents write the current version only"


def test_a_version_1_result_is_read_without_agent_memory() -> None:
    current = result("r2", latencies(200), rss_kib=5000)
    old = dict(current, schema_version=1)
    assert version_rule("run_result").is_valid(1) and version_rule("run_result").is_valid(2)
    assert process_columns(current)["ping_rss_kib"] == 5000
    assert process_columns(old)["ping_rss_kib"] is None
    assert process_columns(old)["ping_cpu_s"] == process_columns(current)["ping_cpu_s"]


def test_other_versions_are_refused() -> None:
    assert not version_rule("run_result").is_valid(3)
    assert not version_rule("run_result").is_valid("2")
