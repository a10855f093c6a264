"""A middleware library's known crash is named where a point fails on it (known_crashes.py):
by the line the library wrote before dying, only when a signal ended the process."""

from pathlib import Path
from types import SimpleNamespace

from mwperf.known_crashes import named
from mwperf.runner import _collect

CYCLONE = ("1796130608.518157 [11] dq.builtin: type [INVALID 0000000000000000000000000000]: "
           "ddsi_xt_type_init_impl with invalid type object\n")


def test_a_known_line_and_a_signal_name_the_upstream_defect() -> None:
    said = named(CYCLONE, signalled=True)
    assert said is not None and "ros2/rmw_cyclonedds#535" in said and "not mwperf's" in said
    assert named(CYCLONE, signalled=False) is None  # it exited on its own: not that crash
    assert named("Segmentation fault\n", signalled=True) is None  # unknown: nothing claimed


def test_an_agent_that_died_so_says_why_in_its_note(tmp_path: Path) -> None:
    stderr = tmp_path / "ping.stderr"
    stderr.write_text(CYCLONE)
    proc = SimpleNamespace(name="ping", role="ping", exit_code=-11, killed=False, channel=None,
                           stderr_tail=lambda: CYCLONE.strip(),
                           stderr_text=lambda: stderr.read_text())
    run = _collect(proc, tmp_path)  # type: ignore[arg-type]
    assert run.report is None
    assert run.note.startswith("no report written (ended by SIGSEGV); stderr: ")
    assert "(a known crash: Cyclone DDS 0.10.2's XTypes type lookup" in run.note
