"""A power cut mid-sweep, as near as a test gets: SIGKILL of mwperf and of every process below it
(agents, daemons; their process groups too) at a random moment, twice; then 'mwperf run
--resume' measures only what is missing, the catalogue has each point of the sweep once, and
nothing of the killed runs is left behind: no process, lease, CPU cgroup, scratch folder,
half-saved point folder or temporary file (the doctor's leftover check finds none of theirs)."""

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import alive, descendants, run_mwperf
from test_disk import assert_nothing_half_written
from test_store_support import catalogue_rows

from mwperf.emulation import cgroups

pytestmark = pytest.mark.agent

SWEEP = ("transport: udp\nrate: [200, 500, 1000]\npayload: [Array64, Array1k]\nduration: 300ms\n"
         "warmup: 0s\n")
POINTS = 6
HIERARCHY = cgroups.cpu_hierarchy()
QUOTA = (("--cpu-quota", "90%") if os.geteuid() == 0 and HIERARCHY is not None else ())
"""a CPU quota where there are cgroups: leased resources a killed run leaves for the next"""


def lease_files(env: dict[str, str]) -> list[Path]:
    folder = Path(env["MWPERF_LEASE_DIR"])
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def completed(root: Path) -> int:
    for manifest in root.glob("*/sweep.json"):
        try:
            return sum(e["status"] == "complete"
                       for e in json.loads(manifest.read_text())["entries"])
        except (OSError, ValueError, KeyError):
            return 0
    return 0


def power_cut(args: list[str], env: dict[str, str], root: Path, rng: random.Random
              ) -> tuple[list[int], list[dict]]:
    """Start 'mwperf ARGS', wait for a point to complete, then SIGKILL it and everything below
    it at a random moment; (every pid killed, the leases they held)."""
    before = completed(root)
    proc = subprocess.Popen([sys.executable, "-m", "mwperf.cli", *args], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while completed(root) <= before and proc.poll() is None:
        assert time.monotonic() < deadline, "no point completed within 60 s"
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep ended before the cut"
    time.sleep(rng.uniform(0.0, 1.2))  # somewhere in the next point: setup, measuring, saving
    held = [json.loads(p.read_text()) for p in lease_files(env)]
    pids = [proc.pid] + descendants(proc.pid)
    for pid in pids:
        groups = {os.getpgid(pid)} if alive(pid) else set()
        for group in groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()
    return pids, held


def test_resume_after_a_power_cut_measures_only_what_is_missing(
        leased_env: dict[str, str], tmp_path: Path) -> None:
    env = {**leased_env, "TMPDIR": str(tmp_path / "tmp")}
    (tmp_path / "tmp").mkdir()
    (tmp_path / "s.yaml").write_text(SWEEP)
    root = tmp_path / "r"
    rng = random.Random(int(os.environ.get("MWPERF_TEST_SEED", time.time())))
    killed, held = power_cut(["run", str(tmp_path / "s.yaml"), "--results", str(root),
                              *QUOTA], env, root, rng)
    (folder,) = root.glob("*/")
    if completed(root) < POINTS - 1:  # a second cut, in the resumed run
        more, leases = power_cut(["run", "--resume", str(folder), *QUOTA], env, root, rng)
        killed += more
        held += leases
    kept = {e["index"]: e["result"] for e in json.loads((folder / "sweep.json").read_text())
            ["entries"] if e["status"] == "complete"}
    time.sleep(0.5)  # the kernel reaps
    assert not [pid for pid in killed if alive(pid)]

    resumed = run_mwperf("run", "--resume", str(folder), *QUOTA, env=env, timeout=180)
    assert resumed.returncode == 0, resumed.stderr
    print(resumed.stderr)
    entries = json.loads((folder / "sweep.json").read_text())["entries"]
    assert [e["status"] for e in entries] == ["complete"] * POINTS
    # only what was missing was measured: the kept points are the same folders
    assert resumed.stderr.count("(kept from the earlier run)") >= len(kept)
    assert {e["index"]: e["result"] for e in entries if e["index"] in kept} == kept
    saved = sorted(p.parent.name for p in (folder / "points").glob("*/result.json"))
    assert len(saved) == POINTS  # nothing measured twice
    # each point once in the catalogue
    rows = catalogue_rows(root, "SELECT point_index, folder FROM points WHERE run_id = ? "
                          "ORDER BY 1", [folder.name])
    assert [index for index, _ in rows] == list(range(1, POINTS + 1))
    assert {f for _, f in rows} == {f"{folder.name}/{e['result']}" for e in entries}
    assert_nothing_half_written(root)

    # nothing of the killed runs is left
    assert not lease_files(env)
    tags = {f"mwp{lease['tag']}" for lease in held}
    leftovers = [name for lease in held for kind, name in lease["resources"]
                 if kind == "path" and Path(name).exists()]
    assert not leftovers
    if HIERARCHY is not None:
        parent = HIERARCHY.mount / cgroups.PARENT
        assert not [p for p in parent.glob("mwp*") if p.name[:9] in tags]
    assert not list((tmp_path / "tmp").glob("mwperf-*"))  # the agents' scratch folders
    doctor = subprocess.run([sys.executable, "-c",
                             "import json; from mwperf.doctor.leftovers import check_leftovers; "
                             "print(json.dumps([f.to_dict() for f in check_leftovers()]))"],
                            env=env, capture_output=True, text=True, check=True)
    findings = json.loads(doctor.stdout)
    assert [f for f in findings if f["name"] == "stale leases"][0]["status"] == "ok"
    assert not [f for f in findings if any(tag in f["detail"] for tag in tags)]
