"""A bridge inside a graph, end to end through real mosquitto brokers (docs/bridges.md "On
graphs"): the sender side's nodes meet bridge A, the server side's bridge B, and only the edges
between the sides cross the bridge; the same graph with --bridge direct; across the bridge
hosts the injected WAN delay tells which broker each node used. Nothing is left running."""

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bridged_graph import TWO_SIDES
from conftest import (bridge_processes, children_with_commands, read_saved, require_emulation,
                      run_mwperf)

pytestmark = pytest.mark.agent

SHORT = ("--duration", "1s", "--warmup", "300ms")
WAN_MS = 5


def run(tmp_path: Path, env: dict[str, str], bridge: str, *more: str) -> tuple[dict, str]:
    (tmp_path / "g.yaml").write_text(TWO_SIDES)
    out = tmp_path / f"{bridge}.json"
    done = run_mwperf("run", "--graph", str(tmp_path / "g.yaml"), "--transport", "mqtt",
                      "--bridge", bridge, *SHORT, *more, "--json-out", str(out), "--no-save",
                      env=env, timeout=180)
    assert done.returncode == 0, done.stderr + done.stdout
    return read_saved(out), done.stdout


def test_a_graphs_nodes_meet_their_sides_broker_and_the_crossing_edges_go_through_the_bridge(
        real_env: dict[str, str], tmp_path: Path) -> None:
    result, shown = run(tmp_path, real_env, "mqtt-bridge")
    assert result["status"] == "complete", result["status_reason"]
    bridge = result["bridge"]
    assert bridge["name"] == "mqtt-bridge" and bridge["bridge_a"] != bridge["bridge_b"]
    assert [h["name"] for h in bridge["halves"]] == ["bridge-b", "bridge-a"]
    for half in bridge["halves"]:  # real mosquitto processes, measured like every daemon
        assert half["version"] and half["peak_rss_kib"] > 0
    # every edge delivered what its publisher sent (mqtt over loopback TCP)
    for edge in result["edges"]:
        assert edge["received"] == edge["sent"] > 0 and edge["lost"] == 0, edge
    crossing = {(e["topic"], e["from"], e["to"]) for e in bridge["crossing"]}
    assert crossing == {("/state", "robot", "base"), ("/cmd", "base", "robot")}
    # the section's rates are the crossing edges' sums, as each edge states its own
    edges = {(e["topic"], e["from"], e["to"]): e for e in result["edges"]}
    achieved = sum(edges[k]["achieved_per_s"] for k in crossing)
    assert bridge["achieved_msgs_per_s"] == pytest.approx(achieved, abs=1e-3)
    assert bridge["offered_msgs_per_s"] == 150.0
    assert bridge["delivered_ratio"] == pytest.approx(achieved / 150.0, abs=1e-4)
    assert "bridge        mqtt-bridge: mqtt -> mosquitto A =bridge=> mosquitto B -> mqtt; " \
        "delivered" in shown and "over the 2 edges crossing it" in shown
    twin, _ = run(tmp_path, real_env, "direct")  # the same graph on one broker
    assert twin["bridge"]["name"] == "direct" and twin["bridge"]["halves"] == []
    assert {(e["topic"], e["from"], e["to"]) for e in twin["bridge"]["crossing"]} == crossing
    assert [d["name"] for d in twin["daemons"]] == ["mosquitto"]
    assert bridge_processes() == []


def test_across_the_bridge_hosts_the_wan_delay_shows_which_broker_each_node_met(
        real_env: dict[str, str], tmp_path: Path) -> None:
    """a (robot, local) -- ga (bridge A) == WAN delay == gb (bridge B) -- b (base): through
    the bridge, robot -> local stays on a's side (broker A on ga) and only the crossing edges
    take the WAN; direct, every node meets the one broker on b, so robot -> local crosses the
    WAN there and back. Each bound is the injected delay: a message cannot beat it."""
    require_emulation("a bridged graph across emulated hosts")
    wan_ns = WAN_MS * 1_000_000
    bridged, _ = run(tmp_path, real_env, "mqtt-bridge", "--link", f"delay={WAN_MS}ms")
    place = bridged["link"]["place"]
    assert (place["robot"], place["local"], place["bridge-a"], place["bridge-b"],
            place["base"]) == ("a", "a", "ga", "gb", "b")
    edges = {(e["topic"], e["to"]): e for e in bridged["edges"]}
    assert edges[("/state", "local")]["latency"]["min_ns"] < wan_ns
    for key in (("/state", "base"), ("/cmd", "robot")):
        assert edges[key]["latency"]["min_ns"] >= wan_ns, edges[key]["latency"]
        assert edges[key]["received"] == edges[key]["sent"]
    if bridged["link"]["backend"] == "userspace":  # bytes on each hop, per message sent
        hops = {h["link"]: h for h in bridged["bridge"]["hops"]}
        assert set(hops) == {"ga<->gb", "a<->ga", "gb<->b"}
    direct, _ = run(tmp_path, real_env, "direct", "--link", f"delay={WAN_MS}ms")
    local = {(e["topic"], e["to"]): e for e in direct["edges"]}[("/state", "local")]
    assert local["latency"]["min_ns"] >= 2 * wan_ns, local["latency"]  # to b's broker and back
    assert bridge_processes() == []


def test_a_bridge_half_killed_mid_graph_gives_a_partial_result_naming_it(
        real_env: dict[str, str], tmp_path: Path) -> None:
    """bridge-a killed 1 s into the graph's measured phase (on the run's own go instant, read
    from its go file): the result is partial, its reason names the half and its exit code
    first, and what crossed before is kept."""
    (tmp_path / "g.yaml").write_text(TWO_SIDES)
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--graph",
                             str(tmp_path / "g.yaml"), "--transport", "mqtt", "--bridge",
                             "mqtt-bridge", "--duration", "4s", "--warmup", "300ms",
                             "--json-out", str(out), "--no-save"], env=real_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        victim, go = None, None
        while go is None and time.monotonic() < deadline:
            for pid, cmd in children_with_commands(proc.pid):
                if "/daemons/bridge-a.conf" in cmd:
                    victim = pid
                    workdir = Path(cmd.split(" -c ")[1].split()[0]).parent.parent
                    with contextlib.suppress(OSError, ValueError):
                        go = int((workdir / "go").read_text())
            time.sleep(0.05)
        assert victim is not None and go is not None, "the graph never started"
        while time.monotonic_ns() < go + 300_000_000 + 1_000_000_000:
            time.sleep(0.05)
        os.kill(victim, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    result = read_saved(out)
    assert result["status"] == "partial", (result["status_reason"], stderr)
    assert result["status_reason"].startswith("bridge-a exited during the run (exit code -9)")
    (died,) = [w for w in result["warnings"] if w["code"] == "daemon-exited"]  # as on a stream
    assert died["message"].startswith("bridge-a exited during the run (exit code -9)")
    edge = {(e["topic"], e["to"]): e for e in result["edges"]}[("/state", "base")]
    assert 0 < edge["received"] < 400  # what crossed before the kill, not all of 4 s at 100 Hz
    assert bridge_processes() == []
