"""Run the ROS 1 subscriber (``ros1_listener.py`` under /usr/bin/python3, rospy) for a duration,
read its arrival log and summarise each topic, with its publishing and subscribing nodes from the
master (ros1_nodes.py, asked before and after the window); the subscriber's own CPU time is measured
(os.wait4) and reported, so the probe's cost on the machine it runs on is part of its output.
The log lives in a temporary folder that is removed whatever happens.
"""

import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import RunError, UsageError
from ..procs import interrupts_deferred
from .ros1_nodes import endpoints, merged, system_state
from .stats import CLOCK_CAVEAT, ProbeTopic, summarise_topic

SYSTEM_PYTHON = "/usr/bin/python3"
LISTENER = Path(__file__).with_name("ros1_listener.py")
DEBIAN_PACKAGES = "python3-rospy"


@dataclass
class ProbeResult:
    """A probe of one system: where, how long, the probe's own CPU, and each topic."""

    system: str
    start_ns: int
    duration_ns: int
    cpu_s: float
    gap_factor: float
    topics: list[ProbeTopic]
    max_rss_bytes: int | None = None
    """the probe process's peak resident memory (wait4's ru_maxrss), where measured"""

    def to_dict(self) -> dict[str, Any]:
        return {"system": self.system, "start_ns": self.start_ns, "duration_ns": self.duration_ns,
                "probe_cpu_s": self.cpu_s,
                "probe_cpu_percent": 100 * self.cpu_s / (self.duration_ns / 1e9)
                if self.duration_ns else None,
                "probe_max_rss_bytes": self.max_rss_bytes,
                "gap_factor": self.gap_factor, "clock_caveat": CLOCK_CAVEAT,
                "topics": [t.to_dict() for t in self.topics]}


def probe_ros1(master: str, topics: list[str], duration_s: float,
               gap_factor: float) -> ProbeResult:
    """Subscribe to ``topics`` (all published ones when empty) at ``master`` for ``duration_s``."""
    if not master.startswith("http://") or len(master) <= len("http://"):
        raise UsageError(f"--ros1: expected the master's URI such as http://robot:11311, "
                         f"got {master!r}")
    if not Path(SYSTEM_PYTHON).exists():
        raise RunError(f"{SYSTEM_PYTHON}: not found; the ROS 1 probe subscribes with Debian's "
                       f"rospy (apt-get install {DEBIAN_PACKAGES})")
    before = system_state(master)
    work = Path(tempfile.mkdtemp(prefix="mwperf-probe-"))
    try:
        log = work / "arrivals.txt"
        args = [SYSTEM_PYTHON, str(LISTENER), master, repr(duration_s), str(log), *topics]
        child = None
        try:
            with interrupts_deferred():
                child = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                         text=True)
            _, status, usage = os.wait4(child.pid, 0)
        except BaseException:
            if child is not None:
                child.kill()
                child.wait()
            raise
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr = child.stderr.read() if child.stderr else ""
        last = (stderr.strip().splitlines() or ["no output"])[-1]
        if child.returncode == 3:
            raise RunError(f"--ros1 {master}: {last}")
        if child.returncode == 4:
            raise UsageError(f"{last} (see 'mwperf probe --ros1 {master}' without topics "
                             f"to probe every published topic)")
        if child.returncode != 0:
            if "No module named" in last:
                raise RunError(f"{SYSTEM_PYTHON} lacks rospy ({last}); install it with "
                               f"scripts/system-deps.sh or apt-get install {DEBIAN_PACKAGES}")
            raise RunError(f"the ROS 1 probe failed: {last}")
        return _summarise(master, log, usage.ru_utime + usage.ru_stime, gap_factor,
                          [before, system_state(master)])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _summarise(master: str, log: Path, cpu_s: float, gap_factor: float,
               states: list[Any]) -> ProbeResult:
    lines = log.read_text().splitlines()
    head, tail = json.loads(lines[0]), json.loads(lines[-1])
    names = head["topics"]
    arrivals: list[list[int]] = [[] for _ in names]
    sizes: list[list[int]] = [[] for _ in names]
    stamps: list[list[int]] = [[] for _ in names]
    for line in lines[1:-1]:
        index, arrival, size, stamp = (int(x) for x in line.split())
        arrivals[index].append(arrival)
        sizes[index].append(size)
        stamps[index].append(stamp)
    start, end = head["start_ns"], tail["end_ns"]
    topics = [summarise_topic(name, msgtype, arrivals[i], sizes[i], stamps[i], start, end,
                              gap_factor) for i, (name, msgtype) in enumerate(names)]
    state = merged(states, head.get("node"))
    for topic in topics:
        topic.publishers = endpoints(state, topic.basic.topic, 0)
        topic.subscribers = endpoints(state, topic.basic.topic, 1)
    return ProbeResult(f"ros1 {master}", start, end - start, cpu_s, gap_factor, topics)
