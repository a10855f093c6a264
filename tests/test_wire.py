"""wire.py's phase split, without agents: packets fall in the phase their release time is in."""
import struct
from pathlib import Path

from mwperf.wire import RECORD, boundaries, read_log, section, split

PHASES = {"setup_done_ns": 1_000, "first_send_ns": 1_100, "measure_start_ns": 1_200,
          "last_send_ns": 1_290, "drained_ns": 1_300, "idle_end_ns": 2_300}


def test_boundaries_follow_the_senders_phases() -> None:
    marks = boundaries(PHASES, stopped_ns=3_000)
    assert marks == [("setup", 0, 1_100), ("warmup", 1_100, 1_200), ("steady", 1_200, 1_300),
                     ("idle", 1_300, 2_300), ("teardown", 2_300, 3_000)]


def test_without_warmup_or_idle_those_phases_are_empty() -> None:
    phases = {**PHASES, "first_send_ns": 1_200, "idle_end_ns": None}
    counts = split([(1_199, 10), (1_200, 20), (1_299, 30), (1_300, 40)], 0,
                   boundaries(phases, 5_000))
    assert counts["warmup"]["packets"] == counts["idle"]["packets"] == 0
    assert (counts["setup"]["bytes"], counts["steady"]["bytes"]) == (10, 50)
    assert counts["teardown"]["bytes"] == 40  # from the drain on: nothing idles


def test_section_from_logs_on_disk(tmp_path: Path) -> None:
    log = [(50, 100), (1_150 - 1_000, 148), (1_250 - 1_000, 148), (1_260 - 1_000, 148),
           (1_500 - 1_000, 60), (2_500 - 1_000, 52)]
    for way in ("up", "down"):
        (tmp_path / f"l-{way}.bin").write_bytes(b"".join(RECORD.pack(*r) for r in log))
    report = {"epoch_ns": 1_000, "elapsed_ns": 2_000,
              "packet_log": {w: {"path": str(tmp_path / f"l-{w}.bin"), "packets": 6,
                                 "truncated": 0} for w in ("up", "down")}}
    wire = section([report], [{"link": "a<->b", "from": "a", "to": "b"}], PHASES, 2, 64)
    up = wire["links"][0]["up"]
    assert up["phases"]["steady"]["bytes"] == 296 and up["bytes_per_message"] == 148
    assert up["phases"]["setup"]["bytes"] == 100 and wire["setup_bytes"] == 200
    assert up["idle_bytes_per_s"] == round(60 / 1e-6, 1)
    assert up["phases"]["teardown"]["bytes"] == 52
    assert wire["message_bytes"] == 120 and up["overhead"] == round(148 / 120, 4)


def test_a_torn_record_at_the_end_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "x.bin"
    path.write_bytes(RECORD.pack(5, 92) + struct.pack("<Q", 7))
    assert read_log(path) == [(5, 92)]


def test_no_phases_says_why() -> None:
    assert "did not finish its setup" in section([], [], None, None, 64)["status"]
