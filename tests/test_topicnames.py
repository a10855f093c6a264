"""Topic names (python/mwperf/topicnames.py): each per-topic result under its topic's name (a
replay's recorded topic, else ``topic <i>``) with its address beside it, in the result, the
table, the catalogue and the scenario summary; and --samples with several topics: one file per
topic, named as the agent names it (the vectors shared with crates/mwperf-agent), saved with the
point, listed in per_topic and converted into the samples view with a ``topic`` column."""

import dataclasses
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from fakes.reports import agent_report, measurement
from test_store_support import catalogue_rows, clone_point, measure_point

from conftest import read_saved
from mwperf import commandline, store
from mwperf.agent import Agent
from mwperf.config import PointConfig, build_point
from mwperf.merge import AgentRun, merge
from mwperf.scenario.digest import digest
from mwperf.store import schema
from mwperf.store.rows import topic_rows
from mwperf.show.details import render_details
from mwperf.topicnames import (file_slugs, label, name_and_address, names_given, samples_names,
                               topic_names)
from mwperf.result.load import as_stream, parse_result

VECTORS = Path(__file__).parent / "vectors" / "topic_files.json"
REPLAY = {"file": "example.bag", "topics": ["/camera/image_raw", "/scan"]}


class Catalogue:
    def transports(self) -> list[str]:
        return ["udp"]

    def payloads(self) -> dict[str, int]:
        return {"Array1k": 1024}


def build(**options: Any) -> PointConfig:
    return build_point(options, Catalogue)


@pytest.mark.parametrize("case", json.loads(VECTORS.read_text())["cases"],
                         ids=lambda case: case["why"])
def test_samples_file_names_match_the_agents(case: dict[str, Any]) -> None:
    assert samples_names(case["names"]) == case["files"]


def test_slugs_never_leave_the_folder_and_stay_distinct() -> None:
    slugs = file_slugs(["/a/../b", "..", "/", "a b", "a_b", "a\u00e9b"])
    assert all("/" not in s and not s.startswith(".") for s in slugs)
    assert len(set(slugs)) == len(slugs)


def test_a_replay_names_its_topics_others_are_numbered() -> None:
    assert topic_names(2, REPLAY) == ["/camera/image_raw", "/scan"]
    assert topic_names(3, None) == ["topic 0", "topic 1", "topic 2"]
    assert topic_names(3, REPLAY) == ["topic 0", "topic 1", "topic 2"]  # not that replay's
    assert names_given(2, REPLAY) == ["/camera/image_raw", "/scan"]
    assert names_given(2, None) == [] and names_given(1, {"topics": ["/scan"]}) == []
    assert (label("/scan", 1), label("topic 1", 1), label(None, 1)) == (
        "topic 1 /scan", "topic 1", "topic 1")


def test_older_results_had_the_address_as_the_name() -> None:
    new = {"topic": 1, "name": "/scan", "address": "127.0.0.1:7001"}
    old = {"topic": 1, "name": "127.0.0.1:7001"}
    replayed = {"config": {"topics": 2, "replay": REPLAY}}
    assert name_and_address(replayed, 1, new) == ("/scan", "127.0.0.1:7001")
    assert name_and_address(replayed, 1, old) == ("/scan", "127.0.0.1:7001")
    assert name_and_address({"config": {"topics": 2}}, 1, old) == ("topic 1", "127.0.0.1:7001")
    imported = {"source": {"tool": "ros2_performance"}, "config": {"topics": 2}}
    assert name_and_address(imported, 1, {"topic": 1, "name": "/chatter"}) == ("/chatter", None)


def ping_with_topics(*names: str) -> dict[str, Any]:
    ping = agent_report("ping", measured=measurement(sent=200), sent=200)
    ping["per_topic"] = [dict(measurement(sent=100), topic=i, name=name,
                              address=f"127.0.0.1:{7000 + i}",
                              samples_file=f"/tmp/scratch/samples.{i}.csv")
                         for i, name in enumerate(names)]
    return ping


def replay_result(**merge_args: Any) -> dict[str, Any]:
    config = {**build(topics="2").to_dict(), "replay": REPLAY}
    return dict(merge(run_id="r", mode="roundtrip", config=config,
                      runs=[AgentRun("pong", 0, agent_report("pong"), ""),
                            AgentRun("ping", 0, ping_with_topics(*REPLAY["topics"]), "")],
                      started_at="t0", finished_at="t1", **merge_args))


def test_the_result_names_topics_and_their_saved_samples_files() -> None:
    result = replay_result(topic_samples={0: "samples.camera_image_raw.csv"})
    assert [(t["topic"], t["name"], t["address"], t["samples_file"])
            for t in result["per_topic"]] == [
        (0, "/camera/image_raw", "127.0.0.1:7000", "samples.camera_image_raw.csv"),
        (1, "/scan", "127.0.0.1:7001", None)]  # not saved: no scratch path is left behind
    assert result["measurement"]["samples_file"] is None


def test_the_details_name_each_topic_and_say_where_it_was() -> None:
    lines = [line for line in render_details(replay_result()).splitlines()
             if line.startswith("topic ")]
    assert lines[0].startswith("topic 0 /camera/image_raw  count 100  p50 ")
    assert lines[1].startswith("topic 1 /scan              count 100  p50 ")
    assert lines[0].endswith("(127.0.0.1:7000)") and lines[1].endswith("(127.0.0.1:7001)")


