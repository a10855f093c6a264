"""--layers with an agent on a real host (--host) end to end: the robot is a real OpenSSH server
in an emulated host (tests/ssh_support.py). The interposer is copied there and preloaded into
the remote agent, its per-message rows come back through the supervisor, and the two sides are
joined as two clocks (layers_clocks.py) — on this test's robot the kernel, and so the clock, is
in fact shared, which lets the test hold the clock-free sums to the one-clock truth. Clocks
truly apart: an emulated host whose clock --test-clock shifts by 1000 s."""

import csv
import subprocess
from pathlib import Path

import pytest
from conftest import read_saved, require_emulation, run_mwperf
from ssh_support import Robot

from mwperf.layers import round_trip, segments
from mwperf.layers_clocks import aligned_pong
from mwperf.layers_rows import read_rows

pytestmark = pytest.mark.agent


@pytest.fixture
def env(leased_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """A remote cache of the test's own: the first run copies the agent and the library."""
    return {**leased_env, "MWPERF_REMOTE_CACHE": str(tmp_path / "remote-cache")}


def run(env: dict[str, str], tmp_path: Path, robot: Robot, *args: str
        ) -> tuple[subprocess.CompletedProcess[str], dict]:
    out = tmp_path / "result.json"
    out.unlink(missing_ok=True)
    done = run_mwperf("run", "--host", f"b={robot.url}", "--ssh-config",
                      str(robot.folder / "ssh_config"), *args, "--layers", "--json-out",
                      str(out), "--results", str(tmp_path / "r"), env=env, timeout=180)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    return done, read_saved(out)


def by_name(layers: list[dict]) -> dict[str, dict]:
    return {layer["name"]: layer for layer in layers}


def test_a_round_trip_with_the_pong_on_the_robot_is_split(env, tmp_path, robot) -> None:
    done, result = run(env, tmp_path, robot, "--transport", "udp", "--rate", "1000",
                       "--duration", "2s", "--samples")
    assert "copying libmwperf_layers.so" in done.stderr
    layers = result["layers"]
    assert layers["method"] == "ld_preload", layers
    # every reply the ping got is a row (however many a loaded machine's veth delivered: once
    # 2265 of 3000 reached the pong, its backlog held one for 1.4 s), none beyond the pong's echoes
    echoed = next(a for a in result["agents"] if a["role"] == "pong")["counters"]["echoed"]
    assert 0 < layers["messages"] == result["measurement"]["accounting"]["received"] <= echoed
    assert layers["split"] == layers["messages"], layers["unsplit"]
    pong = next(a for a in layers["agents"] if a["name"] == "pong")
    assert pong["events"] >= 2 * layers["messages"]  # the remote agent was preloaded
    saved = next(p for p in (tmp_path / "r").iterdir() if p.is_dir())
    ping = read_rows(saved / "layers" / "ping.csv")
    pong = read_rows(saved / "layers" / "pong.csv")  # sent back from the robot
    with (saved / "samples.csv").open() as f:  # the ping's own per-message latency
        samples = {int(r["seq"]): int(r["response_ns"]) for r in csv.DictReader(f)}
    checked = 0
    for key, mine in ping.items():
        if key in pong and mine.take is not None:
            split = segments(round_trip(mine, aligned_pong(mine, pong[key]), {}))
            assert split is not None
            assert sum(ns for _, _, ns in split[1]) == samples[key[1]]  # exactly, per message
            checked += 1
    assert checked == layers["messages"]
    shown = by_name(layers["layers"])
    assert set(shown) == {"app_send", "middleware_send", "kernel_network",
                          "middleware_receive", "executor_callback"}
    assert all(layer["observable"] for layer in shown.values())
    assert abs(sum(layer["share"] for layer in shown.values()) - 1) < 1e-9
    forward = by_name(layers["directions"]["forward"])
    assert forward["kernel_network"]["observable"] is False
    assert forward["kernel_network"]["note"].startswith(
        "two clocks (ping on this machine, pong on host 'b')")
    assert forward["middleware_receive"]["p50_ns"] > 0  # the pong's own, on its clock
    assert robot.processes() == []  # nothing left on the robot
    assert not list((tmp_path / "remote-cache" / "runs").glob("*"))
    # again: nothing copied (the robot keeps both), and the remote agent was preloaded from the
    # kept copy (its receives and sends logged); every reply that came back is split (how many
    # came back within the ping's drain is the load's: a loaded machine once held every measured
    # message ~700 ms in the veth's backlog, the pong's own rows show them arriving in one burst)
    done, again = run(env, tmp_path, robot, "--transport", "udp", "--duration", "0.5s")
    assert "copying" not in done.stderr, done.stderr
    layers = again["layers"]
    pong = next(a for a in layers["agents"] if a["name"] == "pong")
    assert pong["events"] >= 2 * again["measurement"]["accounting"]["sent"] > 0, layers
    assert layers["split"] == layers["messages"] == again["measurement"]["accounting"][
        "received"], layers


def test_a_one_way_with_the_pub_on_the_robot_carries_the_clock_bound(env, tmp_path,
                                                                       robot) -> None:
    _, result = run(env, tmp_path, robot, "--transport", "udp", "--mode", "oneway", "--place",
                    "pub=b,sub=local", "--rate", "500", "--duration", "1s")
    layers, sync = result["layers"], result["measurement"]["clock_sync"]
    assert sync["status"] == "ok" and layers["split"] == layers["messages"] > 400
    assert layers["clock_bound_ns"] == sync["error_bound_ns"]
    shown = by_name(layers["layers"])
    assert shown["kernel_network"]["observable"] and shown["kernel_network"]["p50_ns"] > 0
    assert any("±" in note for note in layers["notes"])
    assert robot.processes() == []


def test_a_round_trip_to_a_shifted_clock_is_split_clock_free(leased_env, tmp_path) -> None:
    require_emulation("--test-clock (a time namespace on an emulated host)", "unshare")
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "udp", "--rate", "200", "--duration", "1s",
                      "--link", "delay=1ms", "--test-clock", "b=1000", "--layers",
                      "--json-out", str(out), "--results", str(tmp_path / "r"), env=leased_env,
                      timeout=180)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    layers = result["layers"]
    assert layers["split"] == layers["messages"] > 150, layers["unsplit"]
    kn = by_name(layers["layers"])["kernel_network"]  # 1 ms each way: 2 ms, not 1000 s
    # 2 ms of link plus both kernels' stacks, and no more than the whole round trip of the same
    # messages (a part of each): what matters is 2 ms, not the clocks' 1000 s; how much the
    # scheduler adds on top is not guessed
    assert 2_000_000 <= kn["p50_ns"] <= result["measurement"]["response"]["p50_ns"]
    assert kn["parts"] is None
    assert by_name(layers["directions"]["return"])["kernel_network"]["observable"] is False
    assert any("link emulator's stamps" in note for note in layers["notes"])
