"""A graph across a real host (--host): an OpenSSH server in an emulated host (tests/
ssh_support.py) is the robot. Its nodes are started there over SSH (their spec on their command
line, their report sent back), start on mwperf's go instant and put their timestamps on mwperf's
clock. Ground truth: the robot is a namespace of this machine, so its clock is this one (the
estimated offset must be zero within its bound), and the publishers' own counts."""

import json
import textwrap
from pathlib import Path

import pytest
from conftest import run_mwperf
from ssh_support import Robot

pytestmark = pytest.mark.agent

GRAPH = """\
    name: robot-and-laptop
    nodes:
      - name: lidar
        host: b
        publishers: [{topic: /scan, rate: 100, payload: 1024}]
      - name: planner
        subscribers: [{topic: /scan, busy_loop: 200us, publish: /cmd, publish_payload: 64}]
      - name: base
        host: b
        subscribers: [{topic: /cmd}]
    chains:
      scan_to_base: {topics: [/scan, /cmd]}
    """


def test_a_graph_with_nodes_on_a_real_host(leased_env: dict[str, str], tmp_path: Path,
                                           robot: Robot) -> None:
    env = {**leased_env, "MWPERF_REMOTE_CACHE": str(tmp_path / "remote-cache")}
    graph = tmp_path / "g.yaml"
    graph.write_text(textwrap.dedent(GRAPH))
    out = tmp_path / "g.json"
    done = run_mwperf("run", "--graph", str(graph), "--transport", "udp", "--host",
                      f"b={robot.url}", "--ssh-config", str(robot.folder / "ssh_config"),
                      "--duration", "2s", "--warmup", "1s", "--no-save", "--json-out", str(out),
                      env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["status"] == "complete", result["status_reason"]
    assert result["hosts"]["place"] == {"lidar": "b", "planner": "local", "base": "b"}
    assert result["hosts"]["hosts"]["b"]["address"] == robot.address
    for edge in result["edges"]:
        assert edge["sent"] == 200 and edge["received"] == 200 and edge["lost"] == 0, edge
        # no link injected: the median message arrives within the sender's period (100 Hz)
        assert 0 < edge["latency"]["p50_ns"] < 10_000_000, edge
    nodes = {n["name"]: n for n in result["nodes"]}
    assert "clock" not in nodes["planner"] and "mwperf-clock" not in nodes
    for name in ("lidar", "base"):
        clock = nodes[name]["clock"]
        assert clock["role"] == "probed" and clock["host"] == "b", clock
        assert abs(clock["offset_ns"]) <= clock["fit_bound_ns"], clock  # one kernel's clock
    bound = nodes["lidar"]["clock"]["bound_ns"] + nodes["base"]["clock"]["bound_ns"]
    assert result["chains"][0]["clock_bound_ns"] == bound
    assert result["chains"][0]["end_to_end"]["count"] == 200
    assert robot.processes() == []  # nothing left on the robot
    assert not list((tmp_path / "remote-cache" / "runs").glob("*"))