def test_the_catalogue_rows_and_the_summary_digest_have_the_names() -> None:
    result = replay_result()
    assert [(r["topic"], r["name"], r["address"]) for r in topic_rows(result)] == [
        (0, "/camera/image_raw", "127.0.0.1:7000"), (1, "/scan", "127.0.0.1:7001")]
    assert [t["name"] for t in digest(as_stream(parse_result(result, "replay")), None).per_topic
            ] == ["/camera/image_raw", "/scan"]
    single = {**result, "per_topic": [], "config": {**result["config"], "topics": 1,
                                                    "replay": {"topics": ["/scan"]}}}
    assert [(r["topic"], r["name"], r["address"]) for r in topic_rows(single)] == [
        (0, "/scan", None)]


def test_subscribers_pool_a_topic_under_its_name_with_every_address() -> None:
    subs = []
    for k in range(2):
        report = agent_report("sub", measured=measurement("oneway", sent=100))
        report["per_topic"] = [dict(measurement("oneway", sent=50), topic=i, name=name,
                                    address=f"127.0.0.1:{7000 + 10 * k + i}")
                               for i, name in enumerate(REPLAY["topics"])]
        subs.append(AgentRun("sub", 0, report, "", name=f"sub.{k}"))
    config = {**build(topics="2", mode="oneway").to_dict(), "subscribers": 2, "replay": REPLAY}
    result = merge(run_id="r", mode="oneway", config=config,
                   runs=[AgentRun("pub", 0, agent_report("pub", sent=200), ""), *subs],
                   started_at="t0", finished_at="t1")
    assert [(t["name"], t["address"]) for t in result["per_topic"]] == [
        ("/camera/image_raw", "127.0.0.1:7000;127.0.0.1:7010"),
        ("/scan", "127.0.0.1:7001;127.0.0.1:7011")]


def test_a_replay_tells_both_agents_its_topic_names(tmp_path: Path) -> None:
    cfg = dataclasses.replace(build(topics="2", samples=True), replay=REPLAY)
    stand_in = Agent(Path("/bin/true"))  # the command line needs no agent binary
    for role in ("ping", "pong"):
        argv = commandline.role_argv(stand_in, role, cfg, tmp_path, 7, "127.0.0.1:0")
        assert [a for a in argv if a.startswith("--topic-name")] == [
            "--topic-name=/camera/image_raw", "--topic-name=/scan"]
    ping = commandline.role_argv(stand_in, "ping", cfg, tmp_path, 7, "127.0.0.1:0")
    assert ping[ping.index("--samples") + 1] == str(tmp_path / "samples.csv")  # the base name
    assert commandline.samples_files(cfg) == ["samples.camera_image_raw.csv", "samples.scan.csv"]
    plain = commandline.role_argv(stand_in, "ping", build(topics="2"), tmp_path, 7, "127.0.0.1:0")
    assert not [a for a in plain if a.startswith("--topic-name")]  # the agent's default names
    assert commandline.samples_files(build(topics="2")) == ["samples.topic_0.csv",
                                                       "samples.topic_1.csv"]
    assert commandline.samples_files(build()) == ["samples.csv"]


def test_several_topics_keep_their_samples_apart(fake_env: dict[str, str],
                                                 tmp_path: Path) -> None:
    root = tmp_path / "results"
    saved = measure_point(root, topics="2", samples=True)
    result = read_saved(saved / "result.json")
    assert [(t["name"], t["samples_file"]) for t in result["per_topic"]] == [
        ("topic 0", "samples.topic_0.csv"), ("topic 1", "samples.topic_1.csv")]
    assert not (saved / "samples.csv").exists() and result["measurement"]["samples_file"] is None
    for t in result["per_topic"]:
        assert (saved / t["samples_file"]).read_text().startswith("seq,intended_ns,")
    found = store.run_query(root, "SELECT topic, seq, recv_ns FROM samples ORDER BY 1, 2")
    assert found.rows == [(0, 0, 30), (0, 1, 40), (1, 0, 30), (1, 1, 41)]  # the fake's rows
    joined = store.run_query(root, "SELECT t.name, count(*) FROM samples s JOIN topics t "
                                   "USING (point_id, topic) GROUP BY 1 ORDER BY 1")
    assert joined.rows == [("topic 0", 2), ("topic 1", 2)]


def test_a_version_5_catalogue_gains_topic_addresses(fake_env: dict[str, str],
                                                     tmp_path: Path) -> None:
    root = tmp_path / "results"
    first = measure_point(root)
    measured = read_saved(first / "result.json")["measurement"]
    old = clone_point(first, root, "20261122T000000Z-udp-roundtrip-0005",
                      config={**json.loads((first / "result.json").read_text())["config"],
                              "topics": 2, "replay": REPLAY},
                      per_topic=[dict(measured, topic=i, name=f"127.0.0.1:{7000 + i}")
                                 for i in range(2)])  # as written before topics had names
    store.ingest_point(old)
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:  # as version 5 stored it
        con.execute("ALTER TABLE topics DROP COLUMN address")
        con.execute("UPDATE topics SET name = '127.0.0.1:700' || topic::VARCHAR "
                    "WHERE point_id = ?", [old.name])
        con.execute("UPDATE schema_version SET version = 5")
    store.ingest_point(first)  # any write migrates
    assert catalogue_rows(root, "SELECT version FROM schema_version") == [(schema.SCHEMA_VERSION,)]
    assert catalogue_rows(root, "SELECT topic, name, address FROM topics WHERE point_id = ? "
                                "ORDER BY 1", [old.name]) == [
        (0, "/camera/image_raw", "127.0.0.1:7000"), (1, "/scan", "127.0.0.1:7001")]
    assert catalogue_rows(root, "SELECT name, address FROM topics WHERE point_id = ?",
                          [first.name]) == [(None, None)]
