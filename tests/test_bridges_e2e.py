"""Bridges in the path, end to end through the real programs (docs/bridges.md): mosquitto's
bridge between two brokers (loopback and across the bridge topology's emulated hosts), the
usage error of a pair that cannot work, a bridge half killed mid-run (partial, with the
reason), and nothing left running afterwards."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import (bridge_processes, children_with_commands, read_saved,
                      require_emulation, run_mwperf, wait_into_measurement)

pytestmark = pytest.mark.agent

SHORT = ("--rate", "100", "--duration", "1s", "--warmup", "300ms")


def test_a_pair_that_cannot_work_is_a_usage_error_naming_both(real_env: dict[str, str],
                                                              tmp_path: Path) -> None:
    # a lease directory of its own: the one line asserted is not joined by a line about another
    # run's stale lease reaped (a killed test run left one on this machine)
    real_env = {**real_env, "MWPERF_LEASE_DIR": str(tmp_path / "leases")}
    done = run_mwperf("run", "--transport", "udp", "--bridge", "mqtt-bridge", "--no-save",
                      env=real_env)
    assert done.returncode == 2, done.stderr
    assert "--bridge mqtt-bridge --transport udp" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    unknown = run_mwperf("run", "--transport", "mqtt", "--bridge", "rosbridge", "--no-save",
                         env=real_env)
    assert unknown.returncode == 2
    assert "--bridge: unknown bridge 'rosbridge'; allowed: direct, mqtt-bridge" in unknown.stderr


def test_mqtt_bridge_carries_a_round_trip_between_two_brokers(real_env: dict[str, str],
                                                              tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    done = run_mwperf("run", "--transport", "mqtt", "--bridge", "mqtt-bridge", *SHORT,
                      "--json-out", str(out), "--no-save", env=real_env)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    bridge = result["bridge"]
    assert result["status"] == "complete" and result["config"]["bridge"] == "mqtt-bridge"
    assert [h["name"] for h in bridge["halves"]] == ["bridge-b", "bridge-a"]
    assert bridge["bridge_a"] != bridge["bridge_b"]
    for half in bridge["halves"]:  # real mosquitto processes, measured like every daemon
        assert half["version"] and half["peak_rss_kib"] > 0 and half["cpu_user_s"] is not None
    # the two agents were given different brokers: the messages had to cross the bridge
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 50
    assert 0.95 < bridge["delivered_ratio"] < 1.05
    assert bridge["offered_msgs_per_s"] == 100
    assert "bridge        mqtt-bridge: mqtt -> mosquitto A =bridge=> mosquitto B -> mqtt; " \
        "delivered" in done.stdout
    assert bridge_processes() == []


def test_mqtt_bridge_carries_one_way_to_several_subscribers(real_env: dict[str, str],
                                                            tmp_path: Path) -> None:
    """Three subscribers at broker B, the publisher at broker A: each gets every message
    across the bridge, and the bridge is held to each message offered to each of them."""
    out = tmp_path / "r.json"
    done = run_mwperf("run", "--transport", "mqtt", "--bridge", "mqtt-bridge", "--mode",
                      "oneway", "--subscribers", "3", *SHORT, "--json-out", str(out),
                      "--no-save", env=real_env)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    sent = next(a for a in result["agents"] if a["role"] == "pub")["sent"]
    subs = [a for a in result["agents"] if a["role"] == "sub"]
    assert len(subs) == 3 and sent >= 100
    for sub in subs:  # each subscriber's own count of the publisher's measured messages
        assert sub["measurement"]["accounting"]["received"] == sent, sub["name"]
    bridge = result["bridge"]
    assert bridge["offered_msgs_per_s"] == 300  # 100 Hz to each of 3
    assert 0.95 < bridge["delivered_ratio"] < 1.05
    assert bridge_processes() == []


def test_a_bridge_killed_mid_run_gives_a_partial_result_with_the_reason(
        real_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "r.json"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--transport", "mqtt",
                             "--bridge", "mqtt-bridge", "--rate", "200", "--duration", "4s",
                             "--warmup", "300ms", "--peer-timeout", "1s", "--json-out", str(out),
                             "--no-save"], env=real_env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        victim = None
        deadline = time.monotonic() + 20
        while victim is None and time.monotonic() < deadline:
            victim = next((pid for pid, cmd in children_with_commands(proc.pid) if "bridge-a.conf" in cmd),
                          None)
            time.sleep(0.1)
        assert victim is not None, "bridge-a never started"
        # 1 s into the measurement on the ping's own timeline (first contact through both
        # brokers and the warm-up behind it; a fixed time after bridge-a or the ping appeared
        # was, beside two busy loops, before the ping had measured anything)
        wait_into_measurement(proc.pid, 1.0, deadline)
        os.kill(victim, signal.SIGKILL)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    result = read_saved(out)
    assert result["status"] == "partial", (result["status_reason"], stderr)
    assert "bridge-a exited during the run (exit code -9)" in result["status_reason"]
    counts = result["measurement"]["accounting"]
    assert 0 < counts["received"] <= counts["sent"] < 200 * 4  # what came before, not all
    assert bridge_processes() == []


def test_mqtt_bridge_and_direct_across_the_bridge_hosts(real_env: dict[str, str],
                                                        tmp_path: Path) -> None:
    """--link: the halves on hosts ga and gb with the WAN between them; direct takes the same
    hosts and links, so bridge minus direct is the bridge's own cost."""
    require_emulation("bridges across emulated hosts")
    p50 = {}
    for name in ("mqtt-bridge", "direct"):
        out = tmp_path / f"{name}.json"
        done = run_mwperf("run", "--transport", "mqtt", "--bridge", name,
                          "--link", "delay=5ms", *SHORT, "--json-out", str(out), "--no-save",
                          env=real_env)
        assert done.returncode == 0, done.stderr
        result = read_saved(out)
        place = result["link"]["place"]
        assert (place["ping"], place["bridge-a"], place["bridge-b"], place["pong"]) == \
            ("a", "ga", "gb", "b")
        assert [k["name"] for k in result["link"]["links"]] == ["ga<->gb", "a<->ga", "gb<->b"]
        p50[name] = result["measurement"]["response"]["p50_ns"]
        assert result["bridge"]["name"] == name
        assert bool(result["bridge"]["halves"]) == (name != "direct")
        if result["link"]["backend"] == "userspace":  # bytes on the wire on each hop
            hops = {h["link"]: h for h in result["bridge"]["hops"]}
            assert set(hops) == {"ga<->gb", "a<->ga", "gb<->b"}
            assert all(h["up_bytes_per_message"] > 1024 for h in hops.values())
    assert p50["direct"] > 10e6 and p50["mqtt-bridge"] > 10e6  # 5 ms each way on the WAN
    assert bridge_processes() == []


