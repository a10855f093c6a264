"""The profile's files in the point's folder (``profile/<name>.svg``, ``.folded``,
``-top.txt``) and the run-result's ``profile`` section: per process, its samples, its flame
graph and its top functions."""
from __future__ import annotations

from pathlib import Path

from . import flamegraph
from ..result_types import RunResultProfile
from .record import EVENT, FREQUENCY_HZ, PROFILE_DIR, Recorder
from .stacks import fold, folded_text

TOP = 15


def write_profiles(recorder: Recorder, names: dict[int, str], folder: Path) -> RunResultProfile:
    """Fold what ``recorder`` sampled, per process named by ``names`` (pid -> name), into
    ``folder``; the section for the run-result."""
    profiles = fold(recorder.script())
    processes = []
    for pid, name in names.items():
        profile = profiles.get(pid)
        if profile is None or not profile.samples:
            processes.append({"name": name, "pid": pid, "samples": 0, "sampled_cpu_s": 0.0,
                              "svg": None, "top": []})
            continue
        stem = name.replace("/", "_")
        (folder / f"{stem}.folded").write_text(folded_text(profile))
        (folder / f"{stem}.svg").write_text(flamegraph.render(
            profile.stacks, f"{name} (pid {pid}): {profile.samples} samples"))
        top = profile.top(TOP)
        (folder / f"{stem}-top.txt").write_text(
            "self %  total %  function\n"
            + "".join(f"{t['self_pct']:6.2f}  {t['total_pct']:7.2f}  {t['function']}\n"
                      for t in top))
        processes.append({"name": name, "pid": pid, "samples": profile.samples,
                          "sampled_cpu_s": round(profile.cpu_ns / 1e9, 6),
                          "svg": f"{PROFILE_DIR}/{stem}.svg", "top": top})
    recorder.data.unlink(missing_ok=True)  # large; the folded stacks keep what it said
    return {"tool": "perf record", "event": EVENT, "frequency_hz": FREQUENCY_HZ,
            "call_graph": "dwarf",
            "processes": processes}
