"""A link outage in a graph (--link outage=) is worked out per edge that crosses hosts, from the
edges' raw samples it implies: checked against the injected outage (its length x the
publisher's rate) and the publisher's own schedule."""

import json
from pathlib import Path

import pytest
from conftest import run_mwperf

pytestmark = pytest.mark.agent

RATE_HZ = 100
OUTAGE_MS = 500
GRAPH = f"""name: two-hosts
nodes:
  - name: robot
    host: a
    publishers: [{{topic: /state, rate: {RATE_HZ}, payload: 256}}]
  - name: base
    host: b
    subscribers: [{{topic: /state}}]
  - name: local
    host: a
    subscribers: [{{topic: /state}}]
"""


def test_an_outage_costs_the_edge_across_the_link_what_was_sent_in_it(
        real_env: dict[str, str], tmp_path: Path) -> None:
    (tmp_path / "g.yaml").write_text(GRAPH)
    done = run_mwperf("run", "--graph", str(tmp_path / "g.yaml"), "--transport", "udp",
                      "--duration", "3s", "--warmup", "300ms", "--link",
                      f"outage=1500ms+{OUTAGE_MS}ms", "--results", str(tmp_path / "r"),
                      env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    [folder] = [p for p in (tmp_path / "r").iterdir() if p.is_dir()]
    result = json.loads((folder / "result.json").read_text())
    edges = {e["to"]: e for e in result["edges"]}
    across, local = edges["base"], edges["local"]
    assert "outages" not in local and local["lost"] == 0  # one host: the link is not in its way
    section = across["outages"]
    assert (section["every_ns"], section["count"], section["measured"]) == (0, 1, 1), section
    [item] = section["items"]
    in_outage = OUTAGE_MS * RATE_HZ // 1000  # the publisher's schedule inside the window
    period_ns = 1e9 / RATE_HZ
    # what can move the window's edges, as this run measured it: the emulator drops by when it
    # reads a packet, so a publisher late on its schedule (its own max_send_lag_ns) or a packet
    # that waited for the emulator or the receiver (within the edge's latency max) crosses an
    # edge; each edge moves by at most that, in messages of this publisher's period
    lag_ns = {n["name"]: n for n in result["nodes"]}["robot"]["max_send_lag_ns"]
    moved = 1 + int((lag_ns + across["latency"]["max_ns"]) // period_ns)
    assert in_outage - 2 * moved <= item["sent_in_gap"] <= in_outage + 2 * moved, (item, lag_ns)
    assert item["lost"] == item["sent_in_gap"]  # plain UDP: nothing sent into it arrives
    assert item["lost"] <= across["lost"]
    # the first message due after the window, within one period, sent at most the publisher's
    # own lag late, plus its way there
    assert 0 <= item["recovery_ns"] <= period_ns + lag_ns + across["latency"]["max_ns"], \
        (item, lag_ns)
    assert (folder / across["samples_file"]).is_file()  # the samples it came from, kept
    shown = run_mwperf("show", str(folder), env=real_env)
    assert f"outage /state robot -> base: lost {item['lost']} of {item['sent_in_gap']} sent in " \
        "the gap, recovered" in shown.stdout, shown.stdout
