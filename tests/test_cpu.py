"""CPU limits: option parsing, cgroup discovery from mountinfo, and on this machine (root, cgroup
cpu controller) a busy process held to its quota, pinning and real-time priority read back."""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import read_saved, run_mwperf

from mwperf.emulation import cgroups
from mwperf.emulation.cpu import CpuLimits, CpuPlacement, parse_limits
from mwperf.emulation.topology import two_hosts
from mwperf.errors import RunError, UsageError
from mwperf.leases import Lease
from mwperf.procs import AgentSet

ROLES = ("pong", "ping")
SPIN = [sys.executable, "-c", "while True: pass"]
HIERARCHY = cgroups.cpu_hierarchy()
needs_cgroup = pytest.mark.skipif(
    os.geteuid() != 0 or HIERARCHY is None, reason="needs root and a cgroup cpu controller")
needs_two_cpus = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs 2 CPUs")


@pytest.fixture(autouse=True)
def lease_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "leases"
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(folder))
    return folder


def test_quota_for_everyone_and_per_role() -> None:
    limits = parse_limits("50%", None, None, ROLES)
    assert (limits.quota_for("pong"), limits.quota_for("ping")) == (50.0, 50.0)
    limits = parse_limits("25%,pong=75.5%", "pong=1,ping=0-1", "10", ROLES)
    assert (limits.quota_for("pong"), limits.quota_for("ping")) == (75.5, 25.0)
    assert (limits.cpus_for("pong"), limits.cpus_for("ping")) == ((1,), (0, 1))
    assert limits.rt_priority == 10
    assert limits.to_dict() == {"quota_pct": {"*": 25.0, "pong": 75.5},
                                "pin": {"pong": [1], "ping": [0, 1]}, "rt_priority": 10}
    assert not parse_limits(None, None, None, ROLES)


def test_a_limit_on_an_emulated_host_covers_everything_placed_there() -> None:
    place = two_hosts().place  # --link alone: ping on a, pong and the daemons on b
    limits = parse_limits("b=40%", "b=1", None, ROLES, place)
    assert limits.group_for("pong") == ("host-b", 40.0) and limits.quota_for("ping") is None
    assert limits.host_of("rosmaster") == "b" and limits.host_of("ping") is None
    assert (limits.cpus_for("pong"), limits.cpus_for("mosquitto"), limits.cpus_for("ping")) == (
        (1,), (1,), None)
    assert limits.to_dict()["hosts"] == {"b": [n for n, h in place if h == "b"]}
    mixed = parse_limits("20%,b=40%", None, None, ROLES, place)  # '*' for agents off host b
    assert (mixed.quota_for("ping"), mixed.quota_for("pong")) == (20.0, 40.0)
    assert mixed.group_for("rosmaster") == ("host-b", 40.0)
    loopback = parse_limits("50%", None, None, ROLES, place)
    assert loopback.place == () and loopback.group_for("rosmaster") is None


