"""Target files (``--targets FILE``; a scenario's ``targets:``): a run passes or fails against
what a platform must sustain, written once and kept beside the code it gates.

Two formats, told apart by their keys:

- **iRobot's** (ros2-performance ``irobot_benchmark/performance_target/*_rpi3.json``), read as
  it is: ``resources`` (``cpu[%]``, ``rss[KB]``) and ``latency_total`` (``late[%]``,
  ``too_late[%]``, ``lost[%]``); ``topology_file``, ``platform``, ``additional_options`` and
  ``comments`` describe the run and are not checked. A figure above its target fails, as
  iRobot's own evaluation script colours it. ``lost[%]`` is iRobot's lost / (received + lost).
- **mwperf's**: ``{"gates": [EXPR, ...]}`` (JSON or YAML), the ``--gate`` expressions.

Each target becomes a gate (soak/gates.py) whose ``source`` names the file and key, so a miss is
printed and saved with its figure and limit like any gate, and exits 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from ..errors import UsageError

IROBOT = {("resources", "cpu[%]"): ("cpu", "%"), ("resources", "rss[KB]"): ("rss", "KiB"),
          ("latency_total", "late[%]"): ("late", "%"),
          ("latency_total", "too_late[%]"): ("too-late", "%"),
          ("latency_total", "lost[%]"): ("loss", "%")}
"""iRobot's (section, key) -> mwperf's gate metric and the unit its number is written in"""
IROBOT_NOTES = ("topology_file", "platform", "additional_options", "comments")
"""iRobot's keys that describe the run (shown, not checked)"""


def load_targets(path: Any) -> tuple[tuple[str, str], ...]:
    """The gates of target file ``path`` as (gate expression, source) pairs; a UsageError
    naming --targets, the file and what is wrong otherwise. None or '' is no file."""
    if path in (None, ""):
        return ()
    file = Path(str(path).strip()).expanduser()
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--targets {file}: cannot read it ({exc.__class__.__name__}: "
                         f"{getattr(exc, 'strerror', None) or exc})") from None
    try:
        data = json.loads(text) if file.suffix == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise UsageError(f"--targets {file}: not valid "
                         f"{'JSON' if file.suffix == '.json' else 'YAML or JSON'}: "
                         f"{str(exc).splitlines()[0]}") from None
    if not isinstance(data, dict) or not data:
        raise UsageError(f"--targets {file}: expected an object: iRobot's target file "
                         "(resources, latency_total) or mwperf's {gates: [EXPR, ...]}")
    if "gates" in data:
        return _mwperf(file, data)
    return _irobot(file, data)


def _mwperf(file: Path, data: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    extra = sorted(set(data) - {"gates", "comments"})
    gates = data["gates"]
    if extra:
        raise UsageError(f"--targets {file}: unknown key '{extra[0]}'; allowed: gates, "
                         "comments")
    if not isinstance(gates, list) or not gates or not all(isinstance(g, str) for g in gates):
        raise UsageError(f"--targets {file}: gates must be a non-empty list of gate "
                         "expressions, e.g. [\"p99<=2ms\", \"loss<=1%\"]")
    return tuple((gate, f"{file.name} gates[{i}]") for i, gate in enumerate(gates))


def _irobot(file: Path, data: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    sections = {section for section, _ in IROBOT}
    out: list[tuple[str, str]] = []
    for key, value in data.items():
        if key in IROBOT_NOTES:
            continue
        if key not in sections:
            raise UsageError(f"--targets {file}: unknown key '{key}'; allowed: "
                             f"{', '.join(sorted(sections))} (iRobot's targets), "
                             f"{', '.join(IROBOT_NOTES)} (not checked), or gates (mwperf's)")
        if not isinstance(value, dict):
            raise UsageError(f"--targets {file}: {key} must be an object of targets")
        for name, limit in value.items():
            if (key, name) not in IROBOT:
                allowed = ", ".join(n for s, n in IROBOT if s == key)
                raise UsageError(f"--targets {file}: {key}.{name} is not a target; allowed "
                                 f"in {key}: {allowed}")
            if isinstance(limit, bool) or not isinstance(limit, (int, float)) or limit < 0:
                raise UsageError(f"--targets {file}: {key}.{name} must be a number >= 0, "
                                 f"got {limit!r}")
            metric, unit = IROBOT[(key, name)]
            number = f"{limit:g}" if unit == "%" else str(int(limit)) if float(
                limit).is_integer() else None
            if number is None:  # a fraction of a KB: bytes
                number, unit = str(round(limit * 1024)), ""
            out.append((f"{metric}<={number}{unit}", f"{file.name} {key}.{name}"))
    if not out:
        raise UsageError(f"--targets {file}: no targets in it (iRobot's resources or "
                         "latency_total, or mwperf's gates)")
    return tuple(out)
