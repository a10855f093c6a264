"""--keep-awake (parts/keep_awake.py): one spinner per CPU, pinned to it and in the idle
scheduling class (SCHED_IDLE) before the first agent starts, all gone when the sender is done,
on Ctrl-C, and with the lease of a crashed run; the result says it ran; the catalogue and the
report's labels carry it (a catalogue of version 13 gains the column, false for its points)."""

import os
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
from conftest import read_saved, run_mwperf
from report_support import latencies, result, write_point
from test_store_support import catalogue_rows

from mwperf.config import build_point
from mwperf.errors import UsageError
from mwperf.leases import Lease
from mwperf.parts.keep_awake import KeepAwake, cpus
from mwperf.report.labels import setting_text
from mwperf.store import ingest_point, schema
from mwperf.store.catalogue import connect


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] not in "ZX"
    except OSError:
        return False


def state(lease: Lease) -> SimpleNamespace:
    return SimpleNamespace(lease=lease, warnings=[])


def test_a_spinner_per_cpu_at_sched_idle_until_the_sender_is_done(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch
                                                                   ) -> None:
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(tmp_path))
    part = KeepAwake()
    with Lease.take("keep-awake test") as lease:
        run = state(lease)
        part.start(run)  # type: ignore[arg-type]
        pids = [p.pid for p, _ in part.spinners]
        assert len(pids) == len(cpus()) and run.warnings == []
        for pid, cpu in zip(pids, cpus()):
            assert os.sched_getscheduler(pid) == os.SCHED_IDLE
            assert os.sched_getaffinity(pid) == {cpu}
        assert len([r for r in lease.resources if r[0] == "process"]) == len(pids)
        part.sender_done(run)  # type: ignore[arg-type]
        assert not any(alive(pid) for pid in pids)
        assert not [r for r in lease.resources if r[0] == "process"]


def test_a_spinner_that_cannot_be_pinned_is_a_warning_not_a_stray_process(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(tmp_path))
    monkeypatch.setattr("mwperf.parts.keep_awake.cpus", lambda: [cpus()[0], 4095])  # no such CPU
    part = KeepAwake()
    with Lease.take("keep-awake test") as lease:
        run = state(lease)
        part.start(run)  # type: ignore[arg-type]
        (warning,) = run.warnings
        assert warning["code"] == "keep-awake-failed" and "CPU 4095: not pinned" in warning["message"]
        assert len(part.spinners) == 1  # the other CPU's spinner runs
        assert os.sched_getscheduler(part.spinners[0][0].pid) == os.SCHED_IDLE
        part.sender_done(run)  # type: ignore[arg-type]
        assert not [r for r in lease.resources if r[0] == "process"]


def test_ctrl_c_and_a_lease_released_without_them_stop_the_spinners(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MWPERF_LEASE_DIR", str(tmp_path))
    part = KeepAwake()
    with Lease.take("keep-awake test") as lease:
        part.start(state(lease))  # type: ignore[arg-type]
        pids = [p.pid for p, _ in part.spinners]
        part.interrupted(state(lease))  # type: ignore[arg-type]
        assert not any(alive(pid) for pid in pids)
    with Lease.take("keep-awake test") as lease:  # mwperf gone: its lease ends them
        part.start(state(lease))  # type: ignore[arg-type]
        pids = [p.pid for p, _ in part.spinners]
    for popen, _ in part.spinners:
        popen.wait(5)
    assert not any(alive(pid) for pid in pids)


def test_not_with_real_hosts() -> None:
    class Catalogue:
        def transports(self) -> list[str]:
            return ["udp"]

        def payloads(self) -> dict[str, int]:
            return {"Array1k": 1024}

    assert build_point({"keep_awake": True}, Catalogue).keep_awake
    with pytest.raises(UsageError, match="--keep-awake: keeps this machine's CPUs"):
        build_point({"keep_awake": True, "host": "b=ssh://robot"}, Catalogue)


def test_a_run_says_it_kept_the_cpus_awake_and_leaves_no_spinner(
        fake_env: dict[str, str], tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    done = run_mwperf("run", "--duration", "200ms", "--keep-awake", "--no-save", "--json-out",
                      str(out), env={**fake_env, "MWPERF_LEASE_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert read_saved(out)["config"]["keep_awake"] is True
    assert spinners_of(os.getpid()) == []  # (the command ran in this process: its children)


def spinners_of(parent: int) -> list[int]:
    """The spinners among ``parent``'s child processes."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            ppid = int((proc / "stat").read_text().split(")")[-1].split()[1])
            command = (proc / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == parent and b"SCHED_IDLE" in command and alive(int(proc.name)):
            found.append(int(proc.name))
    return found


def test_the_catalogue_and_the_labels_carry_it(tmp_path: Path) -> None:
    root = tmp_path / "r"
    awake = result("20261129T100000Z-udp-roundtrip-0001", latencies(100))
    awake["config"]["keep_awake"] = True
    old = result("20261129T100100Z-udp-roundtrip-0002", latencies(100))
    old["config"].pop("keep_awake", None)  # written before the option existed
    for document in (awake, old):
        ingest_point(write_point(root / document["run_id"], document))
    query = "SELECT keep_awake FROM points ORDER BY point_id"
    assert catalogue_rows(root, query) == [(True,), (False,)]
    with duckdb.connect(str(root / "catalogue.duckdb")) as con:
        con.execute("ALTER TABLE points DROP COLUMN keep_awake")
        con.execute("UPDATE schema_version SET version = 13")
    with connect(root, views=False) as con:
        assert schema.version_of(con) == schema.SCHEMA_VERSION >= 14
    assert catalogue_rows(root, query) == [(True,), (False,)]
    assert (setting_text("keep_awake", True), setting_text("keep_awake", False)) == (
        "keep-awake", "no keep-awake")
