"""The fastdds transport through `mwperf run` with the real agent and Debian's Fast DDS: a round
trip completes with every message back and nothing of Fast DDS's left in /dev/shm; its options
work (publish-mode, max-rate) or are refused in one line naming the option (exit 2)."""

import os
import subprocess
from pathlib import Path

import pytest
from conftest import read_saved, run_mwperf_own_shm, run_mwperf

SHM = Path("/dev/shm")


def fastdds_files() -> set[str]:
    return {p.name for p in SHM.iterdir() if p.name.startswith(("fastrtps_", "sem.fastrtps_"))}


def mapped() -> set[str]:
    """/dev/shm names some live process maps (another Fast DDS user on this machine, e.g. a
    test running beside this one: not a leftover)."""
    names = set()
    for maps in Path("/proc").glob("[0-9]*/maps"):
        try:
            text = maps.read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if "/dev/shm/" in line:
                names.add(line.split("/dev/shm/", 1)[1].removesuffix(" (deleted)"))
    return names


def leftovers(before: set[str]) -> set[str]:
    """What appeared since ``before`` and nobody uses (a lock file goes with its segment)."""
    in_use = mapped()
    return {n for n in fastdds_files() - before
            if n not in in_use and n.removesuffix("_el") not in in_use}


def mwperf(*args: str) -> subprocess.CompletedProcess[str]:
    return run_mwperf("run", "--no-save", "--transport", "fastdds", "--duration", "1s", "--warmup",
                      "200ms", *args, timeout=90)


@pytest.mark.agent
@pytest.mark.parametrize("opts", [[], ["--opt", "shm=off"], ["--opt", "publish-mode=async"],
                                  ["--opt", "max-rate=5MB/s"], ["--opt", "heartbeat=100ms"]])
def test_a_round_trip_completes_and_leaves_nothing(tmp_path: Path, opts: list[str]) -> None:
    out = tmp_path / "result.json"
    # a reliable sample lost on the way (a loaded machine's full socket buffer) is repaired
    # only after the writer's next heartbeat: Fast DDS's period is 3 s (DEFAULT_HEARTBEAT_NS in
    # the agent's fastdds descriptor), longer than the ping's default 2 s wait for its last
    # replies, so the wait here covers two periods and a second (a stress run: 2 of 240 still
    # missing at 2 s with max-rate=5MB/s; another 1 of 200 at 4 s, one period: the repair
    # itself, behind the flow controller, can miss the first heartbeat under load)
    done, left = run_mwperf_own_shm("run", "--no-save", "--transport", "fastdds", "--duration",
                                    "1s", "--warmup", "200ms", "--rate", "200", "--payload",
                                    "Array1k", "--peer-timeout", "7s", "--json-out", str(out),
                                    *opts, timeout=90)
    if done.returncode != 0 and not os.environ.get("CI") and "not found" in done.stderr:
        pytest.skip(done.stderr.strip().splitlines()[-1])
    assert done.returncode == 0, done.stderr
    result = read_saved(out)
    accounting = result["measurement"]["accounting"]
    assert accounting["received"] == accounting["sent"] > 100, accounting
    assert accounting["corrupted"] == 0
    assert left == [], f"left in /dev/shm: {left}"


@pytest.mark.agent
@pytest.mark.parametrize(("opt", "words"), [
    ("data-sharing=on", "--opt data-sharing=on (Fast DDS shares data only for bounded"),
    ("max-rate=fast", "--opt max-rate=fast (a data rate such as"),
    ("publish-mode=maybe", "--opt publish-mode=maybe (allowed: sync, async)"),
    ("shm=yes", "--opt shm=yes (allowed: on, off)"),
    ("heartbeat=0s", "--opt heartbeat=0s (a period above 0, e.g. 100ms)"),
    ("heartbeat=soon", "--opt heartbeat=soon ("),
])
def test_bad_options_are_one_line_exit_2(opt: str, words: str) -> None:
    done = mwperf("--opt", opt)
    assert done.returncode == 2, done.stderr
    assert words in done.stderr
