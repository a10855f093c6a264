"""A graph across two clocks (issue 24: edges across hosts are one-way across two clocks): the
nodes on a host with a clock of its own probe the reference and put every timestamp on it. Ground
truth: TEST ONLY --test-clock shifts emulated host b's clock 1000 s ahead (a time namespace)
with a drift; the same graph on one clock in the same test is the reference figure."""

import json
import textwrap
from pathlib import Path
from typing import Any

from conftest import run_mwperf

GRAPH = """\
    name: two-clocks
    nodes:
      - name: sensor
        host: a
        publishers: [{topic: /data, rate: 200, payload: 64}]
      - name: worker
        host: b
        subscribers: [{topic: /data, publish: /result}]
      - name: sink
        host: a
        subscribers: [{topic: /result}]
    chains:
      loop: {topics: [/data, /result]}
    """


def run(env: dict[str, str], tmp_path: Path, *args: str) -> dict[str, Any]:
    graph = tmp_path / "g.yaml"
    graph.write_text(textwrap.dedent(GRAPH))
    out = tmp_path / "g.json"
    done = run_mwperf("run", "--graph", str(graph), "--transport", "udp", "--link",
                      "delay=1ms", "--duration", "3s", "--warmup", "1s", "--no-save",
                      "--json-out", str(out), *args, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def test_edges_across_two_clocks_are_measured_on_the_reference_clock(
        real_env: dict[str, str], tmp_path: Path) -> None:
    one = run(real_env, tmp_path)
    two = run(real_env, tmp_path, "--test-clock", "b=1000,20")
    assert all("clock" not in n for n in one["nodes"])  # one clock: nothing probed
    nodes = {n["name"]: n for n in two["nodes"]}
    assert nodes["sensor"]["clock"]["role"] == "reference" and "clock" not in nodes["sink"]
    clock = nodes["worker"]["clock"]
    assert clock["role"] == "probed" and clock["host"] == "b"
    # the estimate within its own bound of the truth (b is 1000 s ahead: reference - b < 0)
    assert abs(clock["offset_ns"] - clock["test_true_offset_ns"]) <= clock["fit_bound_ns"], clock
    assert abs(clock["drift_ppm"] + 20) < 10, clock  # b runs 20 ppm fast: reference - b falls
    assert clock["bound_ns"] == clock["fit_bound_ns"] + clock["online_deviation_ns"]
    by_topic = {e["topic"]: e for e in two["edges"]}
    alone = {e["topic"]: e for e in one["edges"]}
    for topic in ("/data", "/result"):
        edge = by_topic[topic]
        assert edge["clock_bound_ns"] == clock["bound_ns"]
        assert edge["received"] == edge["sent"] > 0 and edge["lost"] == 0, edge
        # a 1 ms link each way: the hop takes what it takes on one clock, within the bound
        difference = abs(edge["latency"]["p50_ns"] - alone[topic]["latency"]["p50_ns"])
        assert difference <= edge["clock_bound_ns"] + 300_000, (edge, alone[topic])
        assert 900_000 < edge["latency"]["p50_ns"] < 1_000_000 + edge["clock_bound_ns"] + 500_000
    # the chain starts and ends on the reference clock: its end to end carries no clock error
    chain = two["chains"][0]
    assert chain["clock_bound_ns"] == 0
    assert abs(chain["end_to_end"]["p50_ns"] - one["chains"][0]["end_to_end"]["p50_ns"]) \
        < 500_000


def test_clock_sync_checks_the_emulated_hosts_shared_clock(real_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    result = run(real_env, tmp_path, "--clock-sync")
    clock = {n["name"]: n for n in result["nodes"]}["worker"]["clock"]
    assert clock["role"] == "probed"
    assert abs(clock["offset_ns"]) <= clock["fit_bound_ns"], clock  # one kernel, one clock