@pytest.mark.parametrize(("quota", "rt", "place", "message"), [
    ("b=40%,pong=20%", None, None, "--cpu-quota: pong runs on host b, which has a limit of its "
                                   "own; give the limit to one of them"),
    ("b=40%", "5", None, "--rt-priority: not with a limit on host b"),
    ("c=40%", None, None, "--cpu-quota: no agent 'c' in this run (agents: pong, ping; hosts: a, "
                          "b)"),
    ("ping=40%", None, (("ping", "ping"), ("pong", "b")), "'ping' is both an agent and a host"),
])
def test_bad_host_limits(quota: str, rt: str | None, place: tuple | None, message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_limits(quota, None, rt, ROLES, place or two_hosts().place)
    assert message in str(caught.value)


@pytest.mark.parametrize(("quota", "pin", "rt", "message"), [
    ("50", None, None, "--cpu-quota: cannot parse '50'; use a share of one CPU such as 50%"),
    ("half%", None, None, "--cpu-quota: cannot parse 'half%'"),
    ("0%", None, None, "--cpu-quota: 0% is outside 1% to"),
    ("100000%", None, None, "--cpu-quota: 100000% is outside 1% to"),
    ("pub=50%", None, None, "--cpu-quota: no agent 'pub' in this run (agents: pong, ping)"),
    ("pong=50%,pong=20%", None, None, "--cpu-quota: pong given twice in 'pong=50%,pong=20%'"),
    ("50%,", None, None, "--cpu-quota: cannot parse '50%,'"),
    (None, "x", None, "--cpu-pin: cannot parse 'x'; use CPU numbers such as 1 or 0-1"),
    (None, "1-0", None, "--cpu-pin: '1-0' is an empty range"),
    (None, "4096", None, "--cpu-pin: CPU 4096 is not available to mwperf (available: 0"),
    (None, None, "0", "--rt-priority: must be a whole number from 1 to 99"),
    (None, None, "high", "--rt-priority: must be a whole number from 1 to 99 (SCHED_FIFO "
                         "priority), got 'high'"),
])
def test_bad_values_name_the_flag(quota: str | None, pin: str | None, rt: str | None,
                                  message: str) -> None:
    with pytest.raises(UsageError) as caught:
        parse_limits(quota, pin, rt, ROLES)
    assert message in str(caught.value)


def test_hierarchies_from_mountinfo(tmp_path: Path) -> None:
    unified = tmp_path / "unified"
    unified.mkdir()
    (unified / "cgroup.controllers").write_text("hugetlb\n")
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        "34 31 0:31 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
        f"41 31 0:38 / {unified} rw - cgroup2 cgroup2 rw\n")
    found = cgroups.hierarchies(mountinfo)
    assert [(h.version, h.controllers) for h in found] == [
        (1, ("cpu", "cpuacct")), (1, ("cpuset",)), (2, ("hugetlb",))]
    # hybrid without cpu in the unified hierarchy: v1 has it
    assert cgroups.cpu_hierarchy(mountinfo).mount == Path("/sys/fs/cgroup/cpu,cpuacct")
    (unified / "cgroup.controllers").write_text("cpuset cpu io memory pids\n")
    assert cgroups.cpu_hierarchy(mountinfo).version == 2  # v2 preferred when it has cpu
    mountinfo.write_text("")
    assert cgroups.cpu_hierarchy(mountinfo) is None


def _cpu_share(pid: int, seconds: float) -> float:
    """CPU time over wall time of ``pid`` (all its threads) across ``seconds``."""
    return _cpu_shares([pid], seconds)[0]


def _cpu_shares(pids: list[int], seconds: float) -> list[float]:
    """CPU time over wall time of each of ``pids``, measured over the same ``seconds``."""
    def cpu(pid: int) -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    start_cpu, start = [cpu(p) for p in pids], time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - start
    return [(cpu(p) - c) / wall for p, c in zip(pids, start_cpu)]


def _spin_share(tmp_path: Path, limits: CpuLimits, seconds: float = 2.0) -> tuple[float, dict]:
    with Lease.take("test") as lease:
        placement = CpuPlacement(limits, lease)
        with AgentSet(tmp_path, placement) as agents:
            spinner = agents.spawn("pong", SPIN)
            share = _cpu_share(spinner.popen.pid, seconds)
            agents.stop_all()
        described = placement.describe()
    return share, described


@needs_cgroup
def test_a_busy_agent_gets_its_quota_and_is_throttled(tmp_path: Path) -> None:
    """Same CPU for both: unlimited reference, then 50 %; the limited one stays at or below 50 %
    (the upper bound is the kernel's guarantee; the lower one only when the reference shows the
    machine had the CPU to give)."""
    pin = "0"
    reference, _ = _spin_share(tmp_path, parse_limits(None, pin, None, ROLES))
    limited, described = _spin_share(tmp_path, parse_limits("50%", pin, None, ROLES))
    assert limited <= 0.5 * 1.15, (limited, reference)
    if reference > 0.8:
        assert limited >= 0.5 * 0.6, (limited, reference)
    pong = described["agents"]["pong"]
    assert described["cgroup_version"] == HIERARCHY.version and pong["quota_pct"] == 50.0
    assert pong["throttling"]["throttled_periods"] > 0
    assert not Path(pong["cgroup"]).exists()  # released with the lease


