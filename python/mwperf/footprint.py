"""``mwperf footprint``: what each transport costs in size and memory on this machine — the
table of the RIOT/ROS 2 paper (shared/seeds/003: flash and RAM per module) for a Linux agent.

- The agent binary: its text/data/bss (``size``) and the share of each Rust crate (and of the C
  code linked in), attributed from the symbol table (``nm -S``: symbol sizes, demangled names;
  the release agent keeps its symbols). One build with every transport is attributed, rather
  than one build per transport: nine release builds would take an hour on two cores.
- Per transport, from a short real round trip (``mwperf run --count``): the shared libraries its
  pong mapped (read from /proc/<pid>/maps by the agent itself) beyond those of plain UDP, and its
  resident memory after setup with one endpoint open — peak (VmHWM), anonymous, file-backed and
  shared — as its own report gives them.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import RunError
from .result.load import as_stream, load_result

CRATE = re.compile(r"^[<&*\s]*(?:dyn\s+)?([A-Za-z_][A-Za-z0-9_]*)::")
OTHER = "(C code, std internals and unnamed)"
DASH = "\u2014"


@dataclass(frozen=True)
class Binary:
    path: str
    file_bytes: int
    text: int
    data: int
    bss: int
    crates: list[tuple[str, int]]
    """(crate, bytes of its symbols), largest first"""

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "file_bytes": self.file_bytes, "text": self.text,
                "data": self.data, "bss": self.bss,
                "crates": [{"crate": c, "bytes": b} for c, b in self.crates]}


def crate_of(symbol: str) -> str:
    """The crate a demangled symbol belongs to (``<zenoh::x as Y>::f`` -> zenoh)."""
    found = CRATE.match(symbol)
    return found.group(1) if found else OTHER


def binary(path: Path) -> Binary:
    """Sizes of the agent at ``path``."""
    try:
        berkeley = subprocess.run(["size", str(path)], capture_output=True, text=True,
                                  check=True).stdout.splitlines()[1].split()
        symbols = subprocess.run(["nm", "-S", "--size-sort", "-C", "--defined-only", str(path)],
                                 capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError, IndexError) as exc:
        raise RunError(f"footprint: cannot read {path} with size/nm (binutils): {exc}") from None
    sizes: Counter[str] = Counter()
    for line in symbols.splitlines():
        parts = line.split(maxsplit=3)
        if len(parts) == 4:
            sizes[crate_of(parts[3])] += int(parts[1], 16)
    return Binary(str(path), path.stat().st_size, int(berkeley[0]), int(berkeley[1]),
                  int(berkeley[2]), sizes.most_common())


def transport_memory(transport: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    """A short round trip of ``transport``; its pong's memory and libraries (or why not)."""
    with tempfile.TemporaryDirectory(prefix="mwperf-footprint-") as scratch:
        out = Path(scratch) / "result.json"
        done = subprocess.run([sys.executable, "-m", "mwperf.cli", "run", "--transport",
                               transport, "--rate", "100", "--count", "20", "--warmup", "0s",
                               "--no-save", "--json-out", str(out)], capture_output=True, text=True,
                              env=env or os.environ.copy(), timeout=180, check=False)
        if not out.is_file():
            return {"transport": transport, "status": "failed",
                    "reason": (done.stderr.strip().splitlines() or ["no result"])[-1]}
        result = as_stream(load_result(out))  # any version (result/load.py)
    server = next((a for a in result["agents"] if a.get("role") in ("pong", "sub")), None)
    if server is None:
        return {"transport": transport, "status": result["status"],
                "reason": result.get("status_reason") or "no pong report"}
    proc = server["process"]
    return {"transport": transport, "status": result["status"],
            "peak_rss_kib": proc["max_rss_kib"], "rss_anon_kib": proc.get("rss_anon_kib"),
            "rss_file_kib": proc.get("rss_file_kib"), "rss_shmem_kib": proc.get("rss_shmem_kib"),
            "libraries": proc.get("libraries", [])}


def with_added_libraries(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each row's ``added``: its libraries that plain UDP's pong does not map."""
    base = next((set(r.get("libraries", [])) for r in rows if r["transport"] == "udp"), set())
    return [{**r, "added": [lib for lib in r.get("libraries", []) if lib not in base]}
            for r in rows]


def render(agent: Binary, rows: list[dict[str, Any]], top: int = 12) -> str:
    from .sizes import format_bytes

    out = [f"agent {agent.path}: {format_bytes(agent.file_bytes)} on disk; text "
           f"{format_bytes(agent.text)}, data {format_bytes(agent.data)}, bss "
           f"{format_bytes(agent.bss)}", "", "largest crates (symbol sizes):"]
    total = sum(b for _, b in agent.crates) or 1
    out += [f"  {format_bytes(b):>10}  {100 * b / total:5.1f} %  {c}" for c, b in agent.crates[:top]]
    out += ["", "per transport (its pong after setup with one endpoint open):",
            f"  {'transport':<11} {'peak RSS':>10} {'anon':>10} {'file':>10} {'shmem':>10}  "
            f"libraries beyond udp's"]
    for r in rows:
        if "peak_rss_kib" not in r:
            out.append(f"  {r['transport']:<11} {r['status']}: {r.get('reason', '')}")
            continue
        kib = [r.get(k) for k in ("peak_rss_kib", "rss_anon_kib", "rss_file_kib", "rss_shmem_kib")]
        cells = [DASH if v is None else format_bytes(v * 1024) for v in kib]
        added = ", ".join(r["added"]) or DASH
        out.append(f"  {r['transport']:<11} " + " ".join(f"{c:>10}" for c in cells)
                   + f"  {added}")
    return "\n".join(out) + "\n"
