"""The top allocation call sites of one process, from heaptrack's interpreted record (pure).

heaptrack_interpret writes one line per fact, numbers in hex: ``s`` strings (1-based),
``i <ip> <module> [<function> [<file> <line>] ...]`` instruction pointers (1-based), ``t <ip>
<parent>`` backtrace nodes (1-based, 0 = the root), ``a <size> <trace>`` allocation kinds
(0-based), ``+ <kind>`` one allocation, ``- <kind>`` one free, in the order they happened.

The steady state is cut out with the agent's markers (``--alloc-site-markers``): one allocation
by ``mwperf_alloc_sites_marker`` after each measured message, so the allocations between the
first marker and the last are those of ``markers - 1`` messages — the same window as
``--count-allocs`` — and the markers themselves are left out of every figure.
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TypedDict

from ..result_types import RunResultAllocSitesProcessesItemSitesItem

MARKER_FUNCTION = "mwperf_alloc_sites_marker"
MARKER_BYTES = 4093
"""crates/mwperf-agent/src/allocs.rs MARKER_BYTES: the marker's block size"""
TOP = 12

ALLOCATOR = re.compile(
    r"^(<?alloc::|<?core::|__rust_|__rdl_|__rg_|std::alloc|<std::alloc|hashbrown::raw::"
    r"|operator new|operator delete|malloc$|calloc$|realloc$|posix_memalign$|aligned_alloc$"
    r"|__libc_|__GI___libc_|_int_malloc|__gnu_cxx::new_allocator|std::allocator"
    r"|ddsrt_(malloc|calloc|realloc)(_s)?$"
    r"|std::__new_allocator|std::vector<.*>::_M_realloc|std::_Vector_base)")
"""frames that are the allocator's machinery (Rust's alloc/RawVec, libc's malloc, C++'s
allocators), skipped to name the code that asked for the memory"""

_LEGACY = [("$LT$", "<"), ("$GT$", ">"), ("$C$", ","), ("$RF$", "&"), ("$BP$", "*"),
           ("$u20$", " "), ("$u27$", "'"), ("$u5b$", "["), ("$u5d$", "]"), ("$u7b$", "{"),
           ("$u7d$", "}"), ("$u3b$", ";"), ("$u2b$", "+"), ("$u22$", '"'), ("..", "::")]
_HASH = re.compile(r"::h[0-9a-f]{16}$")
_V0_HASH = re.compile(r"\[[0-9a-f]{16}\]")


def readable(name: str) -> str:
    """A Rust symbol as a person reads it: legacy escapes decoded, the hash suffix dropped
    (``alloc::raw_vec::RawVec$LT$T$GT$::grow_one::h5bc1..`` -> ``alloc::raw_vec::RawVec<T>::
    grow_one``); v0 names (``_R...``) are left to :func:`demangle_v0` beforehand."""
    name = _V0_HASH.sub("", _HASH.sub("", name))
    if "$" in name or ".." in name:
        for escaped, plain in _LEGACY:
            name = name.replace(escaped, plain)
    return name[1:] if name.startswith("_<") else name


@dataclass
class Record:
    """One process's interpreted heaptrack record, as read."""

    strings: list[str] = field(default_factory=lambda: [""])
    ips: list[tuple[int, int, list[int]]] = field(default_factory=lambda: [(0, 0, [])])
    """per instruction pointer: (address, module string, function strings innermost first)"""
    traces: list[tuple[int, int]] = field(default_factory=lambda: [(0, 0)])
    """per backtrace node: (instruction pointer, parent node)"""
    kinds: list[tuple[int, int]] = field(default_factory=list)
    """per allocation kind: (size, backtrace node)"""
    events: list[int] = field(default_factory=list)
    """every allocation in order, as its kind"""
    frees: int = 0
    command: str = ""


def parse(lines: Iterable[str]) -> Record:
    """Read heaptrack_interpret's output (lines of other kinds, and lines that do not parse,
    as a record cut short by a killed agent ends, are skipped)."""
    rec = Record()
    for line in lines:
        try:
            _read_line(rec, line)
        except (ValueError, IndexError):
            continue
    return rec


def _read_line(rec: Record, line: str) -> None:
    tag, _, rest = line.rstrip("\n").partition(" ")
    if tag == "+":
        rec.events.append(int(rest, 16))
    elif tag == "-":
        rec.frees += 1
    elif tag == "s":  # a string that does not parse still takes its index
        length, _, text = rest.partition(" ")
        rec.strings.append(text[:int(length, 16)] if all(
            c in "0123456789abcdef" for c in length) and length else text)
    elif tag == "i":
        parts = [int(p, 16) for p in rest.split()]
        # address, module, then (function, file, line) per frame; a bare function at the end
        functions = parts[2::3] if len(parts) > 2 else []
        rec.ips.append((parts[0], parts[1] if len(parts) > 1 else 0, functions))
    elif tag == "t":
        ip, parent = (int(p, 16) for p in rest.split()[:2])
        rec.traces.append((ip, parent))
    elif tag == "a":
        size, trace = (int(p, 16) for p in rest.split()[:2])
        rec.kinds.append((size, trace))
    elif tag == "X":
        rec.command = rest


@dataclass
class Site:
    function: str
    module: str
    callers: list[str]
    steady_count: int = 0
    steady_bytes: int = 0
    total_count: int = 0
    total_bytes: int = 0


