"""What the benchmark scripts share: stopping an agent, and writing a section of BENCHMARKS.md
between its `<!-- bench:NAME:begin -->` / `<!-- bench:NAME:end -->` markers."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent.parent / "BENCHMARKS.md"


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