@needs_cgroup
def test_a_host_quota_is_shared_by_its_agents_and_daemons(tmp_path: Path) -> None:
    """pong and a 'daemon' spinning on host b at 50 %: together at most half a CPU."""
    limits = parse_limits("b=50%", "b=0", None, ROLES, two_hosts().place)
    daemon = subprocess.Popen(SPIN)
    try:
        with Lease.take("test") as lease:
            placement = CpuPlacement(limits, lease)
            with AgentSet(tmp_path, placement) as agents:
                spinner = agents.spawn("pong", SPIN)
                placement.join("rosmaster", "rosmaster", daemon.pid)
                group = Path(placement.describe()["hosts"]["b"]["cgroup"])
                assert group.name.endswith("-host-b") and group.is_dir()
                shares = _cpu_shares([spinner.popen.pid, daemon.pid], 2.0)
                agents.stop_all()
                daemon.kill()
                described = placement.describe()
    finally:
        daemon.kill()
        daemon.wait()
    assert sum(shares) <= 0.5 * 1.15, shares
    host = described["hosts"]["b"]
    assert (host["quota_pct"], host["cpus"], host["members"]) == (50.0, [0], ["pong", "rosmaster"])
    assert host["throttling"]["throttled_periods"] > 0
    assert described["agents"]["pong"]["host"] == "b"
    assert not group.exists()  # released with the lease


@needs_cgroup
def test_quota_above_one_cpu_is_written_as_is(tmp_path: Path) -> None:
    with Lease.take("test") as lease:
        group = cgroups.create(lease, "ping", 150)
        name = "cpu.max" if group.hierarchy.version == 2 else "cpu.cfs_quota_us"
        assert (group.path / name).read_text().split()[0] == "150000"
        assert group.path.name == f"{lease.prefix}-ping"
        assert ("cgroup", str(group.path)) in lease.resources
    assert not group.path.exists()


@needs_two_cpus
def test_pinning_is_read_back(tmp_path: Path) -> None:
    with Lease.take("test") as lease:
        placement = CpuPlacement(parse_limits(None, "pong=1,ping=0", None, ROLES), lease)
        with AgentSet(tmp_path, placement) as agents:
            pong = agents.spawn("pong", ["sleep", "30"])
            ping = agents.spawn("ping", ["sleep", "30"])
            assert os.sched_getaffinity(pong.popen.pid) == {1}
            assert os.sched_getaffinity(ping.popen.pid) == {0}
        described = placement.describe()
    assert described["cgroup_version"] is None  # no quota: no cgroup
    assert [described["agents"][r]["cpus"] for r in ("pong", "ping")] == [[1], [0]]


def test_refused_priority_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> None:
        raise PermissionError(1, "Operation not permitted")
    monkeypatch.setattr(os, "sched_setscheduler", refuse)  # also in the forked child
    with Lease.take("test") as lease:
        placement = CpuPlacement(parse_limits(None, None, "20", ROLES), lease)
        with AgentSet(tmp_path, placement) as agents:
            agents.spawn("pong", ["sleep", "30"])
        described = placement.describe()
    assert described["agents"]["pong"]["policy"] == "SCHED_OTHER"
    assert [w["code"] for w in placement.warnings] == ["rt-priority-denied"]
    assert "pong: SCHED_FIFO priority 20 was refused" in placement.warnings[0]["message"]


@pytest.mark.skipif(os.geteuid() != 0, reason="SCHED_FIFO needs root here")
def test_priority_is_applied_when_permitted(tmp_path: Path) -> None:
    with Lease.take("test") as lease:
        placement = CpuPlacement(parse_limits(None, None, "7", ROLES), lease)
        with AgentSet(tmp_path, placement) as agents:
            pong = agents.spawn("pong", ["sleep", "30"])
            assert os.sched_getscheduler(pong.popen.pid) == os.SCHED_FIFO
        described = placement.describe()
    assert (described["agents"]["pong"]["rt_priority"], placement.warnings) == (7, [])


