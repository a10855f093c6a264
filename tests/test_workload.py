"""Workload dimensions (--topics, --executor, --busy-loop) in the control plane: validation,
the agents' command lines, per-topic results in result.json and in the details text."""

import json
from pathlib import Path
from typing import Any

import pytest
from fakes.reports import agent_report, measurement

from mwperf import commandline, runner
from mwperf.agent import find_agent
from mwperf.cli import POINT_OPTIONS
from mwperf.config import PointConfig, build_point
from mwperf.errors import UsageError
from mwperf.merge import AgentRun, merge
from mwperf.show.details import render_details


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp", "ros1"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def build(**options: Any) -> PointConfig:
    return build_point(options, Catalogue)


def test_defaults_and_given_values() -> None:
    cfg = build()
    assert (cfg.topics, cfg.executor, cfg.busy_loop_ns) == (1, "single", 0)
    cfg = build(topics="3", executor="multi", busy_loop="1.8ms")
    assert (cfg.topics, cfg.executor, cfg.busy_loop_ns) == (3, "multi", 1_800_000)
    assert {"topics": 3, "executor": "multi", "busy_loop_ns": 1_800_000}.items() <= cfg.to_dict().items()


def test_scenario_keys_match_the_flags() -> None:
    assert {"topics", "executor", "busy_loop"} <= set(POINT_OPTIONS)


@pytest.mark.parametrize(("options", "message"), [
    ({"topics": "0"}, "--topics: must be from 1 to 64, got 0"),
    ({"topics": "65"}, "--topics: must be from 1 to 64, got 65"),
    ({"topics": "three"}, "--topics: cannot parse 'three'; use a whole number from 1 to 64, e.g. 3"),
    ({"executor": "foo"}, "--executor: unknown executor 'foo'; allowed: single, multi, events"),
    ({"busy_loop": "-1ms"}, "--busy-loop: must be 0 or longer, got '-1ms'; use e.g. 10s, 500ms, 2m"),
    ({"busy_loop": "lots"}, "--busy-loop: cannot parse 'lots'; use e.g. 10s, 500ms, 2m"),
    ({"transport": "ros1", "pong": "relay", "busy_loop": "1ms"},
     "--pong relay: the foreign echo has no --topics, --executor or --busy-loop; use --pong "
     "agent for those"),
])
def test_bad_values_name_their_flag(options: dict[str, Any], message: str) -> None:
    with pytest.raises(UsageError) as err:
        build(**options)
    assert str(err.value) == message


def test_command_lines(fake_env: dict[str, str], tmp_path: Path) -> None:
    cfg = build(topics="3", executor="multi", busy_loop="2ms")
    agent = find_agent()
    pong = commandline.role_argv(agent, "pong", cfg, tmp_path, 7, "127.0.0.1:0")
    ping = commandline.role_argv(agent, "ping", cfg, tmp_path, 7, "a:1,a:2,a:3")
    assert pong[pong.index("--topics") + 1] == "3" and ping[ping.index("--topics") + 1] == "3"
    assert pong[pong.index("--executor") + 1] == "multi"
    assert pong[pong.index("--busy-loop") + 1] == "2000000ns"
    assert "--executor" not in ping and "--busy-loop" not in ping
    plain = commandline.role_argv(agent, "pong", build(), tmp_path, 7, "127.0.0.1:0")
    assert not {"--topics", "--executor", "--busy-loop"} & set(plain)  # unchanged for one topic


def topic(index: int, m: dict[str, Any]) -> dict[str, Any]:
    return {"topic": index, "name": f"127.0.0.1:{7000 + index}", **m}


def test_result_has_per_topic_and_details_show_them() -> None:
    topics = [topic(1, measurement(sent=100, lost=4)), topic(0, measurement(sent=100))]
    ping = agent_report("ping", measured=measurement(sent=200, lost=4), sent=200)
    ping["per_topic"] = topics
    config = {**build(topics="2", busy_loop="1ms").to_dict()}
    result = merge(run_id="r", mode="roundtrip", config=config,
                   runs=[AgentRun("pong", 0, agent_report("pong"), ""), AgentRun("ping", 0, ping, "")],
                   started_at="t0", finished_at="t1")
    assert [t["topic"] for t in result["per_topic"]] == [0, 1]  # ordered, validated by the schema
    assert result["per_topic"][1]["accounting"]["lost"] == 4
    text = render_details(result)
    assert "workload      2 topics, single executor, callback busy-loop 1.00 ms\n" in text
    lines = [line for line in text.splitlines() if line.startswith("topic ")]
    assert len(lines) == 2 and "loss 4.00%" in lines[1] and "(127.0.0.1:7001)" in lines[1]


def test_single_topic_result_has_an_empty_list_and_no_workload_line() -> None:
    result = merge(run_id="r", mode="roundtrip", config=build().to_dict(),
                   runs=[AgentRun("ping", 0, agent_report("ping", measured=measurement(), sent=1000), "")],
                   started_at="t0", finished_at="t1")
    assert result["per_topic"] == []
    assert "workload" not in render_details(result)


def test_run_with_the_fake_agent_records_the_workload(fake_env: dict[str, str], tmp_path: Path) -> None:
    cfg = build_point({"duration": "200ms", "topics": "2", "executor": "multi",
                       "busy_loop": "300us"}, find_agent)
    outcome = runner.run_point(cfg, find_agent(), tmp_path)
    config = outcome.result["config"]
    assert (config["topics"], config["executor"], config["busy_loop_ns"]) == (2, "multi", 300_000)
    pong = json.loads((Path(fake_env["FAKE_AGENT_TRACE"]) / "pong.argv.json").read_text())
    assert pong[pong.index("--busy-loop") + 1] == "300000ns"
