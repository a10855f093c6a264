"""Probe a live ROS 2 system over DDS: ``mwperf-agent probe-ros2`` joins the DDS domain (Cyclone
DDS), lists every participant, writer and reader from discovery and the nodes from
``ros_discovery_info``, subscribes to the topics as serialized CDR (best-effort, volatile
readers unless ``--reliable``; it creates no writer), and prints one line per event and per
sample (ros2_log.py). Its log goes to a temporary file; its CPU and peak memory come from
os.wait4. The document is built by ros2_document.py."""

import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ..agent import find_agent
from ..errors import RunError, UsageError
from .ros2_document import Ros2ProbeResult, Ros2Request, build
from .ros2_log import read_log

READY_TIMEOUT_S = 15.0
DOMAIN_MAX = 232
"""the largest DDS domain id ROS 2 allows (the RTPS port formula's limit with default ports)"""


def probe_ros2(request: Ros2Request, duration_s: float) -> Ros2ProbeResult:
    """Run the agent on ``request`` for the discovery time and ``duration_s``."""
    agent = find_agent()
    args = [str(agent.path), "probe-ros2", "--domain", str(request.domain),
            "--discovery-time", f"{request.discovery_ns}ns",
            "--duration", f"{int(duration_s * 1e9)}ns"]
    if request.interface:
        args += ["--interface", request.interface]
    if request.reliable:
        args.append("--reliable")
    for topic in request.topics:
        args += ["--topic", topic]
    with tempfile.TemporaryDirectory(prefix="mwperf-probe-") as work:
        log = Path(work) / "probe-ros2.txt"
        with log.open("w") as out:
            child = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.PIPE, text=True)
            try:
                _wait_ready(child, log)
                _, status, usage = os.wait4(child.pid, 0)
                exit_ns = time.time_ns()
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
            why = last.removeprefix("mwperf-agent: error: ").removeprefix("probe-ros2: ")
            raise error(f"--ros2: {why}")
        return build(read_log(log), request, usage.ru_utime + usage.ru_stime,
                     usage.ru_maxrss * 1024, exit_ns)


def _wait_ready(child: subprocess.Popen[str], log: Path) -> None:
    """Until the agent's READY line (or its exit: the caller reads why from its exit code)."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        with log.open(errors="replace") as text:
            if text.read(5) == "READY":
                return
        # exited? (WNOWAIT: left for wait4 to reap, with its CPU time; Popen.poll would reap it)
        if os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return
        time.sleep(0.01)
    raise RunError(f"mwperf-agent probe-ros2 did not start within {READY_TIMEOUT_S:g} s")
