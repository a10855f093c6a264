"""Probe a zenoh system's keys: ``mwperf-agent probe --transport zenoh`` opens a peer session to
the endpoint (a router, or a peer that listens; multicast scouting off), subscribes to the key
expressions (default ``**``: every key), publishes nothing, and prints one line per sample
(arrival time taken in zenoh's callback, payload size, key; arrivals.py). zenoh samples carry no
std_msgs/Header, so there is no age."""

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ..agent import find_agent
from ..errors import RunError, UsageError
from .arrivals import summarise_log
from .listen import ProbeResult

READY_TIMEOUT_S = 15.0


def check_endpoint(text: str) -> str:
    """A zenoh endpoint: ``tcp/HOST:PORT`` (or udp/...); UsageError naming --zenoh otherwise."""
    proto, _, rest = text.partition("/")
    host, _, port = rest.rpartition(":")
    if proto not in ("tcp", "udp") or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--zenoh: expected an endpoint such as tcp/robot:7447, got {text!r}")
    return text


def probe_zenoh(endpoint: str, keys: list[str], duration_s: float,
                gap_factor: float) -> ProbeResult:
    check_endpoint(endpoint)
    agent = find_agent()
    args = [str(agent.path), "probe", "--transport", "zenoh", "--connect", endpoint,
            "--duration", f"{int(duration_s * 1e9)}ns"]
    for key in keys:
        args += ["--key", key]
    with tempfile.TemporaryDirectory(prefix="mwperf-probe-") as work:
        log = Path(work) / "arrivals.txt"
        with log.open("w") as out:
            child = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.PIPE, text=True)
            try:
                start = _wait_ready(child, log)
                _, status, usage = os.wait4(child.pid, 0)
                end = time.time_ns()
            except BaseException:
                child.send_signal(signal.SIGTERM)
                try:
                    child.wait(5)
                except subprocess.TimeoutExpired:
                    child.kill()
                    child.wait()
                raise
        code = os.waitstatus_to_exitcode(status)
        child.returncode = code
        if code != 0:
            last = ((child.stderr.read() if child.stderr else "").strip().splitlines()
                    or ["no output"])[-1]
            error = UsageError if code == 2 else RunError
            raise error(f"--zenoh {endpoint}: {last.removeprefix('mwperf-agent: error: ')}")
        end = min(end, start + int(duration_s * 1e9))
        return summarise_log(f"zenoh {endpoint}", "zenoh", log, start, end,
                             usage.ru_utime + usage.ru_stime, gap_factor)


def _wait_ready(child: subprocess.Popen[str], log: Path) -> int:
    """The unix time (ns) the agent's subscribers were up: its READY line."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if log.read_text(errors="replace").startswith("READY"):
            return time.time_ns()
        if child.poll() is not None:
            return time.time_ns()  # it failed: the caller reads why from its exit
        time.sleep(0.01)
    raise RunError(f"mwperf-agent probe did not start within {READY_TIMEOUT_S:g} s")
