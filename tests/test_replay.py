"""mwperf run --replay: the per-topic traces written from a recording (bags/trace.py), the flags'
checks (one line, exit 2, before any agent starts), and, with the real agent, a replay of the
fixture recording over udp one way and round trip: every recorded message of each topic arrives
on its own topic, with its recorded size, on the recorded schedule."""

import struct
import subprocess
from pathlib import Path

import pytest

from conftest import run_mwperf
from mwperf.bags.replay_point import Shared
from mwperf.bags.trace import MAGIC, ReplaySpec, write_traces

FIXTURES = Path(__file__).parent / "fixtures" / "bags"


def read_trace(path: Path) -> tuple[int, list[tuple[int, bytes]]]:
    data = path.read_bytes()
    assert data[:8] == MAGIC
    period = struct.unpack_from("<Q", data, 8)[0]
    records, at = [], 16
    while at < len(data):
        offset, length = struct.unpack_from("<QI", data, at)
        records.append((offset, data[at + 12:at + 12 + length]))
        at += 12 + length
    return period, records


@pytest.mark.parametrize("name", ["small.bag", "small.mcap"])
def test_traces_hold_every_message_at_its_offset(tmp_path: Path, name: str) -> None:
    plan = write_traces(ReplaySpec(FIXTURES / name), tmp_path)
    assert plan.topics == ["/camera/image_raw", "/scan"] and plan.counts == [30, 40]
    period, records = read_trace(tmp_path / "topic-1.trace")
    assert len(records) == 40 and period == pytest.approx(25e6, rel=0.1)
    offsets = [o for o, _ in records]
    assert offsets == sorted(offsets) and offsets[-1] == pytest.approx(0.97e9, rel=0.05)
    assert all(4000 <= len(b) <= 4100 for _, b in records)  # the real LaserScan bytes


def test_rate_and_window_and_topics(tmp_path: Path) -> None:
    plan = write_traces(ReplaySpec(FIXTURES / "small.bag", ["/scan"], 2.0, 500_000_000, None),
                        tmp_path)
    assert plan.topics == ["/scan"] and 18 <= plan.counts[0] <= 22
    _, records = read_trace(tmp_path / "topic-0.trace")
    assert records[-1][0] < 0.26e9  # half a second of recording at twice the speed
    assert not (tmp_path / "topic-1.trace").exists()


def test_a_sweep_writes_each_recording_replayed_the_same_way_once(tmp_path: Path) -> None:
    folders = iter(tmp_path / f"t{i}" for i in range(10))
    made: list[Path] = []

    def next_folder() -> Path:
        made.append(next(folders))
        made[-1].mkdir()
        return made[-1]

    shared = Shared(iter(next_folder, None))
    bag, scan = ReplaySpec(FIXTURES / "small.bag"), ReplaySpec(FIXTURES / "small.bag", ["/scan"])
    first, again, other = shared(bag), shared(ReplaySpec(FIXTURES / "small.bag")), shared(scan)
    assert first == again and first[0] != other[0] and made == [first[0], other[0]]
    assert first[1].counts == [30, 40] and other[1].counts == [40]
    # what a point alone writes: the same files
    alone = write_traces(bag, tmp_path)
    assert alone == first[1]
    for i in (0, 1):
        assert (first[0] / f"topic-{i}.trace").read_bytes() == \
            (tmp_path / f"topic-{i}.trace").read_bytes()


def mwperf(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``mwperf run --no-save ARGS`` against the fake agent (in this process: run_mwperf)."""
    return run_mwperf("run", "--no-save", *args, env=env, timeout=60)


@pytest.mark.parametrize("args, words", [
    (["--replay", "/nonexistent.bag"], "/nonexistent.bag: no such file"),
    (["--replay", str(FIXTURES / "small.bag"), "--replay-rate", "0"], "--replay-rate: must be"),
    (["--replay", str(FIXTURES / "small.bag"), "--replay-rate", "-2"], "--replay-rate: must be"),
    (["--replay", str(FIXTURES / "small.bag"), "--replay-rate", "fast"], "--replay-rate"),
    (["--replay", str(FIXTURES / "small.bag"), "--replay-window", "x+1s"], "--replay-window"),
    (["--replay", str(FIXTURES / "small.bag"), "--replay-window", "5s+1s"],
     "--replay-window: no message"),
    (["--replay", str(FIXTURES / "small.bag"), "--replay-topics", "/odom"],
     "--replay-topics: topic '/odom' is not in"),
    (["--replay", str(FIXTURES / "small.bag"), "--payload", "Array1k"], "--payload: not with"),
    (["--replay-rate", "2"], "--replay-rate: only with --replay"),
    (["--replay", str(FIXTURES / "small.bag"), "--replay-loop"], "--replay-loop: give --duration"),
    (["--replay", str(FIXTURES / "small.bag"), "--duration", "5s"], "--duration: with --replay"),
    (["--replay-loop"], "--replay-loop: only with --replay"),
    (["default", "--replay", str(FIXTURES / "small.bag")], "--replay: cannot be combined"),
])
def test_bad_replay_flags_are_one_line_exit_2(fake_env: dict[str, str], args: list[str],
                                              words: str) -> None:
    done = mwperf(fake_env, *args)
    assert done.returncode == 2 and words in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and done.stdout == ""
    assert not list(Path(fake_env["FAKE_AGENT_TRACE"]).iterdir())  # no agent started
