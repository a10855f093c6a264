"""``--restart NODE@T`` on a graph, end to end: a chain's middle node (a subscriber and a stage)
and its source (a paced publisher) killed and started again mid-run, over udp, tcp (the
source's connection to the killed stage broken: opened again) and Cyclone DDS. Checked against the
publisher's own schedule (every measured slot either sent by one of its processes or due while
none ran), each edge's accounting (received + lost = sent, over both processes' samples) and
the edges' own samples (the due, send and arrival times of the messages around each gap)."""

import csv
import json
from pathlib import Path

import pytest
from conftest import run_mwperf

pytestmark = pytest.mark.agent

RATE_HZ = 100
DURATION_S = 3
PERIOD_NS = 1_000_000_000 // RATE_HZ
GRAPH = f"""name: restart-chain
nodes:
  - name: src
    publishers: [{{topic: /a, rate: {RATE_HZ}, payload: 256}}]
  - name: mid
    subscribers: [{{topic: /a, publish: /b}}]
  - name: sink
    subscribers: [{{topic: /b}}]
chains:
  c: [/a, /b]
"""


@pytest.mark.parametrize("transport", ["udp", "tcp", "cyclonedds"])
def test_a_chains_stage_and_source_restarted_mid_run(
        real_env: dict[str, str], tmp_path: Path, transport: str) -> None:
    (tmp_path / "g.yaml").write_text(GRAPH)
    done = run_mwperf("run", "--graph", str(tmp_path / "g.yaml"), "--transport", transport,
                      "--duration", f"{DURATION_S}s", "--warmup", "300ms",
                      # keep-all: a node not scheduled for a while loses nothing but the gaps
                      "--history", "keep-all",
                      "--restart", "mid@1s", "--restart", "src@2s",
                      "--results", str(tmp_path / "r"), env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    [folder] = [p for p in (tmp_path / "r").iterdir() if p.is_dir()]
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "complete", result["status_reason"]
    edges = {e["topic"]: e for e in result["edges"]}
    a, b = edges["/a"], edges["/b"]
    mid, src = result["restarts"]
    assert (mid["target"], src["target"]) == ("mid", "src")
    for r in (mid, src):
        assert r["killed_ns"] < r["started_ns"] < r["ready_ns"], r
    # the publisher's schedule: each measured slot sent by one of src's processes or due while
    # none ran (its killed process's count comes from its progress file)
    [a_src] = src["edges"]
    assert a["sent"] + a_src["never_sent"] == DURATION_S * RATE_HZ, (a, a_src)
    assert a_src["never_sent"] >= 1  # ready again tens of ms later: slots went by
    rows = _rows(folder / a["samples_file"])
    assert len(rows) == a["received"]  # the merged file: each arrival of either process once
    # the restarted src sent nothing due before the kill and went on with the schedule's
    # numbers: its first message's due time is the kill's or later, and what no process sent
    # fits between the killed one's last arrival's due time and that message's send
    last = max((r for r in rows if r["recv_ns"] < src["killed_ns"]), key=lambda r: r["seq"])
    # the first message after: the earliest arrival of one sent after the kill (one the killed
    # process sent may still arrive after it)
    first = min((r for r in rows if r["sent_ns"] >= src["killed_ns"]),
                key=lambda r: r["recv_ns"])
    assert first["recv_ns"] == a_src["first_message_after_ns"]
    assert first["intended_ns"] >= src["killed_ns"], (first, src)
    assert first["intended_ns"] - last["intended_ns"] == (first["seq"] - last["seq"]) * PERIOD_NS
    assert a_src["never_sent"] <= (first["sent_ns"] - last["intended_ns"]) // PERIOD_NS
    assert a_src["never_sent"] + a_src["sent_in_gap"] == first["seq"] - last["seq"] - 1
    assert [n["sent"] for n in result["nodes"] if n["name"] == "src"] == [{"/a": a["sent"]}]
    # every edge's messages accounted for over both of mid's processes' samples
    for e in (a, b):
        assert e["received"] + e["lost"] == e["sent"], e
    # the stage published what arrived, numbered on, but for the one message it held when it
    # was killed: arrived (in the samples) before its publisher counted it (stress run,
    # 2026-11-30: 233 sent of 234 arrived, cyclonedds), or counted and not sent (b's lost 1,
    # below); one stage, one message at a time, one kill: at most one of the two, once
    held = a["received"] - b["sent"]
    assert held in (0, 1) and held + b["lost"] <= 1, (a, b)
    # mid down: src sent every message between the last that reached the killed mid and the
    # first that reached the restarted one
    a_mid, b_mid = sorted(mid["edges"], key=lambda e: e["topic"])
    assert a_mid["recovered"] and b_mid["recovered"]
    last = max((r for r in rows if r["recv_ns"] < mid["killed_ns"]), key=lambda r: r["seq"])
    first = min((r for r in rows if r["recv_ns"] >= mid["started_ns"]),
                key=lambda r: r["recv_ns"])
    assert a_mid["first_message_after_ns"] == first["recv_ns"]
    assert a_mid["sent_in_gap"] == first["seq"] - last["seq"] - 1, (a_mid, first, last)
    assert a_mid["never_sent"] == 0 and a_mid["lost"] <= a_mid["sent_in_gap"]
    if transport in ("udp", "tcp"):  # nothing sent to a port no process has arrives
        assert a_mid["lost"] == a_mid["sent_in_gap"] >= 1, a_mid
    assert a["lost"] == a_mid["lost"] + a_src["lost"]  # what the restarts cost, and nothing else
    # the sink never went away: the stage's numbering goes on where its killed process's count
    # ended; a kill between a message's count and its send (a publisher counts first) leaves
    # one counted that never left, and one sent just before the kill may arrive after it
    # (counted in the gap, not lost: a stress run, cyclonedds, sent_in_gap 1 and lost 0)
    assert b_mid["lost"] == b["lost"] <= b_mid["sent_in_gap"] <= 1, (b_mid, b)
    for r in (mid, src):
        [chain] = r["chains"]
        touched = [e["rediscovery_ns"] for e in r["edges"]]
        assert chain["rediscovery_ns"] >= max(touched), r
    codes = [w["code"] for w in result.get("warnings", [])]
    assert "restart-survivor-only" in codes and "restart-not-recovered" not in codes, codes
    assert a["latency"]["count"] < a["received"]  # the killed process's distribution died
    shown = run_mwperf("show", str(folder), env=real_env)
    assert ("restart src@2.00 s: ready again " in shown.stdout
            and f"/a src -> mid lost {a_src['lost']} of {a_src['sent_in_gap']} sent in the gap "
                f"({a_src['never_sent']} due while down, never sent)" in shown.stdout), shown.stdout


def _rows(path: Path) -> list[dict[str, int]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return [{k: int(v) for k, v in row.items()} for row in csv.DictReader(handle)]


def test_a_brokers_restart_costs_every_edge_through_it(real_env: dict[str, str],
                                                       tmp_path: Path) -> None:
    """mosquitto killed and started again on its address: every node opens its connection
    again (spec reopen); each edge's gap and loss from its own samples, nothing lost outside
    the gaps, every measured slot of the source sent."""
    (tmp_path / "g.yaml").write_text(GRAPH)
    done = run_mwperf("run", "--graph", str(tmp_path / "g.yaml"), "--transport", "mqtt",
                      "--duration", f"{DURATION_S}s", "--warmup", "300ms", "--history",
                      "keep-all", "--restart", "mosquitto@1s", "--results", str(tmp_path / "r"),
                      env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    [folder] = [p for p in (tmp_path / "r").iterdir() if p.is_dir()]
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "complete", result["status_reason"]
    [restart] = result["restarts"]
    assert restart["target"] == "mosquitto" and restart["ready_ns"] > restart["killed_ns"]
    edges = {e["topic"]: e for e in result["edges"]}
    assert edges["/a"]["sent"] == DURATION_S * RATE_HZ  # the source never went away
    gaps = {e["topic"]: e for e in restart["edges"]}
    assert set(gaps) == {"/a", "/b"}  # the broker carries both
    for topic, edge in edges.items():
        gap = gaps[topic]
        assert gap["recovered"] and gap["never_sent"] == 0, gap
        assert edge["received"] + edge["lost"] == edge["sent"], edge
        assert edge["lost"] == gap["lost"] <= gap["sent_in_gap"], (edge, gap)
        rows = _rows(folder / edge["samples_file"])
        last = max((r for r in rows if r["recv_ns"] < restart["killed_ns"]),
                   key=lambda r: r["seq"])
        first = min((r for r in rows if r["sent_ns"] >= restart["killed_ns"]),
                    key=lambda r: r["recv_ns"])
        assert gap["first_message_after_ns"] == first["recv_ns"]
        assert gap["sent_in_gap"] == first["seq"] - last["seq"] - 1, (gap, first, last)
    assert edges["/a"]["lost"] >= 1  # the broker's queue died with it
