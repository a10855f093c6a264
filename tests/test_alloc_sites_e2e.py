"""--alloc-sites on real agents (issue 13): heaptrack records each agent, the steady state is cut
at the agent's per-message markers, and the call sites' counts are exact.

Ground truth: the test-only agent option `--test-allocs-per-msg N` allocates and frees N heap
blocks per message sent, in `mwperf_alloc_sites_test_pattern`: that site must show exactly
N x the steady-state messages, and the receiver nothing more. The UDP agents allocate nothing
per message (tests/test_allocs_e2e.py holds it with the other counter): heaptrack must agree.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import REAL_AGENT, as_v2, read_saved, run_mwperf
from mwperf.allocsites import heaptrack
from mwperf.schema import validation_error

pytestmark = pytest.mark.agent



def own_agent(folder: Path) -> Path:
    """A copy of the agent for this test alone: heaptrack resolves the call sites from the
    binary after the agent exits, and a test building the wheel side by side relinks the shared
    one (from another source path) meanwhile: its frames then came out unnamed (CI)."""
    copy = folder / "agent" / "mwperf-agent"
    copy.parent.mkdir()
    shutil.copy2(REAL_AGENT, copy)
    return copy


def run_recorded(env: dict[str, str], tmp_path: Path, *args: str
                 ) -> subprocess.CompletedProcess[str]:
    """``mwperf run ARGS --alloc-sites`` saved under tmp_path/r, with an agent of its own."""
    done = run_mwperf("run", *args, "--alloc-sites", "--results", str(tmp_path / "r"),
                      env={**env, "MWPERF_AGENT": str(own_agent(tmp_path))}, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_an_injected_pattern_is_found_at_its_call_site_exactly(tmp_path: Path) -> None:
    agent = own_agent(tmp_path)
    tool = heaptrack.find()
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    common = ["--transport", "udp", "--alloc-site-markers", "--quiet"]
    pong = subprocess.Popen([str(agent), "pong", *common, "--listen", "127.0.0.1:0",
                             "--idle-timeout", "1s", "--json", str(tmp_path / "pong.json")],
                            stdout=subprocess.PIPE, text=True,
                            env=heaptrack.environment(tool, tmp_path, "pong", env))
    try:
        ready = pong.stdout.readline().split()
        assert ready[:2] == ["READY", "udp"], ready
        done = subprocess.run([str(agent), "ping", *common, "--connect", ready[2],
                               "--rate", "1000", "--duration", "1s", "--warmup", "100ms",
                               "--payload", "Struct256", "--test-allocs-per-msg", "3",
                               "--json", str(tmp_path / "ping.json")],
                              env=heaptrack.environment(tool, tmp_path, "ping", env),
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert pong.wait(timeout=30) == 0
    finally:
        pong.kill()
    section = heaptrack.collect(tool, tmp_path, [("ping", "ping"), ("pong", "pong")])
    by_name = {p["name"]: p for p in section["processes"]}
    ping, pong_sites = by_name["ping"], by_name["pong"]
    assert ping["steady_messages"] >= 900
    pattern = [s for s in ping["sites"] if s["function"] == "mwperf_alloc_sites_test_pattern"]
    assert len(pattern) == 1, ping["sites"][:3]
    assert pattern[0]["steady_count"] == 3 * ping["steady_messages"]
    assert pattern[0]["per_msg"] == 3.0
    assert ping["allocs_per_msg"] == 3.0  # nothing else allocates per message, markers left out
    assert "mwperf_agent::outgoing::Outgoing::send" in pattern[0]["callers"]
    assert pong_sites["steady_messages"] >= 900 and pong_sites["allocs_per_msg"] == 0.0
    assert (tmp_path / "alloc-sites" / "ping.txt").read_text().count("test_pattern") == 1
    assert not (tmp_path / "alloc-sites" / "ping.raw").exists()  # interpreted, then removed


def test_a_run_with_alloc_sites_keeps_the_records_and_shows_the_sites(
        real_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_recorded(real_env, tmp_path, "--transport", "udp", "--rate", "500",
                        "--duration", "1s", "--json-out", str(out))
    assert "alloc sites   " in done.stdout and "(none per message)" in done.stdout
    result = read_saved(out)
    assert validation_error(as_v2(result), "run-result") is None
    section = result["alloc_sites"]
    assert section["tool"] == "heaptrack"
    assert {p["name"] for p in section["processes"]} == {"ping", "pong"}
    for proc in section["processes"]:
        assert proc["allocs_per_msg"] == 0.0 and proc["steady_messages"] >= 400, proc
        assert proc["total_allocs"] > 100  # setup allocates: the record is not empty
    folder = next((tmp_path / "r").glob("*-udp-roundtrip-*"))
    for name in ("ping", "pong"):
        assert (folder / "alloc-sites" / f"{name}.txt").is_file()
        assert (folder / "alloc-sites" / f"{name}.heaptrack.gz").stat().st_size > 1000
    shown = subprocess.run(["heaptrack_print", "-f", str(folder / "alloc-sites" / "ping.heaptrack.gz")],
                           capture_output=True, text=True, timeout=60, check=False)
    assert "MOST CALLS TO ALLOCATION FUNCTIONS" in shown.stdout  # heaptrack's own tools read it


def test_a_graph_run_records_each_agent_node_at_its_markers(real_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    """--alloc-sites on a graph: each node under heaptrack, cut at its per-message markers.
    Ground truth as --count-allocs has it (tests/test_graph_e2e.py): a node's steady state runs
    from its first measured message sent or received to its last, so it holds every one but the
    first, which the publisher's and the subscriber's own counts fix; a node that only sends
    over UDP allocates nothing per message (the counter says the same of such a node)."""
    graph = tmp_path / "g.yaml"
    graph.write_text("name: pair\nnodes:\n"
                     "  - name: sensor\n    publishers: [{topic: /raw, rate: 200, payload: 256}]\n"
                     "  - name: listener\n    subscribers: [{topic: /raw}]\n")
    out = tmp_path / "graph.json"
    done = run_recorded(real_env, tmp_path, "--graph", str(graph), "--transport", "udp",
                        "--duration", "1s", "--json-out", str(out))
    assert "alloc sites   " in done.stdout
    result = json.loads(out.read_text())
    assert validation_error(result, "result") is None
    (edge,) = result["edges"]
    handled = {"sensor": edge["sent"], "listener": edge["received"]}
    processes = {p["name"]: p for p in result["alloc_sites"]["processes"]}
    assert set(processes) == set(handled)
    for name, proc in processes.items():
        assert proc["steady_messages"] == handled[name] - 1, (name, proc["steady_messages"])
        assert proc["total_allocs"] > 100, name  # setup allocates: the record is not empty
    assert processes["sensor"]["allocs_per_msg"] == 0.0
    (folder,) = [p for p in (tmp_path / "r").iterdir() if p.is_dir()]
    for proc in processes.values():
        assert (folder / proc["record"]).stat().st_size > 1000
        assert (folder / proc["table"]).is_file()