@pytest.fixture(scope="module")
def zenoh_bridge() -> None:
    """The zenoh-ros2dds bridge binary: built here when missing (CI: a cold build of
    zenoh-plugin-ros2dds and Cyclone DDS, see BENCHMARKS.md), its build tools installed first."""
    from mwperf.bridges.build import ensure_zenoh_bridge
    subprocess.run(["bash", str(Path(__file__).parent.parent / "scripts" / "system-deps.sh"),
                    "bridges"], check=False, timeout=600)
    ensure_zenoh_bridge("zenoh-ros2dds")


def test_zenoh_ros2dds_carries_dds_through_two_bridges(real_env: dict[str, str], tmp_path: Path,
                                                      zenoh_bridge: None) -> None:
    """DDS domain A -> zenoh-plugin-ros2dds A -> zenoh -> B -> DDS domain B: the two agents are
    in different DDS domains, so every message crossed both bridges."""
    out = tmp_path / "r.json"
    done = run_mwperf("run", "--transport", "cyclonedds", "--bridge", "zenoh-ros2dds", *SHORT,
                      "--json-out", str(out), "--no-save", env=real_env)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    bridge = result["bridge"]
    assert result["status"] == "complete"
    domain_a, domain_b = bridge["dds_domains"]
    assert domain_a != domain_b
    assert [h["name"] for h in bridge["halves"]] == ["bridge-a", "bridge-b"]
    for half in bridge["halves"]:
        assert half["version"] == "zenoh-plugin-ros2dds v1.10.2" and half["peak_rss_kib"] > 0
    counts = result["measurement"]["accounting"]
    assert counts["received"] == counts["sent"] > 50
    assert bridge_processes() == []


def test_zenoh_ros2dds_carries_dds_to_a_zenoh_pong(real_env: dict[str, str], tmp_path: Path,
                                                   zenoh_bridge: None) -> None:
    """The mixed path: a cyclonedds ping -> zenoh-plugin-ros2dds -> a zenoh pong (client of the
    bridge's router, unwrapping the CDR sample the plugin forwards), and back. Only bridge A
    runs: the zenoh pong is the far end."""
    out = tmp_path / "r.json"
    done = run_mwperf("run", "--transport", "zenoh", "--bridge", "zenoh-ros2dds", *SHORT,
                      "--json-out", str(out), "--no-save", env=real_env)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    bridge = result["bridge"]
    assert result["status"] == "complete", result.get("status_reason")
    assert [h["name"] for h in bridge["halves"]] == ["bridge-a"]
    assert "a zenoh pong" in bridge["path"]
    counts = result["measurement"]["accounting"]
    assert counts["received"] == counts["sent"] > 50 and counts["corrupted"] == 0
    assert bridge_processes() == []


def test_a_bridge_that_fails_to_build_fails_its_point_in_one_line_and_the_sweep_goes_on(
        real_env: dict[str, str], tmp_path: Path) -> None:
    env = {**real_env, "MWPERF_BRIDGE_TARGET_DIR": str(tmp_path / "empty-target"),
           "MWPERF_CARGO": "false"}
    env.pop("MWPERF_BRIDGE_ZENOH", None)
    done = run_mwperf("run", "--transport", "cyclonedds", "--bridge", "zenoh-ros2dds", *SHORT,
                      "--no-save", env=env)
    assert done.returncode == 1
    error = [ln for ln in done.stderr.splitlines() if ln.startswith("mwperf: error:")]
    assert len(error) == 1 and "--bridge zenoh-ros2dds: building mwperf-bridge-zenoh failed" \
        in error[0] and "make bridges" in error[0], done.stderr
    sweep = tmp_path / "s.yaml"
    sweep.write_text("transport: cyclonedds\nbridge: [zenoh-ros2dds, direct]\nrate: 100\n"
                     "duration: 1s\nwarmup: 300ms\n")
    done = run_mwperf("run", str(sweep), "--results", str(tmp_path / "res"), "--json",
                      env=env)
    rows = json.loads(done.stdout)["rows"]
    statuses = {row["axes"]["bridge"]: row["status"] for row in rows}
    assert statuses == {"zenoh-ros2dds": "failed", "direct": "complete"}, done.stderr
    assert "make bridges" in rows[0]["status_reason"]
