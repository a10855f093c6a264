"""The userspace backend: mwperf-linkem, a forwarder between a TUN device in each host.

Used when the kernel has no netem (this project's machines) or on request
(``--link-backend userspace``). The binary is found like the agent (python/mwperf/agent.py):
``$MWPERF_LINKEM``, an installed wheel's ``mwperf/bin/``, ``release/mwperf-linkem`` in ``$CARGO_TARGET_DIR``, ``target/release`` in
this checkout, then PATH. It runs in its own process group, is killed by the kernel if mwperf
dies (PDEATHSIG), is recorded in the lease as soon as it exists, and its TUN devices vanish
with it. Its READY line carries its epoch (CLOCK_MONOTONIC at the link's time 0, where a
scheduled outage counts from), so the outage window is known before the agents start. Stopped with SIGINT, it writes a JSON report of what it did to each direction. Its
forwarding threads run SCHED_FIFO (REALTIME_PRIORITY) so that releases stay on time on a busy
machine.
"""

import json
import os
import secrets
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from .. import BUNDLED_BIN, REPO_ROOT
from ..errors import RunError
from ..leases import Lease, process_id, stop_leased
from ..procs import _die_with_parent, interrupts_deferred
from .hosts import Port
from .links import LinkSpec

NAME = "mwperf-linkem"
ENV_VAR = "MWPERF_LINKEM"
REALTIME_PRIORITY = 10
"""SCHED_FIFO priority of the forwarding threads: above every ordinary process (the agents
included, as the kernel's network path would be), far below the kernel's own RT threads"""
READY_TIMEOUT_S = 5.0
STOP_TIMEOUT_S = 3.0


def find_linkem() -> Path:
    """Locate mwperf-linkem or raise RunError saying how to build it."""
    configured = os.environ.get(ENV_VAR)
    if configured:
        if not os.access(configured, os.X_OK):
            raise RunError(f"{ENV_VAR}={configured}: no executable file there")
        return Path(configured)
    if os.access(BUNDLED_BIN / NAME, os.X_OK):  # an installed wheel's
        return BUNDLED_BIN / NAME
    target = os.environ.get("CARGO_TARGET_DIR")
    root = Path(target) if target else REPO_ROOT / "target"
    built = (root if root.is_absolute() else REPO_ROOT / root) / "release" / NAME
    if os.access(built, os.X_OK):
        return built
    on_path = shutil.which(NAME)
    if on_path:
        return Path(on_path)
    raise RunError(f"--link: {NAME} not found (looked at ${ENV_VAR}, {built} and PATH); run "
                   f"'make build' or 'cargo build --release -p {NAME}'")


class Forwarder:
    """A running mwperf-linkem between two ports (one per host)."""

    def __init__(self, popen: subprocess.Popen, report: Path, lease: Lease, lease_id: str):
        self.popen = popen
        self.epoch_ns: int | None = None
        """CLOCK_MONOTONIC at the link's time 0 (from READY)"""
        self.report = report
        self._lease = lease
        self._lease_id = lease_id

    @classmethod
    def start(cls, spec: LinkSpec, a: Port, b: Port, workdir: Path, lease: Lease,
              label: str = "linkem", medium: Path | None = None,
              packet_log: bool = False, layer_log: bool = False) -> "Forwarder":
        """Start forwarding (returns once its devices exist and it forwards); its files in
        ``workdir`` are ``<label>.json``, ``.stdout`` and ``.stderr``. ``medium``: the file of a
        medium shared with the other forwarders given it (a shared segment). ``layer_log``:
        each forwarded mwperf message's read and release times go to
        ``<label>-up.layers.csv`` / ``-down.layers.csv`` when it stops (layers_link.py reads
        them; the report's ``layer_log`` names them)."""
        argv = [str(find_linkem()), "--netns-a", str(a.netns_path), "--dev-a", a.device,
                "--netns-b", str(b.netns_path), "--dev-b", b.device,
                "--up", spec.up.canonical(), "--down", spec.down.canonical(),
                "--seed", str(secrets.randbits(63)), "--report", str(workdir / f"{label}.json"),
                "--realtime", str(REALTIME_PRIORITY)]
        if medium is not None:
            argv += ["--medium", str(medium)]
        if packet_log:  # --wire-bytes: <label>-up.bin / -down.bin (wire.py reads them)
            argv += ["--packet-log", str(workdir / label)]
        if layer_log:  # --layers: <label>-up.layers.csv / -down.layers.csv (layers_link.py)
            argv += ["--layer-log", str(workdir / label)]
        out_path, err_path = workdir / f"{label}.stdout", workdir / f"{label}.stderr"
        forwarder = None
        try:
            with open(out_path, "wb") as out, open(err_path, "wb") as err, interrupts_deferred():
                popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                         process_group=0, preexec_fn=_die_with_parent(os.getpid()))
                lease_id = process_id(popen.pid)
                lease.add("process", lease_id)
                forwarder = cls(popen, workdir / f"{label}.json", lease, lease_id)
            deadline = time.monotonic() + READY_TIMEOUT_S
            while not out_path.read_text().startswith("READY"):
                if popen.poll() is not None or time.monotonic() > deadline:
                    why = err_path.read_text().strip() or f"no READY within {READY_TIMEOUT_S:g} s"
                    raise RunError(f"--link: {NAME} did not start: {why}")
                time.sleep(0.005)
            forwarder.epoch_ns = _epoch(out_path.read_text())
        except BaseException:
            if forwarder is not None:
                forwarder.stop()
            raise
        return forwarder

    def stop(self) -> dict[str, Any] | None:
        """Stop it (SIGINT, then SIGKILL) and return its report, None when it wrote none."""
        stop_leased(self.popen, self._lease, self._lease_id, STOP_TIMEOUT_S)
        try:
            return json.loads(self.report.read_text())
        except (OSError, ValueError):
            return None


def _epoch(ready: str) -> int | None:
    """``epoch_ns=N`` from the READY line (None from an emulator that does not print it)."""
    for word in ready.split("\n", 1)[0].split():
        if word.startswith("epoch_ns="):
            return int(word.removeprefix("epoch_ns="))
    return None
