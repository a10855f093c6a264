"""--host end to end: a real OpenSSH server in an emulated host (tests/ssh_support.py) serves
as the robot. Every SSH path runs for real: deploy, daemons, the host key, an unreachable host,
a dropped connection, a SIGKILLed mwperf."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import read_saved, run_mwperf
from ssh_support import Robot

pytestmark = pytest.mark.agent


@pytest.fixture
def env(leased_env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """A remote cache of the test's own: the first run copies the agent there."""
    return {**leased_env, "MWPERF_REMOTE_CACHE": str(tmp_path / "remote-cache")}


def run(env: dict[str, str], tmp_path: Path, robot: Robot, *args: str, config: str = "ssh_config",
        timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], dict | None]:
    out = tmp_path / "result.json"
    out.unlink(missing_ok=True)
    done = run_mwperf("run", "--host", f"b={robot.url}", "--ssh-config",
                      str(robot.folder / config), *args, "--json-out", str(out),
                      "--results", str(tmp_path / "r"), env=env, timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr
    return done, read_saved(out) if out.is_file() else None


def test_udp_roundtrip_to_a_real_host_copies_the_agent_once(env, tmp_path, robot) -> None:
    done, result = run(env, tmp_path, robot, "--transport", "udp", "--rate", "500",
                       "--duration", "1s")
    assert done.returncode == 0, done.stderr
    assert "copying mwperf-agent" in done.stderr
    assert result["status"] == "complete"
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 400 and accounting["lost"] == 0
    host = result["hosts"]["hosts"]["b"]
    assert host["address"] == robot.address and host["agent_copied"] is True
    assert result["hosts"]["local_address"] == robot.local
    assert host["facts"]["machine"] and host["facts"]["kernel"]
    pong = next(a for a in result["agents"] if a["role"] == "pong")
    assert pong["process"]["max_rss_kib"] > 0
    assert robot.processes() == []  # nothing left on the robot
    assert not list((tmp_path / "remote-cache" / "runs").glob("*"))
    done, result = run(env, tmp_path, robot, "--transport", "udp", "--duration", "0.5s")
    assert done.returncode == 0 and "copying" not in done.stderr
    assert result["hosts"]["hosts"]["b"]["agent_copied"] is False


def test_ros1_master_and_pong_on_the_robot(env, tmp_path, robot) -> None:
    done, result = run(env, tmp_path, robot, "--transport", "ros1", "--place",
                       "pong=b,rosmaster=b", "--rate", "200", "--duration", "1s")
    assert done.returncode == 0, done.stderr
    assert result["status"] == "complete", result["status_reason"]
    master = next(d for d in result["daemons"] if d["name"] == "rosmaster")
    assert master["address"].startswith(f"http://{robot.address}:")
    assert master["peak_rss_kib"] > 1000 and master["cpu_user_s"] is not None
    assert robot.processes() == []


def test_ros1_relay_on_the_robot(env, tmp_path, robot) -> None:
    done, result = run(env, tmp_path, robot, "--transport", "ros1", "--pong", "relay",
                       "--rate", "100", "--duration", "1s")
    assert done.returncode == 0, done.stderr
    names = {d["name"] for d in result["daemons"]}
    assert names == {"rosmaster", "relay"}
    assert result["measurement"]["accounting"]["received"] > 80
    assert robot.processes() == []


@pytest.mark.parametrize("transport, daemon, extra", [
    ("mqtt", "mosquitto", ()), ("zenoh", "zenoh-router", ("--opt", "mode=client"))])
def test_broker_and_router_on_the_robot(env, tmp_path, robot, transport, daemon, extra) -> None:
    # a deep keep-last queue, as tests/test_middleware_e2e.py: zenoh's subscriber ring (keep-last
    # 10 by default) drops what arrives while the node is not scheduled for 10 periods (5 of 200
    # lost beside two busy loops): zero loss is then a check of the path, not of the scheduler
    done, result = run(env, tmp_path, robot, "--transport", transport, *extra,
                       "--place", f"pong=b,{'mosquitto' if transport == 'mqtt' else 'zenohd'}=b",
                       "--rate", "200", "--duration", "1s", "--depth", "1000")
    assert done.returncode == 0, done.stderr
    found = next(d for d in result["daemons"] if d["name"] == daemon)
    assert robot.address in found["address"] and found["peak_rss_kib"] > 0
    assert result["measurement"]["accounting"]["lost"] == 0
    assert robot.processes() == []


def test_sigterm_keeps_what_was_measured_and_cleans_the_robot(env, tmp_path, robot) -> None:
    proc = _start_mwperf(env, tmp_path, robot, "--transport", "udp", "--rate", "200",
                         "--duration", "20s", "--warmup", "0.2s")
    _wait_for_remote_agent(robot, then_s=2.0)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err
    result = read_saved(tmp_path / "result.json")
    assert result["status"] == "partial" and result["measurement"]["accounting"]["received"] > 0
    assert robot.processes() == []


def test_oneway_pub_on_the_robot(env, tmp_path, robot) -> None:
    done, result = run(env, tmp_path, robot, "--transport", "tcp", "--mode", "oneway",
                       "--place", "pub=b,sub=local", "--rate", "200", "--duration", "1s")
    assert done.returncode == 0, done.stderr
    assert result["measurement"]["accounting"]["received"] > 150
    sync = result["measurement"]["clock_sync"]  # two hosts, two clocks: measured unasked
    assert result["config"]["clock_sync"] is True and sync["status"] == "ok"
    assert sync["peer"].startswith(robot.address)
    bound = sync["error_bound_ns"]  # one kernel here: the true offset is 0
    assert bound < 1_000_000 and abs(sync["offset_ns"]) <= bound


def test_unknown_host_key_names_the_flag_then_is_accepted(env, tmp_path, robot) -> None:
    started = time.monotonic()
    done, result = run(env, tmp_path, robot, "--transport", "udp", "--duration", "0.3s",
                       config="ssh_config_unknown")
    assert done.returncode == 1 and result is None
    assert "--accept-new-host-key" in done.stderr and "host key is not in known_hosts" in done.stderr
    assert time.monotonic() - started < 30
    done, result = run(env, tmp_path, robot, "--transport", "udp", "--duration", "0.3s",
                       "--accept-new-host-key", config="ssh_config_unknown")
    assert done.returncode == 0, done.stderr
    assert robot.address in (robot.folder / "known_hosts_empty").read_text()


def test_wrong_host_key_is_refused(env, tmp_path, robot) -> None:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            str(tmp_path / "other")], check=True)
    key = (tmp_path / "other.pub").read_text().split()
    (robot.folder / "known_hosts").write_text(f"[{robot.address}]:2222 {key[0]} {key[1]}\n")
    done, _ = run(env, tmp_path, robot, "--transport", "udp", "--duration", "0.3s",
                  "--accept-new-host-key")
    assert done.returncode == 1 and "CHANGED" in done.stderr, done.stderr


