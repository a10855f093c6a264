"""Sweeping Fast DDS's /dev/shm files (python/mwperf/fastdds_shm.py): what appeared during a run
goes only when no live process maps it or has it open, so runs beside each other never remove
one another's segments between their creation and their mapping (a stress run's ros2 --layers
point once went over UDP for every message: its shared memory gone)."""

import mmap
import os
import secrets
from pathlib import Path

from mwperf import fastdds_shm


def test_only_files_nobody_maps_or_holds_open_are_swept() -> None:
    before = fastdds_shm.entries()
    tag = secrets.token_hex(4)
    names = {kind: f"fastdds_mwperf_test_{tag}_{kind}" for kind in ("open", "mapped", "gone")}
    paths = {kind: fastdds_shm.SHM / name for kind, name in names.items()}
    held = os.open(paths["open"], os.O_CREAT | os.O_RDWR, 0o600)  # created, not mapped yet
    mapped_fd = os.open(paths["mapped"], os.O_CREAT | os.O_RDWR, 0o600)
    os.ftruncate(mapped_fd, 4096)
    mapping = mmap.mmap(mapped_fd, 4096)
    os.close(mapped_fd)
    Path(paths["gone"]).write_bytes(b"")  # closed and unmapped: a crashed run's
    try:
        fastdds_shm.remove_orphaned(before)
        assert paths["open"].exists() and paths["mapped"].exists()
        assert not paths["gone"].exists()
    finally:
        os.close(held)
        mapping.close()
        for path in paths.values():
            path.unlink(missing_ok=True)


def test_a_ports_semaphore_stays_while_its_port_exists_and_a_lock_file_with_its_segment() -> None:
    # Fast DDS closes sem.<port>_mutex after every open of the port: neither mapped nor open
    # between two uses, and removing it while a process holds it lets two open the port at once
    before = fastdds_shm.entries()
    port = f"fastdds_mwperf_test_{secrets.token_hex(4)}_port"
    sem, lock = f"sem.{port}_mutex", f"{port}_sl"
    paths = [fastdds_shm.SHM / name for name in (port, sem, lock)]
    held = os.open(paths[0], os.O_CREAT | os.O_RDWR, 0o600)  # the port in use
    for path in paths[1:]:
        path.write_bytes(b"")
    try:
        fastdds_shm.remove_orphaned(before)
        assert all(path.exists() for path in paths)
        os.close(held)
        held = -1
        fastdds_shm.remove_orphaned(before)  # the port unused: all three go in one sweep
        assert not any(path.exists() for path in paths)
    finally:
        if held >= 0:
            os.close(held)
        for path in paths:
            path.unlink(missing_ok=True)
