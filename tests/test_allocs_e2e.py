"""Heap allocations per message (issue 13): `--count-allocs` counts every allocation of an agent
process (LD_PRELOAD libmwperf_alloc.so), and the counts are exact.

Ground truth: the test-only agent option `--test-allocs-per-msg N` allocates and frees N heap
blocks per message sent; the steady-state `allocs_per_msg` must move by exactly N. Goal: the
udp, tcp and uds agents make no allocation at all per message in the steady state.
"""

import json
import os
import subprocess
from pathlib import Path

import pytest

from conftest import REAL_AGENT, as_v2, read_saved, run_mwperf
from mwperf.agent import ALLOC_LIBRARY
from mwperf.schema import validation_error
from mwperf.show.details import allocations

pytestmark = pytest.mark.agent

LIBRARY = REAL_AGENT.resolve().parent / ALLOC_LIBRARY


def agent_pair(tmp_path: Path, transport: str, address: str, server: str, sender: str,
               *sender_args: str) -> dict[str, dict]:
    """Run a server and a sender agent with the counter preloaded; their `allocations` sections."""
    env = {**os.environ, "LD_PRELOAD": str(LIBRARY)}
    common = ["--transport", transport, "--count-allocs", "--quiet"]
    srv = subprocess.Popen([str(REAL_AGENT), server, *common, "--listen", address,
                            "--idle-timeout", "1s", "--json", str(tmp_path / f"{server}.json")],
                           stdout=subprocess.PIPE, text=True, env=env)
    try:
        ready = srv.stdout.readline().split()
        assert ready[:2] == ["READY", transport], ready
        done = subprocess.run([str(REAL_AGENT), sender, *common, "--connect", ready[2],
                               "--rate", "1000", "--duration", "1s", "--warmup", "100ms",
                               "--payload", "Struct256", "--json", str(tmp_path / f"{sender}.json"),
                               *sender_args], env=env, capture_output=True, text=True,
                              timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        assert srv.wait(timeout=30) == 0
    finally:
        srv.kill()
    return {role: json.loads((tmp_path / f"{role}.json").read_text())["allocations"]
            for role in (server, sender)}


@pytest.mark.parametrize("server,sender", [("pong", "ping"), ("sub", "pub")])
def test_injected_allocations_are_counted_exactly(tmp_path: Path, server: str, sender: str) -> None:
    base = agent_pair(tmp_path, "udp", "127.0.0.1:0", server, sender, "--test-allocs-per-msg", "0")
    three = agent_pair(tmp_path, "udp", "127.0.0.1:0", server, sender, "--test-allocs-per-msg", "3")
    assert base[sender]["steady_messages"] >= 900 and three[sender]["steady_messages"] >= 900
    assert three[sender]["allocs_per_msg"] - base[sender]["allocs_per_msg"] == 3.0
    assert three[sender]["steady"]["count"] == 3 * three[sender]["steady_messages"] \
        + base[sender]["steady"]["count"]  # base: 0 (next test), but exact above any baseline
    assert three[sender]["steady"]["frees"] == three[sender]["steady"]["count"]
    assert three[server]["allocs_per_msg"] == base[server]["allocs_per_msg"]  # the receiver: untouched


@pytest.mark.parametrize("transport", ["udp", "tcp", "uds"])
def test_socket_agents_allocate_nothing_per_message(real_env: dict[str, str], tmp_path: Path,
                                                    transport: str) -> None:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", transport, "--rate", "1000", "--duration", "1s",
                      "--payload", "Struct256", "--count-allocs", "--json-out", str(out),
                      "--results", str(tmp_path / "r"), env=real_env, timeout=120)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    assert validation_error(as_v2(result), "run-result") is None
    by_role = {agent["role"]: agent["allocations"] for agent in result["agents"]}
    assert set(by_role) == {"ping", "pong"}
    for role, a in by_role.items():
        assert a["steady_messages"] >= 900, (role, a)
        assert a["steady"]["count"] == 0 and a["allocs_per_msg"] == 0.0, (transport, role, a)
        assert a["setup"]["count"] > 0 and a["peak_live_bytes"] > 0  # the counter was live
    assert "allocations   " in allocations(result)


def test_without_the_preload_the_agent_says_so(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    done = subprocess.run([str(REAL_AGENT), "pong", "--transport", "udp", "--listen", "127.0.0.1:0",
                           "--count-allocs"], env=env, capture_output=True, text=True, timeout=10,
                          check=False)
    assert done.returncode == 2
    assert "--count-allocs" in done.stderr and f"LD_PRELOAD={LIBRARY}" in done.stderr


def test_no_flag_no_section(real_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "udp", "--duration", "0.2s", "--json-out", str(out),
                      "--no-save", env=real_env, timeout=60)
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    assert all("allocations" not in agent for agent in result["agents"])
    assert "count_allocs" not in result["config"]
    assert "--count-allocs" not in json.dumps(result["agents"][0]["config"])


def test_an_agent_on_a_real_host_counts_with_a_copy_of_the_counter(
        leased_env: dict[str, str], tmp_path: Path, robot) -> None:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "udp", "--rate", "500", "--duration", "1s",
                      "--count-allocs", "--host", f"b={robot.url}", "--ssh-config",
                      str(robot.folder / "ssh_config"), "--json-out", str(out), "--no-save",
                      env={**leased_env, "MWPERF_REMOTE_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    assert f"copying {ALLOC_LIBRARY}" in done.stderr
    agents = {a["role"]: a for a in read_saved(out)["agents"]}
    pong = agents["pong"]["allocations"]  # counted on the robot
    assert pong["steady_messages"] >= 400 and pong["total"]["count"] > 0
    assert agents["ping"]["allocations"]["steady_messages"] >= 400
    assert robot.processes() == []


def test_details_line() -> None:
    agents = [{"role": "ping", "allocations": {"allocs_per_msg": 0.0, "bytes_per_msg": 0.0,
                                               "steady_messages": 999, "peak_live_bytes": 2048}},
              {"role": "pong", "allocations": {"allocs_per_msg": None, "bytes_per_msg": None,
                                               "steady_messages": 0, "peak_live_bytes": 0}},
              {"role": "sub"}]
    line = allocations({"agents": agents})
    assert line.startswith("allocations   ping 0.000/msg 0 B/msg (peak heap 2") and line.count("\n") == 1
    assert "pong \u2014 (1 measured messages)" in line
    assert allocations({"agents": [{"role": "ping"}]}) == ""