def test_unreachable_host_fails_within_bounded_time(env, tmp_path, robot) -> None:
    robot.sshd.terminate()
    robot.sshd.wait(5)
    started = time.monotonic()
    done, result = run(env, tmp_path, robot, "--transport", "udp", "--duration", "0.3s")
    assert done.returncode == 1 and result is None
    assert "host 'b'" in done.stderr and "cannot connect" in done.stderr
    assert time.monotonic() - started < 30


def _start_mwperf(env, tmp_path, robot, *args) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", "--host", f"b={robot.url}",
                             "--ssh-config", str(robot.folder / "ssh_config"), *args,
                             "--json-out", str(tmp_path / "result.json"),
                             "--results", str(tmp_path / "r")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for_remote_agent(robot: Robot, timeout_s: float = 60, then_s: float = 1.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not any("pong" in p for p in robot.processes()):
        assert time.monotonic() < deadline, "the pong never started on the robot"
        time.sleep(0.1)
    time.sleep(then_s)


def _pong_port(robot: Robot, timeout_s: float = 60) -> int:
    """The UDP port the robot's agent listens on, once it has bound it (its process exists a
    while before: 0.5 s was not always enough alone on a busy CI machine)."""
    deadline = time.monotonic() + timeout_s
    while True:
        done = subprocess.run(["ip", "netns", "exec", robot.netns, "ss", "-Hunlp"],
                              capture_output=True, text=True, check=True)
        ports = [int(line.split()[3].rsplit(":", 1)[1]) for line in done.stdout.splitlines()
                 if "mwperf-agent" in line]
        if ports:
            return ports[0]
        assert time.monotonic() < deadline, f"no agent socket on the robot: {done.stdout}"
        time.sleep(0.1)


def test_dropped_connection_is_a_partial_result_with_the_reason(env, tmp_path, robot) -> None:
    proc = _start_mwperf(env, tmp_path, robot, "--transport", "udp", "--rate", "200",
                         "--duration", "8s", "--warmup", "0.2s", "--peer-timeout", "2s")
    _wait_for_remote_agent(robot, then_s=3.0)
    for pid in robot.pids():  # the session's sshd (pkill's, on this robot only: not another's)
        try:
            if b"sshd: root@notty" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
    out, err = proc.communicate(timeout=60)
    assert "Traceback" not in err, err
    result = read_saved(tmp_path / "result.json")
    assert proc.returncode in (1, 3), err
    kinds = {w["code"] for w in result["warnings"]}
    assert "connection-lost" in kinds, result["warnings"]
    assert "SSH connection closed" in result["status_reason"]
    assert result["measurement"]["accounting"]["received"] > 0  # what it measured is kept
    deadline = time.monotonic() + 10
    while robot.processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert robot.processes() == []


def test_sigkilled_mwperf_leaves_nothing_on_the_robot(env, tmp_path, robot) -> None:
    proc = _start_mwperf(env, tmp_path, robot, "--transport", "udp", "--rate", "100",
                         "--duration", "20s")
    _wait_for_remote_agent(robot)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=10)
    deadline = time.monotonic() + 10
    while robot.processes() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert robot.processes() == [], "the robot's side did not end itself"
    folders = [Path(name) for lease in Path(env["MWPERF_LEASE_DIR"]).glob("*.json")
               for kind, name in json.loads(lease.read_text())["resources"]
               if kind == "path" and Path(name).name.startswith("mwssh-")]
    assert folders, "the killed mwperf's ssh connection was not leased"
    done, _ = run(env, tmp_path, robot, "--transport", "udp", "--duration", "0.3s")
    assert done.returncode == 0, done.stderr
    assert not list((tmp_path / "remote-cache" / "runs").glob("*"))
    assert [f for f in folders if f.exists()] == [], "the killed mwperf's ssh folder is left"
    assert not list(Path(env["MWPERF_LEASE_DIR"]).glob("*.json"))  # every lease released


