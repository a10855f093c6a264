"""Leases: resources released newest first, stale leases of a killed owner reaped by the next
mwperf (files, processes, network namespaces), live owners and recycled pids left alone."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import REAL_AGENT, real_agent_answers

from mwperf import leases
from mwperf.leases import Lease, process_id, reap_stale


@pytest.fixture(autouse=True)
def lease_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "leases"
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(folder))
    return folder


def test_released_newest_first_and_file_removed(tmp_path: Path, lease_folder: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    order: list[str] = []
    monkeypatch.setitem(leases.RELEASERS, "path", order.append)
    with Lease.take("unit") as lease:
        for name in ("a", "b", "c"):
            lease.add("path", name)
        assert json.loads(lease.path.read_text())["resources"] == [["path", n] for n in "abc"]
        assert lease.prefix.startswith("mwp") and len(lease.tag) == 6
    assert order == ["c", "b", "a"]
    assert list(lease_folder.iterdir()) == []


def test_a_path_pattern_releases_every_match(tmp_path: Path) -> None:
    for name in ("mwpabc_1", "mwpabc_2.global_mgmt", "mwpabd_1"):
        (tmp_path / name).write_text("x")
    (tmp_path / "mwpabc_dir").mkdir()
    with Lease.take("unit") as lease:
        lease.add("path", f"{tmp_path}/mwpabc_*")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["leases", "mwpabd_1"]


def test_unknown_kind_is_refused() -> None:
    lease = Lease.take("unit")
    with pytest.raises(ValueError, match="allowed process, netns"):
        lease.add("qdisc", "x")
    lease.release()


def test_failed_release_keeps_the_lease_for_the_next_reaper(
        lease_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(name: str) -> None:
        raise OSError("busy")
    monkeypatch.setitem(leases.RELEASERS, "path", refuse)
    lease = Lease.take("unit")
    lease.add("path", "/nowhere")
    assert lease.release() == ["path /nowhere: busy"]
    assert Lease.load(lease.path).resources == [("path", "/nowhere")]


def _owner_script(folder: Path, extra: str = "") -> str:
    return textwrap.dedent(f"""
        import os, subprocess, sys, time
        from pathlib import Path
        from mwperf.leases import Lease, process_id
        lease = Lease.take("killed-run")
        scratch = Path({str(folder)!r})
        lease.add("path", str(scratch))
        scratch.mkdir()
        (scratch / "data").write_text("x")
        child = subprocess.Popen(["sleep", "60"], start_new_session=True)
        lease.add("process", process_id(child.pid))
        {extra}
        print(child.pid, flush=True)
        time.sleep(60)
    """)


def _start_owner(script: str) -> tuple[subprocess.Popen, int]:
    owner = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert owner.stdout is not None
    return owner, int(owner.stdout.readline())


def test_stale_lease_of_a_killed_owner_is_reaped(tmp_path: Path, lease_folder: Path) -> None:
    scratch = tmp_path / "scratch"
    owner, child = _start_owner(_owner_script(scratch))
    lines: list[str] = []
    assert reap_stale(lines.append) == [] and lines == []  # owner alive: not touched
    owner.send_signal(signal.SIGKILL)
    owner.wait()
    assert scratch.exists() and leases.start_time(child) is not None
    released = reap_stale(lines.append)
    assert {kind for kind, _ in released} == {"path", "process"}
    assert not scratch.exists()
    for _ in range(100):  # the orphan is re-parented to init, which reaps it
        if leases.start_time(child) is None:
            break
        time.sleep(0.02)
    assert leases.start_time(child) is None
    assert len(lines) == 1 and "killed-run" in lines[0] and str(scratch) in lines[0]
    assert list(lease_folder.glob("*.json")) == []


def test_a_stale_lease_that_holds_nothing_is_removed_quietly(lease_folder: Path) -> None:
    """An mwperf killed before it made anything (or after it released all): nothing to
    release, so nothing to tell another run; the lease file goes."""
    lease = Lease.take("gone-run")
    doc = json.loads(lease.path.read_text())
    doc["owner"] = f"{os.getpid()}:1"  # an owner that is no longer running
    lease.path.write_text(json.dumps(doc))
    lines: list[str] = []
    reap_stale(lines.append)
    assert lines == [] and list(lease_folder.glob("*.json")) == []


def test_recycled_pid_is_not_the_owner(lease_folder: Path) -> None:
    lease = Lease.take("unit")
    doc = json.loads(lease.path.read_text())
    doc["owner"] = f"{os.getpid()}:1"  # this pid, another start time: a different process
    lease.path.write_text(json.dumps(doc))
    assert not Lease.load(lease.path).owner_alive()
    assert Lease.take("unit2").owner_alive()


def test_process_release_leaves_a_recycled_pid_alone() -> None:
    mine = subprocess.Popen(["sleep", "30"])
    try:
        leases.RELEASERS["process"](f"{mine.pid}:1")  # wrong start time: not ours
        assert mine.poll() is None
        leases.RELEASERS["process"](process_id(mine.pid))
        assert mine.wait(timeout=5) == -signal.SIGKILL
    finally:
        mine.kill()


def test_unreadable_lease_is_reported_not_fatal(lease_folder: Path) -> None:
    lease_folder.mkdir(parents=True)
    (lease_folder / "junk.json").write_text("{not json")
    lines: list[str] = []
    assert reap_stale(lines.append) == []
    assert lines and "unreadable lease" in lines[0]


def test_a_lease_released_between_the_listing_and_its_reading_is_passed_quietly(
        lease_folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another run's lease listed, then released by its owner before it is read (stress run 2,
    2026-11-30: "ignoring unreadable lease ...: No such file" broke a usage error's one line)."""
    lease_folder.mkdir(parents=True)
    (lease_folder / "gone.json").write_text("{}")
    load = Lease.load

    def released_meanwhile(path: Path) -> Lease:
        path.unlink()
        return load(path)

    monkeypatch.setattr(Lease, "load", staticmethod(released_meanwhile))
    lines: list[str] = []
    assert reap_stale(lines.append) == [] and lines == []


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_stale_network_namespace_is_removed(tmp_path: Path) -> None:
    extra = textwrap.dedent("""
        name = lease.prefix + "-unit"
        lease.add("netns", name)
        subprocess.run(["ip", "netns", "add", name], check=True)
        print(name, flush=True)
    """).replace("\n", "\n        ")
    owner = subprocess.Popen([sys.executable, "-c", _owner_script(tmp_path / "s", extra)],
                             stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert owner.stdout is not None
    name = owner.stdout.readline().strip()
    owner.stdout.readline()
    try:
        assert Path("/run/netns", name).exists()
        owner.kill()
        owner.wait()
        reap_stale(lambda line: None)
        assert not Path("/run/netns", name).exists()
    finally:
        owner.kill()
        subprocess.run(["ip", "netns", "delete", name], capture_output=True, check=False)


def test_shared_cgroup_parent_is_removed_only_when_empty(tmp_path: Path) -> None:
    parent = tmp_path / "mwperf"
    (parent / "other-run").mkdir(parents=True)
    leases.RELEASERS["cgroup-parent"](str(parent))  # another run's cgroup in it: kept
    assert parent.is_dir()
    (parent / "other-run").rmdir()
    leases.RELEASERS["cgroup-parent"](str(parent))
    assert not parent.exists()
    leases.RELEASERS["cgroup-parent"](str(parent))  # already gone: fine


@pytest.mark.skipif(not real_agent_answers(), reason="needs the built agent")
def test_start_times_agree_with_the_supervisors_lease(tmp_path: Path) -> None:
    """A process is named by pid and start time on both sides: this module's start_time and the
    supervisor's lease.json (crates/mwperf-supervise/src/lease.rs) read the same field the same
    way, so a lease written by either names the same process for the other."""
    scratch = tmp_path / "scratch"
    supervisor = subprocess.Popen([str(REAL_AGENT), "supervise", "--scratch", str(scratch), "--",
                                   "sleep", "30"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True)
    try:
        assert supervisor.stdout.readline().startswith("started ")
        lease = json.loads((scratch / "lease.json").read_text())
        assert lease["supervisor_pid"] == supervisor.pid
        assert leases.start_time(supervisor.pid) == lease["supervisor_start"]
        assert leases.start_time(lease["child_pid"]) == lease["child_start"]
        assert process_id(lease["child_pid"]) == f"{lease['child_pid']}:{lease['child_start']}"
    finally:
        supervisor.stdin.close()  # EOF: the supervisor stops its child and removes the scratch
        supervisor.stdout.read()
        supervisor.wait(10)
    assert not scratch.exists()
