"""mwperf run --replay with the real agent: the fixture recording (tests/fixtures/bags/small.bag:
30 images, 40 scans in 1 s) over udp one way and round trip: every recorded message of each topic
arrives on its own topic, intact, and the sender's schedule section counts all 70."""

import subprocess
from pathlib import Path

import pytest
from conftest import read_saved, run_mwperf

FIXTURES = Path(__file__).parent / "fixtures" / "bags"


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--no-save", *args, timeout=60)


@pytest.mark.agent
@pytest.mark.parametrize("mode", ["oneway", "roundtrip"])
def test_replay_over_udp(tmp_path: Path, mode: str) -> None:
    out = tmp_path / "result.json"
    done = mwperf("--transport", "udp", "--mode", mode, "--replay", str(FIXTURES / "small.bag"),
                  "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    assert result["config"]["replay"]["topics"] == ["/camera/image_raw", "/scan"]
    measuring = next(a for a in result["agents"] if a["role"] == ("sub" if mode == "oneway"
                                                                   else "ping"))
    per_topic = measuring["per_topic"]
    assert [t["accounting"]["received"] for t in per_topic] == [30, 40]
    if mode == "oneway":  # the sub reports the sizes that arrived (ping: the largest, as asked)
        assert [t["message_bytes"] for t in per_topic] == [4848, 4057]  # the recorded sizes
    accounting = measuring["measurement"]["accounting"]
    assert accounting["corrupted"] == 0 and accounting["lost"] == 0
    sender = next(a for a in result["agents"] if a["role"] in ("pub", "ping"))
    schedule = sender.get("schedule") or sender["measurement"]["schedule"]
    assert schedule["lateness"]["count"] == 70


def _offsets(path: Path, folder: Path) -> tuple[list[list[int]], int]:
    """Each topic's recorded offsets (ns) as the traces hold them, and one loop pass's span."""
    import struct

    from mwperf.bags.trace import MAGIC, ReplaySpec, write_traces
    plan = write_traces(ReplaySpec(path), folder)
    offsets = []
    for i in range(len(plan.topics)):
        data = (folder / f"topic-{i}.trace").read_bytes()[len(MAGIC) + 8:]
        mine, at = [], 0
        while at < len(data):
            offset, length = struct.unpack_from("<QI", data, at)
            mine.append(offset)
            at += 12 + length
        offsets.append(mine)
    return offsets, plan.loop_span_ns()


@pytest.mark.agent
def test_replay_loop_sends_every_pass_until_the_duration(tmp_path: Path) -> None:
    """--replay-loop --duration 2500ms: the recording (about 1 s) goes out twice whole and a
    third time up to 2.5 s — exactly the messages whose offset + k x span is below 2.5 s."""
    bag = FIXTURES / "small.bag"
    (tmp_path / "traces").mkdir()
    offsets, span = _offsets(bag, tmp_path / "traces")
    duration_ns = 2_500_000_000
    expected = [sum(1 for k in range(10) for o in offs if o + k * span < duration_ns)
                for offs in offsets]
    assert expected[0] > 2 * len(offsets[0]), "the fixture must give a partial third pass"
    out = tmp_path / "result.json"
    done = mwperf("--transport", "udp", "--mode", "oneway", "--replay", str(bag), "--replay-loop",
                  "--duration", "2500ms", "--json-out", str(out))
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    assert result["config"]["replay"]["loop_span_ns"] == span
    sub = next(a for a in result["agents"] if a["role"] == "sub")
    assert [t["accounting"]["received"] for t in sub["per_topic"]] == expected
    assert sub["measurement"]["accounting"]["lost"] == 0


@pytest.mark.agent
def test_the_ros1_bag_replay_scenario_quick(tmp_path: Path) -> None:
    """The built-in scenario (quick: the example bag's first 2 s over ros1, queue 1 and 1000, CPU
    100 % and 50 %): every point completes; the publisher sends every recorded message of the
    window (80 scans, 60 images); queue 1000 delivers them all, queue 1 may drop what the
    subscriber was too late for (the seed's very finding, CI saw 56 of 60 images under load), and
    each drop is counted as lost."""
    done = run_mwperf("run", "ros1-bag-replay", "--quick", "--results", str(tmp_path), timeout=300)
    assert done.returncode == 0, done.stderr
    results = sorted(tmp_path.glob("*/points/*/result.json"))
    assert len(results) == 4
    for path in results:
        result = read_saved(path)
        assert result["status"] == "complete"
        sub = next(a for a in result["agents"] if a["role"] == "sub")
        accounting = [t["accounting"] for t in sub["per_topic"]]
        assert [a["sent"] for a in accounting] == [60, 80]
        if result["config"]["depth"] == 1:
            assert [a["received"] + a["lost"] for a in accounting] == [60, 80]
            assert all(a["received"] > 0 for a in accounting)
        else:
            assert [a["received"] for a in accounting] == [60, 80]


@pytest.mark.agent
@pytest.mark.parametrize("mode", ["oneway", "roundtrip"])
def test_replay_samples_per_topic_under_the_recorded_names(tmp_path: Path, mode: str) -> None:
    """--samples with a two-topic replay: each recorded topic's messages in its own file
    (samples.camera_image_raw.csv, samples.scan.csv), as many rows as the result counts for
    that topic, sequence numbers 0..n-1; the table, the result, the catalogue (topics rows and
    the samples view's topic column) and 'mwperf show' name the topics /camera/image_raw and
    /scan, with their addresses beside."""
    results = tmp_path / "results"
    done = run_mwperf("run", "--transport", "udp", "--mode", mode, "--replay",
                      str(FIXTURES / "small.bag"), "--samples", "--results", str(results),
                      timeout=60)
    assert done.returncode == 0, done.stderr
    (point,) = [p.parent for p in results.glob("*/result.json")]
    result = read_saved(point / "result.json")
    per_topic = result["per_topic"]
    assert [(t["topic"], t["name"], t["samples_file"]) for t in per_topic] == [
        (0, "/camera/image_raw", "samples.camera_image_raw.csv"), (1, "/scan", "samples.scan.csv")]
    assert all(t["address"].startswith("127.0.0.1:") for t in per_topic)
    assert [t["response"]["count"] for t in per_topic] == [30, 40]  # images, scans
    for topic in per_topic:
        rows = (point / topic["samples_file"]).read_text().splitlines()
        assert rows[0] == "seq,intended_ns,sent_ns,peer_rx_ns,recv_ns,response_ns,service_ns"
        assert sorted(int(r.split(",")[0]) for r in rows[1:]) == list(
            range(topic["accounting"]["received"]))
    assert not (point / "samples.csv").exists()
    lines = [line for line in done.stdout.splitlines() if line.startswith("topic ")]
    assert lines[0].startswith("topic 0 /camera/image_raw  count 30 ")
    assert lines[1].startswith("topic 1 /scan              count 40 ")
    assert lines[1].endswith(f"({per_topic[1]['address']})")

    def query(sql: str) -> list[list[str]]:
        found = run_mwperf("query", "--results", str(results), "--format", "csv", sql, timeout=60)
        assert found.returncode == 0, found.stderr
        return [line.split(",") for line in found.stdout.splitlines()[1:]]

    assert query("SELECT topic, name, address, latency_count FROM topics ORDER BY 1") == [
        ["0", "/camera/image_raw", per_topic[0]["address"], "30"],
        ["1", "/scan", per_topic[1]["address"], "40"]]
    assert query("SELECT t.name, count(*) FROM samples s JOIN topics t USING (point_id, topic) "
                 "GROUP BY 1 ORDER BY 1") == [["/camera/image_raw", "30"], ["/scan", "40"]]
    shown = run_mwperf("show", "--results", str(results), timeout=60)
    assert shown.returncode == 0, shown.stderr
    assert [line for line in shown.stdout.splitlines() if line.startswith("topic ")] == lines