@needs_cgroup
def test_quota_with_priority_uses_the_real_time_budget_or_is_refused(tmp_path: Path) -> None:
    """SCHED_FIFO tasks escape the CFS quota: with v1 RT group scheduling the quota becomes the
    cgroup's real-time budget (and the busy task is held to it); elsewhere the pair is refused."""
    limits = parse_limits("30%", "0", "5", ROLES)
    if HIERARCHY.version == 2 or not (HIERARCHY.mount / "cpu.rt_runtime_us").exists():
        with pytest.raises(RunError, match="no per-cgroup real-time budget"):
            _spin_share(tmp_path, limits)
        return
    share, described = _spin_share(tmp_path, limits)
    pong = described["agents"]["pong"]
    assert (pong["policy"], pong["rt_budget_pct"]) == ("SCHED_FIFO", 30.0)
    assert share <= 0.3 * 1.15, share


@needs_cgroup
def test_a_failed_cgroup_join_stops_the_run(tmp_path: Path) -> None:
    with Lease.take("test") as lease:
        placement = CpuPlacement(parse_limits("50%", None, None, ROLES), lease)
        real_setup = placement.child_setup

        def broken(role: str):  # the cgroup exists but the child never joins it
            real_setup(role)
            return lambda: None
        placement.child_setup = broken  # type: ignore[method-assign]
        with pytest.raises(RunError, match="could not be moved into"):
            with AgentSet(tmp_path, placement) as agents:
                agents.spawn("pong", ["sleep", "30"])
        assert agents.agents[0].exit_code is not None
    assert not list(Path(lease.path.parent).glob("*.json"))


@needs_cgroup
@needs_two_cpus
@pytest.mark.agent
def test_real_agent_busy_polling_under_a_quota(real_env: dict[str, str], tmp_path: Path) -> None:
    """The real agent, spinning (--busy-poll), pong limited to 30 % and pinned: its own report
    shows at most ~30 % of a CPU, the result records the cgroup and the throttling."""
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--transport", "udp", "--rate", "1000", "--duration", "2s",
                      "--busy-poll", "--cpu-quota", "pong=30%", "--cpu-pin", "pong=1",
                      "--json-out", str(out), "--no-save",
                      env={**real_env, "MWPERF_LEASE_DIR": str(tmp_path / "leases")})
    assert done.returncode in (0, 3), done.stderr
    result = read_saved(out)
    pong = next(a for a in result["agents"] if a["role"] == "pong")["process"]
    share = (pong["cpu_user_s"] + pong["cpu_sys_s"]) / pong["wall_s"]
    assert share <= 0.3 * 1.15 + 0.02, share
    cpu = result["cpu"]
    assert (cpu["agents"]["pong"]["quota_pct"], cpu["agents"]["pong"]["cpus"]) == (30.0, [1])
    assert cpu["agents"]["ping"]["quota_pct"] is None and cpu["agents"]["ping"]["cgroup"] is None
    assert result["config"]["cpu"]["quota_pct"] == {"pong": 30.0}
    assert not Path(cpu["agents"]["pong"]["cgroup"]).exists()


def test_cli_flags_are_checked_before_anything_runs(fake_env: dict[str, str]) -> None:
    done = run_mwperf("run", "--cpu-quota", "lots", env=fake_env)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith("mwperf: error: --cpu-quota: cannot parse 'lots'")
    done = run_mwperf("run", "--mode", "oneway", "--cpu-pin", "ping=0", env=fake_env)
    assert done.returncode == 2 and "no agent 'ping' in this run (agents: sub, pub)" in done.stderr


