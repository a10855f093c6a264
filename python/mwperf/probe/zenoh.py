"""Probe a zenoh system's keys: ``mwperf-agent probe --transport zenoh`` opens a peer session to
the endpoint (a router, or a peer that listens; multicast scouting off), subscribes to the key
expressions (default ``**``: every key), publishes nothing, and prints one line per sample
(arrival time taken in zenoh's callback, payload size, key; arrivals.py). zenoh samples carry no
std_msgs/Header, so there is no age."""

import tempfile
from pathlib import Path

from ..agent import find_agent
from ..errors import UsageError
from .agent_child import run_probe_agent
from .arrivals import summarise_log
from .listen import ProbeResult


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
        done = run_probe_agent(args, log, f"--zenoh {endpoint}")
        end = min(done.exit_ns, done.ready_ns + int(duration_s * 1e9))
        return summarise_log(f"zenoh {endpoint}", "zenoh", log, done.ready_ns, end,
                             done.cpu_s, gap_factor)