class _Namer:
    """Backtrace nodes -> their frames' function names (cached), and the call site of each."""

    def __init__(self, rec: Record) -> None:
        self.rec = rec
        self._frames: dict[int, list[tuple[str, str]]] = {}

    def frames(self, trace: int) -> list[tuple[str, str]]:
        """(function, module) from the innermost frame out; unnamed frames as their address."""
        if trace in self._frames:
            return self._frames[trace]
        out: list[tuple[str, str]] = []
        node, seen = trace, 0
        while node != 0 and node < len(self.rec.traces) and seen < 256:
            ip_index, node = self.rec.traces[node]
            seen += 1
            if ip_index >= len(self.rec.ips):
                continue
            address, module, functions = self.rec.ips[ip_index]
            mod = self.rec.strings[module].rsplit("/", 1)[-1] if module < len(
                self.rec.strings) else ""
            names = [readable(self.rec.strings[f]) for f in functions
                     if 0 < f < len(self.rec.strings)]
            out += [(n, mod) for n in names] or [(f"0x{address:x}", mod)]
        self._frames[trace] = out
        return out

    def is_marker(self, kind: int) -> bool:
        size, trace = self.rec.kinds[kind]
        return size == MARKER_BYTES and any(f == MARKER_FUNCTION for f, _ in self.frames(trace))

    def site(self, trace: int) -> tuple[str, str, list[str]]:
        """The code that asked for the memory, its module and up to 3 callers: the first frame
        outside the allocator's machinery. Unnamed frames (a library's static functions,
        without symbols) there are counted into the name of the first named frame above them:
        ``dds_write (+2 unnamed in libddsc.so.0)``. Unnamed frames just below an allocator
        frame are the allocator's own (Rust's ``__rust_alloc``) and are skipped."""
        frames = self.frames(trace)
        candidate: int | None = None
        for index, (function, module) in enumerate(frames):
            if function.startswith("0x"):
                candidate = index if candidate is None else candidate
            elif ALLOCATOR.match(function):
                candidate = None
            else:
                callers = [f for f, _ in frames[index + 1:index + 4] if not f.startswith("0x")]
                if candidate is None:
                    return function, module, callers
                inner = frames[candidate][1]
                return (f"{function} (+{index - candidate} unnamed in {inner})", inner,
                        callers)
        if candidate is not None:
            return f"(unnamed in {frames[candidate][1]})", frames[candidate][1], []
        function, module = (frames or [("(no backtrace)", "")])[0]
        return function, module, []


class Analysis(TypedDict):
    """What :func:`analyse` finds (the result's ``alloc_sites.processes[]`` fields)."""

    steady_messages: int
    steady_allocs: int
    allocs_per_msg: float | None
    bytes_per_msg: float | None
    total_allocs: int
    total_bytes: int
    sites: list[RunResultAllocSitesProcessesItemSitesItem]


def analyse(rec: Record, top: int = TOP) -> Analysis:
    """Per call site: allocations (count, bytes) in the steady state and in the whole run; the
    top ``top`` by steady count (then by total), the steady state's messages and totals."""
    namer = _Namer(rec)
    markers = [n for n, kind in enumerate(rec.events)
               if kind < len(rec.kinds) and namer.is_marker(kind)]
    marker_kinds = {rec.events[n] for n in markers}
    first, last = (markers[0], markers[-1]) if markers else (len(rec.events), len(rec.events))
    sites: dict[tuple[str, str], Site] = {}
    by_kind: dict[int, Site] = {}
    steady_allocs = steady_bytes = total_allocs = total_bytes = 0
    for position, kind in enumerate(rec.events):
        if kind in marker_kinds or kind >= len(rec.kinds):
            continue
        site = by_kind.get(kind)
        if site is None:
            function, module, callers = namer.site(rec.kinds[kind][1])
            site = sites.setdefault((function, module), Site(function, module, callers))
            by_kind[kind] = site
        size = rec.kinds[kind][0]
        site.total_count += 1
        site.total_bytes += size
        total_allocs += 1
        total_bytes += size
        if first < position < last:
            site.steady_count += 1
            site.steady_bytes += size
            steady_allocs += 1
            steady_bytes += size
    messages = max(len(markers) - 1, 0)
    def per(count: int) -> float | None:
        return count / messages if messages else None

    ranked = sorted(sites.values(), key=lambda s: (-s.steady_count, -s.total_count, s.function))
    return {
        "steady_messages": messages,
        "steady_allocs": steady_allocs,
        "allocs_per_msg": per(steady_allocs),
        "bytes_per_msg": per(steady_bytes),
        "total_allocs": total_allocs,
        "total_bytes": total_bytes,
        "sites": [{"function": s.function, "module": s.module, "callers": s.callers,
                   "steady_count": s.steady_count, "per_msg": per(s.steady_count),
                   "steady_bytes": s.steady_bytes, "total_count": s.total_count,
                   "total_bytes": s.total_bytes} for s in ranked[:top]],
    }


def table(name: str, analysis: Analysis) -> str:
    """The sites as a text table (alloc-sites/<process>.txt), like seed 004's."""
    n = analysis["steady_messages"]
    lines = [f"{name}: heap allocations by call site (heaptrack; steady state = {n} messages, "
             f"{analysis['steady_allocs']} allocations; whole run {analysis['total_allocs']})",
             f"{'per msg':>9} {'steady':>8} {'total':>8} {'bytes':>10}  call site  <- callers"]
    for s in analysis["sites"]:
        per = f"{s['per_msg']:.2f}" if s["per_msg"] is not None else "-"
        via = (" <- " + " <- ".join(s["callers"])) if s["callers"] else ""
        lines.append(f"{per:>9} {s['steady_count']:>8} {s['total_count']:>8} "
                     f"{s['total_bytes']:>10}  {s['function']} [{s['module']}]{via}")
    return "\n".join(lines) + "\n"
