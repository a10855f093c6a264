"""Probe an MQTT broker's topics: Debian's ``mosquitto_sub`` subscribes (QoS 0, publishes
nothing) to the topic filters (default ``#``: every topic) and prints one line per message,
``<receive time with ns> <payload length> <topic>`` (``-F '%U %l %t'``); the payloads are not
printed. Topics are those that carried a message. MQTT has no header, so there is no age.
"""

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from ..daemons.mosquitto import connack
from ..errors import RunError, UsageError
from ..procs import interrupts_deferred
from .arrivals import summarise_log
from .listen import ProbeResult

PROGRAM = "mosquitto_sub"
DEFAULT_PORT = 1883


def parse_endpoint(text: str) -> tuple[str, int]:
    """'HOST' or 'HOST:PORT' (default port 1883); UsageError naming --mqtt otherwise."""
    host, _, port = text.rpartition(":") if ":" in text else (text, "", str(DEFAULT_PORT))
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise UsageError(f"--mqtt: expected HOST or HOST:PORT such as robot:1883, got {text!r}")
    return host, int(port)


def probe_mqtt(endpoint: str, filters: list[str], duration_s: float,
               gap_factor: float) -> ProbeResult:
    host, port = parse_endpoint(endpoint)
    if shutil.which(PROGRAM) is None:
        raise RunError(f"{PROGRAM}: not found; the MQTT probe subscribes with it "
                       f"(apt-get install mosquitto-clients)")
    if not connack(port, host):
        raise RunError(f"--mqtt {endpoint}: no MQTT broker answers at {host}:{port}")
    work = Path(tempfile.mkdtemp(prefix="mwperf-probe-"))
    try:
        log = work / "arrivals.txt"
        args = [PROGRAM, "-h", host, "-p", str(port), "-q", "0", "-F", "%U %l %t",
                "-i", f"mwperf-probe-{os.getpid()}"]
        for f in filters or ["#"]:
            args += ["-t", f]
        with log.open("w") as out:
            child = None
            try:
                with interrupts_deferred():
                    child = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                             stderr=subprocess.PIPE, text=True)
                start = time.time_ns()
                deadline = time.monotonic() + duration_s
                while child.poll() is None and time.monotonic() < deadline:
                    time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
                end = time.time_ns()
                if child.poll() is None:
                    child.send_signal(signal.SIGINT)
                _, status, usage = os.wait4(child.pid, 0)
            except BaseException:
                if child is not None:
                    child.kill()
                    child.wait()
                raise
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode not in (0, -signal.SIGINT, 130) and end - start < duration_s * 1e9:
            last = ((child.stderr.read() if child.stderr else "").strip().splitlines()
                    or ["no output"])[-1]
            raise RunError(f"--mqtt {endpoint}: {PROGRAM} stopped: {last}")
        return summarise_log(f"mqtt {endpoint}", "mqtt", log, start, end,
                             usage.ru_utime + usage.ru_stime, gap_factor)
    finally:
        shutil.rmtree(work, ignore_errors=True)