def test_a_relay_is_not_an_agent() -> None:
    from mwperf.config import build_point

    class Catalogue:
        def transports(self) -> list[str]:
            return ["ros1"]

        def payloads(self) -> dict[str, int]:
            return {"Array1k": 1024}

    options = {"transport": "ros1", "pong": "relay", "cpu_quota": "pong=50%"}
    with pytest.raises(UsageError, match="no agent 'pong' in this run .agents: ping."):
        build_point(options, Catalogue)
    cfg = build_point({**options, "cpu_quota": "50%"}, Catalogue)
    assert cfg.cpu.quota_for("ping") == 50.0
    assert cfg.to_dict()["cpu"] == {"quota_pct": {"*": 50.0}, "pin": {}, "rt_priority": None}


def test_summary_lines() -> None:
    from mwperf.emulation.cpu import summary_lines
    block = {"cgroup_version": 1, "period_us": 100000, "agents": {
        "pong": {"quota_pct": 50.0, "cgroup": "/x", "cpus": [1], "pinned": True,
                 "rt_priority": 5, "policy": "SCHED_FIFO",
                 "throttling": {"periods": 21, "throttled_periods": 19, "throttled_s": 0.4}},
        "ping": {"quota_pct": None, "cgroup": None, "cpus": [0, 1], "pinned": False,
                 "rt_priority": None, "policy": "SCHED_OTHER", "throttling": None}}}
    assert summary_lines(block) == [
        "pong: quota 50% (cgroup v1), throttled in 19 of 21 periods, CPUs 1, SCHED_FIFO 5",
        "ping: not limited"]
    assert summary_lines(None) == []


class StubLease:
    prefix = "mwpabcdef"

    def __init__(self) -> None:
        self.resources: list[tuple[str, str]] = []

    def add(self, kind: str, name: str) -> None:
        self.resources.append((kind, name))


@pytest.mark.parametrize("version", [1, 2])
def test_cgroup_files_written_per_version(tmp_path: Path, version: int) -> None:
    """What create() writes, on a directory standing in for the hierarchy (v2 is not mounted
    with the cpu controller on this machine): v2 enables +cpu down to the parent and sets
    cpu.max; v1 sets the CFS period and quota. Both are leased before they exist."""
    (tmp_path / "cgroup.subtree_control").write_text("memory\n")
    (tmp_path / "mwperf").mkdir()  # the kernel gives a new cgroup its files; a folder does not
    (tmp_path / "mwperf" / "cgroup.subtree_control").write_text("")
    lease = StubLease()
    group = cgroups.create(lease, "pong", 37.5, cgroups.Hierarchy(version, tmp_path, ("cpu",)))
    parent = tmp_path / "mwperf"
    assert group.path == parent / "mwpabcdef-pong"
    assert lease.resources == [("cgroup-parent", str(parent)), ("cgroup", str(group.path))]
    if version == 2:
        assert (tmp_path / "cgroup.subtree_control").read_text() == "+cpu"
        assert (parent / "cgroup.subtree_control").read_text() == "+cpu"
        assert (group.path / "cpu.max").read_text() == "37500 100000"
    else:
        assert (group.path / "cpu.cfs_period_us").read_text() == "100000"
        assert (group.path / "cpu.cfs_quota_us").read_text() == "37500"
    assert group.quota_pct == 37.5


def test_a_refused_cgroup_says_why_and_was_leased_first(tmp_path: Path) -> None:
    """The supervisor's cgroup code (mwperf-agent supervise-cgroup) refuses with the kernel's
    reason and what to change; the lease names the cgroup before it was tried."""
    not_a_folder = tmp_path / "file"
    not_a_folder.write_text("")
    lease = StubLease()
    with pytest.raises(RunError, match=r"^--cpu-quota: cannot create .*/file/mwperf: Not a "
                                       r"directory.*; check the cgroup mounts"):
        cgroups.create(lease, "pong", 50, cgroups.Hierarchy(1, not_a_folder, ("cpu",)))
    assert [kind for kind, _ in lease.resources] == ["cgroup-parent", "cgroup"]  # leased first


def test_no_cpu_controller_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cgroups, "cpu_hierarchy", lambda: None)
    with pytest.raises(RunError, match="no cgroup hierarchy with the cpu controller is mounted"):
        cgroups.create(StubLease(), "pong", 50)