def test_a_sweep_reuses_one_connection_per_host(env, tmp_path, robot) -> None:
    scenario = tmp_path / "robot.yaml"
    scenario.write_text(f"description: two rates on a robot\ntransport: udp\nrate: [100, 200]\n"
                        f"duration: 300ms\nwarmup: 100ms\n"
                        f"hosts:\n  robot: {{ssh: '{robot.url}'}}\n"
                        f"place: {{pong: robot, ping: local}}\n"
                        f"ssh_config: {robot.folder / 'ssh_config'}\n")
    done = run_mwperf("run", str(scenario), "--results", str(tmp_path / "r"), env=env,
                      timeout=180)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("copying mwperf-agent") == 1
    logins = (robot.folder / "sshd.log").read_text().count("Accepted publickey")
    assert logins == 1, (robot.folder / "sshd.log").read_text()
    assert robot.processes() == []


def test_foreign_datagrams_to_the_robots_pong_are_counted_and_said(env, tmp_path, robot) -> None:
    """The pong listens on the robot's network address: what does not carry the run's id is
    counted as foreign, never echoed or measured, and the run says so."""
    import random
    import socket
    proc = _start_mwperf(env, tmp_path, robot, "--transport", "udp", "--rate", "200",
                         "--duration", "4s", "--warmup", "0.2s")
    _wait_for_remote_agent(robot, then_s=0)
    port = _pong_port(robot)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rng = random.Random(7)
    for _ in range(2000):
        sock.sendto(rng.randbytes(rng.randint(1, 300)), (robot.address, port))
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    result = read_saved(tmp_path / "result.json")
    pong = next(a for a in result["agents"] if a["role"] == "pong")
    assert pong["counters"]["foreign"] + pong["counters"]["malformed"] >= 1900  # UDP may drop
    assert result["measurement"]["accounting"]["lost"] == 0
    assert any(w["code"] == "foreign-traffic" and "pong" in w["message"]
               for w in result["warnings"])


@pytest.mark.parametrize("transport", ["tcp", "cyclonedds", "fastdds", "rustdds", "zenoh"])
def test_every_networked_transport_reaches_the_robot(env, tmp_path, robot, transport) -> None:
    # a deep keep-last queue, as test_broker_and_router_on_the_robot: a keep-last 10 history
    # drops what arrives while a node is not scheduled for 10 periods (100 ms here), which other
    # tests beside this one can cause: zero loss is then a check of the path, not the scheduler
    done, result = run(env, tmp_path, robot, "--transport", transport, "--rate", "100",
                       "--duration", "1s", "--warmup", "0.3s", "--depth", "1000")
    assert done.returncode == 0, done.stderr
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 80, accounting
    assert robot.processes() == []


