"""What the kernel says about one process, read from /proc: resident set (statm), open file
descriptors (the entries of fd/), threads (status) and, for a process with libmwperf_alloc.so
preloaded (``--count-allocs``), the allocation counter's live heap bytes, read straight from
the process's memory (/proc/PID/mem at the counter's address), so the agent does nothing extra.

Every reader returns None when the process is gone or the file cannot be read: a sample is
never invented.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

PAGE = os.sysconf("SC_PAGE_SIZE")
COUNTER_SYMBOL = b"mwperf_alloc_counters"
COUNTER_MAGIC = int.from_bytes(b"MWALLOC1", "little")
LIVE_OFFSET = 32
"""crates/mwperf-alloc: magic, allocs, bytes, frees, live, peak (u64 each): live at byte 32"""
AGENT_NAME = "mwperf-agent"


def start_time(pid: int) -> int | None:
    """Field 22 of /proc/PID/stat (clock ticks since boot): with the pid it names one process,
    whatever pid reuse happens later."""
    stat = _read(f"/proc/{pid}/stat")
    if stat is None:
        return None
    fields = stat.rsplit(")", 1)[-1].split()
    try:
        return int(fields[19]) if fields[0] not in ("Z", "X") else None
    except (IndexError, ValueError):
        return None


def rss_bytes(pid: int) -> int | None:
    """The resident set now: the second field of /proc/PID/statm (pages) x the page size; None
    when the process has no address space (a kernel thread, or a process already exiting: the
    kernel releases its memory before it becomes a zombie, and statm then reads all zeros)."""
    statm = _read(f"/proc/{pid}/statm")
    try:
        fields = statm.split() if statm else []
        return int(fields[1]) * PAGE if int(fields[0]) > 0 else None
    except (IndexError, ValueError):
        return None


def open_fds(pid: int) -> int | None:
    """How many file descriptors the process has open (the entries of /proc/PID/fd)."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def threads(pid: int) -> int | None:
    """The ``Threads:`` line of /proc/PID/status."""
    status = _read(f"/proc/{pid}/status")
    for line in (status or "").splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return None


def comm_path(pid: int) -> str | None:
    """The executable the process runs (/proc/PID/exe), None when unreadable."""
    try:
        return os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None


def children(pid: int) -> list[int]:
    """The process's children (every thread's ``children`` list)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        text = _read(f"/proc/{pid}/task/{task}/children") or ""
        found += [int(x) for x in text.split()]
    return found


def agent_pid(pid: int, depth: int = 3) -> int | None:
    """The mwperf-agent process at ``pid`` or below it (an agent started through perf or
    heaptrack is that program's child); None while there is none yet."""
    exe = comm_path(pid)
    if exe is not None and Path(exe.removesuffix(" (deleted)")).name == AGENT_NAME:
        return pid
    if depth == 0:
        return None
    for child in children(pid):
        found = agent_pid(child, depth - 1)
        if found is not None:
            return found
    return None


@dataclass(frozen=True)
class Counter:
    """Where the allocation counter's live bytes are in one process."""

    pid: int
    address: int

    def live_bytes(self) -> int | None:
        """The live heap bytes now (a relaxed read of an aligned u64, as the agent does)."""
        try:
            fd = os.open(f"/proc/{self.pid}/mem", os.O_RDONLY)
        except OSError:
            return None
        try:
            data = os.pread(fd, 8, self.address + LIVE_OFFSET)
        except OSError:
            return None
        finally:
            os.close(fd)
        return int.from_bytes(data, "little") if len(data) == 8 else None


def alloc_counter(pid: int) -> Counter | None:
    """The allocation counter of process ``pid``: the library's load address (/proc/PID/maps)
    plus the symbol's value (its ELF dynamic symbol table), checked by the counter's magic
    word; None when the library is not loaded there or the check fails."""
    maps = _read(f"/proc/{pid}/maps")
    library, base = None, None
    for line in (maps or "").splitlines():
        parts = line.split(maxsplit=5)
        if len(parts) == 6 and parts[5].endswith("/libmwperf_alloc.so") and int(parts[2], 16) == 0:
            start = int(parts[0].split("-")[0], 16)
            if base is None or start < base:
                library, base = parts[5], start
    if library is None or base is None:
        return None
    value = symbol_value(Path(library), COUNTER_SYMBOL)
    if value is None:
        return None
    counter = Counter(pid, base - first_load_vaddr(Path(library)) + value)
    try:
        fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)
        try:
            magic = int.from_bytes(os.pread(fd, 8, counter.address), "little")
        finally:
            os.close(fd)
    except OSError:
        return None
    return counter if magic == COUNTER_MAGIC else None


def _elf(path: Path) -> bytes | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    return data if data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1 else None  # 64-bit LE


def first_load_vaddr(path: Path) -> int:
    """The virtual address of the first PT_LOAD segment with file offset 0 (0 for a usual
    shared library): the load bias is the mapping's start minus it."""
    data = _elf(path)
    if data is None:
        return 0
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr = struct.unpack_from("<IIQQ", data, phoff + i * phentsize)
        if p_type == 1 and p_offset == 0:
            return int(p_vaddr)
    return 0


def symbol_value(path: Path, name: bytes) -> int | None:
    """The value of dynamic symbol ``name`` in ELF file ``path`` (SHT_DYNSYM and its string
    table), None when absent."""
    data = _elf(path)
    if data is None:
        return None
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    for _, sh_type, _, _, offset, size, link, _, _, entsize in sections:
        if sh_type != 11 or not entsize:  # SHT_DYNSYM
            continue
        strings = sections[link][4]
        for k in range(size // entsize):
            st_name, _, _, _, st_value, _ = struct.unpack_from("<IBBHQQ", data,
                                                                offset + k * entsize)
            end = data.find(b"\0", strings + st_name)
            if data[strings + st_name:end] == name and st_value:
                return int(st_value)
    return None


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="ascii", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None
