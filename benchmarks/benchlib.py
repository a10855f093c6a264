"""What the benchmark scripts share: stopping an agent, medians that skip missing runs, the
"when and at which commit" of a measurement, writing a section of BENCHMARKS.md between its
`<!-- bench:NAME:begin -->` / `<!-- bench:NAME:end -->` markers, and reading what mwperf wrote
(`read_result`, `measurement_of`: the one place a script meets a result's shape)."""

from __future__ import annotations

import argparse

import datetime
import json
import re
import statistics
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "BENCHMARKS.md"


def read_result(text: str) -> dict[str, Any]:
    """A result mwperf printed (`--json`) or saved (`--json-out`, result.json), any version, as
    the scripts read it: a stream run's figures (measurement, per_topic, per_subscriber, agents,
    discovery) at the top, as a v2 run-result has them, whichever version wrote it (a v3 result:
    read by mwperf's own reader, python/mwperf/result/load.py); a graph run's edges, chains and
    nodes as they are."""
    return as_read(json.loads(text))


def as_read(document: Any) -> Any:
    """`document` (a result as JSON data) as :func:`read_result` gives it; anything else (an agent
    report, a document made up by a test) as it is."""
    if not isinstance(document, dict) or document.get("kind") != "result":
        return document  # a v1/v2 run-result or graph-result has that shape already
    if str(ROOT / "python") not in sys.path:
        sys.path.insert(0, str(ROOT / "python"))
    from mwperf.result.load import as_stream, parse_result
    return as_stream(parse_result(document, "the result read"))


def measurement_of(document: dict[str, Any] | None) -> dict[str, Any] | None:
    """The measurement of a result (any version, :func:`as_read`) or of an agent's report
    (`mwperf-agent ping --json`, a point folder's agents/*.json); None when it has none."""
    return (as_read(document) or {}).get("measurement")


def med(xs: Iterable[float | None]) -> float:
    """The median of the runs that produced a value; NaN when none did."""
    present = [x for x in xs if x is not None]
    return statistics.median(present) if present else float("nan")


def spread(xs: list[float]) -> str:
    """The min-max of repetitions, as the tables print it."""
    return f"{min(xs):,.1f}-{max(xs):,.1f}"


def stamp() -> str:
    """When a measurement was taken: ``2026-11-23 12:40 UTC``."""
    return f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"


def revision() -> str:
    """The commit measured (short hash), empty outside a git checkout."""
    return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=False).stdout.strip()


def stop(p: subprocess.Popen, timeout: float = 10) -> None:
    """SIGTERM (the agent writes its report), SIGKILL if it does not exit in `timeout` s."""
    p.terminate()
    try:
        p.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def write_section(name: str, text: str, path: Path = BENCHMARKS) -> None:
    """Replace what is between the markers of section `name`; exits naming them if absent."""
    begin, end = f"<!-- bench:{name}:begin -->", f"<!-- bench:{name}:end -->"
    doc = path.read_text()
    new, n = re.subn(re.escape(begin) + r"\n.*?" + re.escape(end), lambda _: f"{begin}\n{text}\n{end}", doc, flags=re.S)
    if n != 1:
        sys.exit(f"bench: {path} lacks the markers {begin} ... {end}")
    path.write_text(new)


class CpuIdleHeld:
    """While open, /dev/cpu_dma_latency holds 0 µs: the kernel keeps every CPU out of deep idle
    states (on a VM with the haltpoll driver: no halting exit per wake-up). Both tools of a
    comparison run under it alike; it removes the idle-exit cost that otherwise dominates
    small-message round trips on an idle machine. Needs root; says so otherwise."""

    def __init__(self, wanted: bool) -> None:
        self.wanted = wanted
        self.fd: int | None = None

    def __enter__(self) -> "CpuIdleHeld":
        if self.wanted:
            import os
            import struct
            try:
                self.fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
                os.write(self.fd, struct.pack("<i", 0))
            except OSError as exc:
                sys.exit(f"bench: --prevent-cpu-idle: cannot hold /dev/cpu_dma_latency ({exc}); run as root")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            import os
            os.close(self.fd)


def find_agent(given: str | None, bench: str) -> Path:
    """The agent to measure: --agent, else $MWPERF_AGENT, else cargo's release build
    ($CARGO_TARGET_DIR or target/); exits naming ``bench`` and the fix when none is there."""
    import os
    target = os.environ.get("CARGO_TARGET_DIR") or str(ROOT / "target")
    for p in ([given] if given else []) + [os.environ.get("MWPERF_AGENT"),
                                           os.path.join(target, "release", "mwperf-agent")]:
        if p and Path(p).is_file():
            return Path(p)
    sys.exit(f"{bench}: build the agent first (cargo build --release) or pass --agent PATH")


def interleaved_parser(doc: str, reps: int, transports: Iterable[str]) -> argparse.ArgumentParser:
    """The options of a benchmark of interleaved repetitions over transports: --reps,
    --seconds, --transports (comma-separated; ``listed`` splits them) and --write (its
    BENCHMARKS.md section); the caller adds its own and parses."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=reps)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--transports", default=",".join(transports))
    parser.add_argument("--write", action="store_true", help="write BENCHMARKS.md's section")
    return parser


def listed(text: str) -> list[str]:
    """A comma-separated option's items."""
    return [t.strip() for t in text.split(",") if t.strip()]
