"""heaptrack on an agent (``--alloc-sites``): where its preload library and interpreter are, the
environment that records a process, and turning the raw record into call sites after the run.

heaptrack (KDE; Debian package ``heaptrack``) interposes malloc and friends with
``libheaptrack_preload.so`` and writes every allocation with its backtrace to the file named by
``DUMP_HEAPTRACK_OUTPUT``; ``heaptrack_interpret`` resolves the addresses (it needs the binaries
still on disk, so it runs right after the point). The same files the ``heaptrack`` script uses:
``<bin>/../lib/heaptrack/{libheaptrack_preload.so,libexec/heaptrack_interpret}``.
"""

import functools
import gzip
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ..errors import RunError
from ..result_types import RunResultAllocSites, RunResultAllocSitesProcessesItem
from .sites import analyse, parse, table

ALLOC_SITES_DIR = "alloc-sites"
INSTALL = "install heaptrack (Debian/Ubuntu: apt install heaptrack) or leave out --alloc-sites"


@dataclass(frozen=True)
class Heaptrack:
    preload: Path
    interpret: Path
    version: str


@functools.cache
def find() -> Heaptrack:
    """heaptrack's preload library and interpreter; RunError naming what to install."""
    script = shutil.which("heaptrack")
    roots = [Path(script).resolve().parent.parent / "lib" / "heaptrack"] if script else []
    roots += [Path("/usr/lib/heaptrack"), Path("/usr/lib/x86_64-linux-gnu/heaptrack"),
              Path("/usr/lib/aarch64-linux-gnu/heaptrack"), Path("/usr/local/lib/heaptrack")]
    for root in roots:
        preload, interpret = root / "libheaptrack_preload.so", root / "libexec" / "heaptrack_interpret"
        if preload.is_file() and interpret.is_file():
            return Heaptrack(preload, interpret, _version(script))
    raise RunError(f"--alloc-sites: heaptrack is not installed (looked for "
                   f"libheaptrack_preload.so in {', '.join(str(r) for r in roots)}); {INSTALL}")


def _version(script: str | None) -> str:
    if script is None:
        return "unknown"
    try:
        out = subprocess.run([script, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return out.stdout.strip().removeprefix("heaptrack ") or "unknown"


def raw_path(workdir: Path, name: str) -> Path:
    return workdir / ALLOC_SITES_DIR / f"{name}.raw"


def environment(tool: Heaptrack, workdir: Path, name: str, env: dict[str, str] | None
                ) -> dict[str, str]:
    """The environment that records agent ``name`` (its raw record in the point's folder)."""
    raw = raw_path(workdir, name)
    raw.parent.mkdir(parents=True, exist_ok=True)
    existing = (env or {}).get("LD_PRELOAD") or os.environ.get("LD_PRELOAD")
    return {**(env or {}), "LD_PRELOAD": f"{tool.preload}:{existing}" if existing
            else str(tool.preload), "DUMP_HEAPTRACK_OUTPUT": str(raw)}


def demangle(names: list[str]) -> list[str]:
    """Rust v0 (``_R...``) and C++ (``_Z...``) symbols through c++filt, when it is there."""
    wanted = [n for n in names if n.startswith(("_R", "_Z"))]
    filt = shutil.which("c++filt")
    if not wanted or filt is None:
        return names
    try:
        out = subprocess.run([filt], input="\n".join(wanted) + "\n", capture_output=True,
                             text=True, timeout=60).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired):
        return names
    plain = dict(zip(wanted, out)) if len(out) == len(wanted) else {}
    return [plain.get(n, n) for n in names]


def collect(tool: Heaptrack, workdir: Path, processes: list[tuple[str, str]]
            ) -> RunResultAllocSites:
    """The run-result's ``alloc_sites`` section for (name, role) of every recorded agent; each
    one's record is kept gzipped for heaptrack_print/heaptrack_gui and its table as text."""
    folder = workdir / ALLOC_SITES_DIR
    out: list[RunResultAllocSitesProcessesItem] = []
    for name, role in processes:
        raw = raw_path(workdir, name)
        if not raw.is_file() or raw.stat().st_size == 0:
            out.append({"name": name, "role": role,
                        "error": "heaptrack wrote no record (the agent did not start?)"})
            continue
        kept = folder / f"{name}.heaptrack.gz"
        try:
            with raw.open("rb") as source, gzip.open(kept, "wb", compresslevel=6) as sink:
                proc = subprocess.run([str(tool.interpret)], stdin=source,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      timeout=600)
                sink.write(proc.stdout)
        except (OSError, subprocess.SubprocessError) as exc:
            out.append({"name": name, "role": role,
                        "error": f"heaptrack_interpret failed: {exc}"})
            continue
        finally:
            raw.unlink(missing_ok=True)
        if proc.returncode != 0:
            out.append({"name": name, "role": role, "error": f"heaptrack_interpret failed: "
                        f"{proc.stderr.decode(errors='replace').strip()[-300:]}"})
            continue
        record = parse(proc.stdout.decode(errors="replace").splitlines())
        record.strings = demangle(record.strings)
        analysis = analyse(record)
        (folder / f"{name}.txt").write_text(table(name, analysis), encoding="utf-8")
        out.append({"name": name, "role": role, **analysis,
                    "record": f"{ALLOC_SITES_DIR}/{kept.name}",
                    "table": f"{ALLOC_SITES_DIR}/{name}.txt"})
    return {"tool": "heaptrack", "version": tool.version, "processes": out}