def _cpu_share(result: dict) -> float:
    """The robot's pong's CPU use over the run, in shares of one CPU (from its own report)."""
    process = next(a for a in result["agents"] if a["role"] == "pong")["process"]
    return (process["cpu_user_s"] + process["cpu_sys_s"]) / process["wall_s"]


def test_cpu_quota_on_the_robot_throttles_its_pong_and_leaves_no_cgroup(env, tmp_path, robot) -> None:
    point = ("--transport", "udp", "--rate", "0", "--duration", "2s")
    done, limited = run(env, tmp_path, robot, *point, "--cpu-quota", "b=20%")
    assert done.returncode == 0, done.stderr
    done, free = run(env, tmp_path, robot, *point)
    assert done.returncode == 0, done.stderr
    share, unlimited = _cpu_share(limited), _cpu_share(free)
    assert share <= 0.25 and unlimited > share + 0.05, (share, unlimited)
    host = limited["cpu"]["hosts"]["b"]
    assert host["quota_pct"] == 20.0 and host["members"] == ["pong"]
    assert host["throttling"]["throttled_periods"] > 0, host
    pong = limited["cpu"]["agents"]["pong"]
    assert pong["host"] == "b" and pong["cgroup"] == host["cgroup"]
    group = Path(host["cgroup"])
    assert group.name.endswith("-b") and group.parent.name == "mwperf"
    assert not group.exists(), "the robot's cgroup is removed"
    assert "cpu" not in free
    assert robot.processes() == []


def test_cpu_quota_on_the_robot_holds_rosmaster_too(env, tmp_path, robot) -> None:
    done, result = run(env, tmp_path, robot, "--transport", "ros1", "--place",
                       "pong=b,rosmaster=b", "--cpu-quota", "b=50%", "--rate", "200",
                       "--duration", "1s")
    assert done.returncode == 0, done.stderr
    assert result["status"] == "complete", result["status_reason"]
    host = result["cpu"]["hosts"]["b"]
    assert sorted(host["members"]) == ["pong", "rosmaster"] and host["quota_pct"] == 50.0
    assert not Path(host["cgroup"]).exists()
    assert robot.processes() == []


def test_cpu_limits_on_the_robot_that_cannot_be_applied(env, tmp_path, robot) -> None:
    done, _ = run(env, tmp_path, robot, "--transport", "udp", "--cpu-pin", "b=1000",
                  "--duration", "0.5s")
    assert done.returncode != 0 and "--cpu-pin: CPU 1000 is not available" in done.stderr
    done, _ = run(env, tmp_path, robot, "--transport", "udp", "--rt-priority", "10")
    assert done.returncode == 2 and "--rt-priority: not for pong on real host b" in done.stderr
    assert robot.processes() == []


def test_a_preload_library_reaches_the_robot_and_its_agent(env, tmp_path, robot,
                                                             monkeypatch) -> None:
    """remote/preload.py over real SSH: the library is copied beside the robot's agent copy,
    checked to load there, and the agent the supervisor starts has it loaded."""
    from conftest import REAL_AGENT
    from test_remote_preload import PRELOADED, build_library

    from mwperf.agent import Agent
    from mwperf.remote.hosts import PointHosts, close_all, connect
    from mwperf.remote.preload import remote_preload
    from mwperf.remote.ssh import SshOptions
    from mwperf.remote.target import parse_target

    monkeypatch.setenv("MWPERF_REMOTE_CACHE", env["MWPERF_REMOTE_CACHE"])
    library, said = build_library(tmp_path), []
    try:
        host = connect("b", parse_target(robot.url), SshOptions(robot.folder / "ssh_config"),
                       Agent(REAL_AGENT), said.append)
        hosts = PointHosts({"b": host}, {"pong": "b"}, "mwtpre")
        preload = remote_preload(hosts, "pong", library, said.append)
        assert preload["LD_PRELOAD"].startswith(f"{tmp_path}/remote-cache/lib/")
        assert any("copying libmwperf_layers.so" in s for s in said), said
        proc = hosts.spawn("pong", ["mwperf-agent", "--version"], tmp_path, "version", preload,
                           [])
        assert proc.wait(30) == 0, (tmp_path / "version.stderr").read_text()
        assert (tmp_path / "version.stdout").read_text().strip() == host.agent.version
        assert PRELOADED in (tmp_path / "version.stderr").read_bytes()
    finally:
        close_all()
    assert robot.processes() == []
