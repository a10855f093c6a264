"""Nothing left behind by 'mwperf run': agent processes, their CPU cgroups, daemons and lease
files are gone after success, after a failure, after Ctrl-C, and after a SIGKILL of mwperf
(the agents and daemons die with it; the cgroups are removed by the next 'mwperf run', which
says so). Each 'mwperf run' is a process of its own (run_mwperf(process=True), not the fake
agent's in-process run): what is left behind is what a process leaves when it ends."""

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import alive, descendants, read_saved, run_mwperf, traced_pids

from mwperf.emulation import cgroups

HIERARCHY = cgroups.cpu_hierarchy()
needs_cgroup = pytest.mark.skipif(
    os.geteuid() != 0 or HIERARCHY is None, reason="needs root and a cgroup cpu controller")


def mwperf_cgroups() -> set[Path]:
    """Every mwperf cgroup on the machine now."""
    parent = HIERARCHY.mount / cgroups.PARENT if HIERARCHY else None
    return set(parent.glob("mwp*")) if parent and parent.is_dir() else set()


def leases(env: dict[str, str]) -> list[Path]:
    folder = Path(env["MWPERF_LEASE_DIR"])
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def point_leases(env: dict[str, str]) -> list[Path]:
    """The leases of the points (not of their scratch folders, session.py)."""
    return [p for p in leases(env) if "scratch folder" not in p.read_text()]


def cgroup_of(pid: int) -> Path:
    """The cpu cgroup directory ``pid`` is in."""
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _, controllers, where = line.split(":", 2)
        if (controllers == "") if HIERARCHY.version == 2 else "cpu" in controllers.split(","):
            return HIERARCHY.mount / where.lstrip("/")
    raise AssertionError(f"{pid} is in no cpu cgroup")


def start_run(env: dict[str, str], *args: str) -> tuple[subprocess.Popen, dict[str, int]]:
    """'mwperf run' in the background, returned once both agents run."""
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", "run", *args], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    trace = Path(env["FAKE_AGENT_TRACE"])
    deadline = time.monotonic() + 20
    while len(traced_pids(trace)) < 2:
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    time.sleep(0.3)  # past the pid file: the agent is running
    return proc, traced_pids(trace)


def gone_soon(pids: list[int], within_s: float = 5.0) -> bool:
    deadline = time.monotonic() + within_s
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


@needs_cgroup
def test_after_success(fake_env: dict[str, str], tmp_path: Path) -> None:
    before = mwperf_cgroups()
    done = run_mwperf("run", "--cpu-quota", "pong=50%,ping=80%", "--duration", "300ms",
                      "--results", str(tmp_path / "r"), env=fake_env, process=True)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "r").glob("*/")
    cpu = read_saved(folder / "result.json")["cpu"]
    assert {r: a["quota_pct"] for r, a in cpu["agents"].items()} == {"pong": 50.0, "ping": 80.0}
    assert not any(Path(a["cgroup"]).exists() for a in cpu["agents"].values())
    assert mwperf_cgroups() == before and leases(fake_env) == []


@needs_cgroup
def test_after_a_failure(fake_env: dict[str, str]) -> None:
    before = mwperf_cgroups()
    done = run_mwperf("run", "--cpu-quota", "50%", "--duration", "300ms", "--no-save",
                      env={**fake_env, "FAKE_AGENT": "pong:exit-before-ready"}, process=True)
    assert done.returncode == 1 and "exited before it was ready" in done.stderr
    assert mwperf_cgroups() == before and leases(fake_env) == []


@needs_cgroup
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_after_ctrl_c(fake_env: dict[str, str], sig: signal.Signals) -> None:
    proc, pids = start_run(fake_env, "--cpu-quota", "50%", "--duration", "30s", "--no-save")
    groups = [cgroup_of(pid) for pid in pids.values()]
    assert all(g.parent.name == cgroups.PARENT and g.name.startswith("mwp") for g in groups)
    assert len(point_leases(fake_env)) == 1
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 3, err  # partial: what was measured is kept
    assert gone_soon(list(pids.values()), 0.1)
    assert not any(g.exists() for g in groups) and leases(fake_env) == []


@needs_cgroup
def test_after_sigkill_the_next_run_cleans_up(fake_env: dict[str, str]) -> None:
    proc, pids = start_run(fake_env, "--cpu-quota", "50%", "--duration", "30s", "--no-save")
    groups = sorted(cgroup_of(pid) for pid in pids.values())
    proc.kill()
    proc.communicate(timeout=10)
    assert gone_soon(list(pids.values())), "agents outlived a SIGKILLed mwperf"
    assert all(g.is_dir() for g in groups) and len(point_leases(fake_env)) == 1  # stale, for now
    done = run_mwperf("run", "--duration", "200ms", "--no-save", env=fake_env, process=True)
    assert done.returncode == 0, done.stderr
    (line,) = [ln for ln in done.stderr.splitlines() if "cleaned up" in ln and "cgroup" in ln]
    assert line.startswith("mwperf: cleaned up after an earlier mwperf that did not finish")
    assert all(f"cgroup {g}" in line for g in groups)
    assert not any(g.exists() for g in groups) and leases(fake_env) == []


@pytest.mark.parametrize(("transport", "program"), [("mqtt", "mosquitto"), ("ros1", "rosmaster")])
def test_daemons_do_not_outlive_a_sigkilled_mwperf(fake_env: dict[str, str], transport: str,
                                                   program: str) -> None:
    """Daemons are started with PR_SET_PDEATHSIG, so the kernel kills them with mwperf; one that
    changed its user ID lost that (mosquitto as root becomes user mosquitto) and is killed by
    the next 'mwperf run' through the lease, which says so."""
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed")
    env = {**fake_env, "FAKE_AGENT_TRANSPORTS": transport}
    proc, agents = start_run(env, "--transport", transport, "--duration", "30s", "--no-save")
    below = descendants(proc.pid)
    names = {pid: Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ") for pid in below}
    daemons = [pid for pid, name in names.items() if program in name]
    assert daemons, names
    proc.kill()
    proc.communicate(timeout=10)
    assert gone_soon(list(agents.values()))
    time.sleep(0.5)
    survivors = [pid for pid in below if alive(pid)]
    assert not [pid for pid in survivors if pid not in daemons], names
    done = run_mwperf("run", "--duration", "200ms", "--no-save", env=fake_env, process=True)
    assert done.returncode == 0, done.stderr
    assert gone_soon(below), [names[p] for p in below if alive(p)]
    for pid in survivors:
        assert f"process {pid}:" in done.stderr
