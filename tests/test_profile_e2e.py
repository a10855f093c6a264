"""--profile end to end: perf samples both agents of a UDP run; the result names functions of
the agent's receive path, and the flame graphs and top tables are in the point folder."""
import json
import shutil
from pathlib import Path

import pytest
from conftest import read_saved, run_mwperf

from mwperf.profiling import unavailable

pytestmark = pytest.mark.agent


def test_a_udp_run_is_profiled(real_env: dict[str, str], tmp_path: Path) -> None:
    why = unavailable()
    if why is not None:
        pytest.skip(why)
    done = run_mwperf("run", "--transport", "udp", "--rate", "0", "--duration", "2s",
                      "--warmup", "100ms", "--profile", "--results", str(tmp_path / "results"),
                      env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr
    (point,) = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    result = read_saved(point / "result.json")
    processes = {p["name"]: p for p in result["profile"]["processes"]}
    assert set(processes) == {"ping", "pong"}
    ping = processes["ping"]
    assert ping["samples"] >= 5
    assert ping["top"] and ping["top"][0]["self_pct"] > 0
    folded = (point / "profile" / "ping.folded").read_text()
    # Rust frames are named, down the agent's send/receive path
    assert "mwperf_agent::roles::ping" in folded
    assert "mwperf_transports::udp::UdpEndpoint" in folded
    assert (point / "profile" / "ping.svg").read_text().startswith("<svg")
    assert not (point / "profile" / "perf.data").exists()
    line = next(x for x in done.stdout.splitlines() if x.startswith("profile "))
    assert "ping" in line and "pong" in line and "samples" in line
    assert shutil.which("perf") is not None


def test_a_graph_run_profiles_each_node(real_env: dict[str, str], tmp_path: Path) -> None:
    """--profile on a graph: every node sampled while the graph is measured, its flame graph
    saved beside the graph result. Checked against the kernel's count of each node's CPU time
    (the node report's cpu_s, getrusage): perf's samples (their periods added up) cannot stand
    for more CPU than the process used, and the node given 2 ms of work per message (40 % of a CPU) has
    more samples than the one that only publishes."""
    why = unavailable()
    if why is not None:
        pytest.skip(why)
    graph = tmp_path / "g.yaml"
    graph.write_text("name: worked\nnodes:\n"
                     "  - name: sensor\n    publishers: [{topic: /raw, rate: 200, payload: 1KiB}]\n"
                     "  - name: filter\n    subscribers: [{topic: /raw, busy_loop: 2ms}]\n")
    done = run_mwperf("run", "--graph", str(graph), "--transport", "udp", "--duration", "2s",
                      "--warmup", "100ms", "--profile", "--results", str(tmp_path / "results"),
                      env=real_env, timeout=180)
    assert done.returncode == 0, done.stderr
    (folder,) = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    result = json.loads((folder / "result.json").read_text())
    profile = result["profile"]
    processes = {p["name"]: p for p in profile["processes"]}
    assert set(processes) == {"sensor", "filter"}
    cpu = {n["name"]: n["cpu_s"] for n in result["nodes"]}
    # the samples' periods are the CPU time they stand for, an estimate: added up, they came
    # out up to 7 % above the kernel's count of the same process here (a spinning process:
    # 0.946 s against 0.927 s), and 3 periods above for this graph's sensor (0.067 s against
    # 0.057), which sleeps between its messages; the node reads its own count a moment before
    # it exits: 10 % and five periods allowed
    for name, proc in processes.items():
        assert proc["sampled_cpu_s"] <= 1.10 * cpu[name] + 5 / profile["frequency_hz"], (
            name, proc["samples"], proc["sampled_cpu_s"], cpu[name])
    assert processes["filter"]["samples"] > processes["sensor"]["samples"] >= 0
    assert "mwperf_agent::node" in (folder / "profile" / "filter.folded").read_text()
    assert (folder / "profile" / "filter.svg").read_text().startswith("<svg")
    assert not (folder / "profile" / "perf.data").exists()
    line = next(x for x in done.stdout.splitlines() if x.startswith("profile "))
    assert "filter" in line and "sensor" in line, line
